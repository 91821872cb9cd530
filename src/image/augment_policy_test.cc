#include "image/augment_policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "image/image_test_util.h"
#include "util/error.h"

namespace imgpipe {
namespace {

AugmentPolicyOptions Policy(AugmentPolicyKind kind) {
  AugmentPolicyOptions options;
  options.kind = kind;
  return options;
}

constexpr AugmentPolicyKind kKinds[] = {AugmentPolicyKind::kTrivialAugmentWide,
                                        AugmentPolicyKind::kRandAugment,
                                        AugmentPolicyKind::kAutoAugmentImageNet};

// The op's entry in a space.
const AugmentSpaceOp& Entry(const std::vector<AugmentSpaceOp>& space, AugmentOp op) {
  auto it = std::find_if(space.begin(), space.end(), [&](const auto& e) { return e.op == op; });
  EXPECT_NE(it, space.end()) << AugmentOpName(op);
  return *it;
}

// The same seed gives the same draws and the same image; another seed other draws.
TEST(AugmentPolicyTest, DrawsAreDeterministicForASeed) {
  const Image photo = GradientImage(97, 61, 3);
  for (AugmentPolicyKind kind : kKinds) {
    SCOPED_TRACE(AugmentPolicyName(kind));
    std::vector<std::vector<AugmentDraw>> first;
    for (int run = 0; run < 2; ++run) {
      SplitMix64 random(DeriveSeed(42, 7));
      std::vector<std::vector<AugmentDraw>> draws;
      for (int i = 0; i < 50; ++i) draws.push_back(DrawAugmentPolicy(Policy(kind), 61, 97, random));
      if (run == 0) {
        first = draws;
        continue;
      }
      for (size_t i = 0; i < draws.size(); ++i) {
        ASSERT_EQ(draws[i].size(), first[i].size());
        for (size_t k = 0; k < draws[i].size(); ++k) {
          EXPECT_EQ(draws[i][k].op, first[i][k].op);
          EXPECT_EQ(draws[i][k].magnitude, first[i][k].magnitude);
        }
      }
    }
    // ApplyAugmentPolicy applies exactly the ops DrawAugmentPolicy draws from that seed.
    for (uint64_t seed = 0; seed < 20; ++seed) {
      Image applied = photo, replayed = photo;
      SplitMix64 a(seed), b(seed);
      ApplyAugmentPolicy(&applied, Policy(kind), a);
      for (const AugmentDraw& d : DrawAugmentPolicy(Policy(kind), 61, 97, b)) {
        ApplyAugmentOp(&replayed, d.op, d.magnitude);
      }
      EXPECT_EQ(applied.pixels, replayed.pixels) << "seed " << seed;
      EXPECT_EQ(a.state(), b.state());
    }
  }
}

// TrivialAugmentWide: one op, uniform over its 14; a bin uniform over 31; signed ops
// negative half the time; every |magnitude| one of the op's grid values.
TEST(AugmentPolicyTest, TrivialAugmentWideCoversItsSpace) {
  const auto space = AugmentationSpace(AugmentPolicyKind::kTrivialAugmentWide, 31, 224, 224);
  ASSERT_EQ(space.size(), 14u);
  SplitMix64 random(1);
  std::map<AugmentOp, int> ops;
  std::set<std::pair<AugmentOp, double>> values;
  int signed_draws = 0, negative = 0;
  constexpr int kDraws = 28000;
  for (int i = 0; i < kDraws; ++i) {
    const auto draws =
        DrawAugmentPolicy(Policy(AugmentPolicyKind::kTrivialAugmentWide), 224, 224, random);
    ASSERT_EQ(draws.size(), 1u);
    const AugmentDraw& d = draws[0];
    const AugmentSpaceOp& entry = Entry(space, d.op);
    ++ops[d.op];
    values.insert({d.op, std::fabs(d.magnitude)});
    if (entry.magnitudes.empty()) {
      EXPECT_EQ(d.magnitude, 0);
      continue;
    }
    EXPECT_NE(std::find(entry.magnitudes.begin(), entry.magnitudes.end(),
                        static_cast<float>(std::fabs(d.magnitude))),
              entry.magnitudes.end());
    if (entry.is_signed) {
      ++signed_draws;
      negative += std::signbit(d.magnitude);
    }
  }
  for (const AugmentSpaceOp& e : space) {
    EXPECT_NEAR(ops[e.op], kDraws / 14, 300) << AugmentOpName(e.op);
  }
  // Every bin of every op (Posterize's 31 bins hold 7 values; bin 0 of a signed op is
  // +-0), and the three ops without a magnitude.
  EXPECT_EQ(values.count({AugmentOp::kRotate, 135.0}), 1u);
  EXPECT_EQ(values.count({AugmentOp::kPosterize, 2.0}), 1u);
  EXPECT_EQ(values.count({AugmentOp::kSolarize, 0.0}), 1u);
  EXPECT_EQ(values.size(), 3u + 9 * 31 + 7 + 31);
  EXPECT_NEAR(negative, signed_draws / 2, signed_draws / 50);
}

// RandAugment: ra_num_ops ops, each at bin ra_magnitude of its grid.
TEST(AugmentPolicyTest, RandAugmentUsesItsMagnitudeBin) {
  AugmentPolicyOptions options = Policy(AugmentPolicyKind::kRandAugment);
  options.ra_num_ops = 3;
  options.ra_magnitude = 12;
  const auto space = AugmentationSpace(AugmentPolicyKind::kRandAugment, 31, 151, 223);
  SplitMix64 random(2);
  std::map<AugmentOp, int> ops;
  for (int i = 0; i < 3000; ++i) {
    const auto draws = DrawAugmentPolicy(options, 151, 223, random);
    ASSERT_EQ(draws.size(), 3u);
    for (const AugmentDraw& d : draws) {
      ++ops[d.op];
      const AugmentSpaceOp& entry = Entry(space, d.op);
      const double expected = entry.magnitudes.empty() ? 0.0 : entry.magnitudes[12];
      EXPECT_EQ(std::fabs(d.magnitude), expected) << AugmentOpName(d.op);
    }
  }
  EXPECT_EQ(ops.size(), space.size());
  EXPECT_EQ(ops.count(AugmentOp::kInvert), 0u);
  // TranslateX's range follows the width: 150 / 331 * 223 at bin 30.
  EXPECT_FLOAT_EQ(Entry(space, AugmentOp::kTranslateX).magnitudes[30], 150.0 / 331.0 * 223);
  EXPECT_FLOAT_EQ(Entry(space, AugmentOp::kTranslateY).magnitudes[30], 150.0 / 331.0 * 151);
}

// AutoAugment's ImageNet policy: 25 sub-policies, each op with its probability, at its
// bin of a 10-bin space.
TEST(AugmentPolicyTest, AutoAugmentFollowsTheImageNetPolicy) {
  const auto space = AugmentationSpace(AugmentPolicyKind::kAutoAugmentImageNet, 31, 224, 224);
  ASSERT_EQ(space.size(), 14u);
  EXPECT_EQ(space.back().op, AugmentOp::kInvert);
  EXPECT_EQ(Entry(space, AugmentOp::kRotate).magnitudes.size(), 10u);
  SplitMix64 random(3);
  std::map<AugmentOp, int> ops;
  std::map<double, int> rotations;
  constexpr int kDraws = 20000;
  int none = 0;
  for (int i = 0; i < kDraws; ++i) {
    const auto draws =
        DrawAugmentPolicy(Policy(AugmentPolicyKind::kAutoAugmentImageNet), 224, 224, random);
    ASSERT_LE(draws.size(), 2u);
    none += draws.empty();
    for (const AugmentDraw& d : draws) {
      ++ops[d.op];
      if (d.op == AugmentOp::kRotate) ++rotations[d.magnitude];
    }
  }
  // The ops the policy names, and no others.
  for (AugmentOp op : {AugmentOp::kPosterize, AugmentOp::kRotate, AugmentOp::kSolarize,
                       AugmentOp::kAutoContrast, AugmentOp::kEqualize, AugmentOp::kColor,
                       AugmentOp::kContrast, AugmentOp::kSharpness, AugmentOp::kInvert,
                       AugmentOp::kShearX}) {
    EXPECT_GT(ops[op], 0) << AugmentOpName(op);
  }
  EXPECT_EQ(ops.size(), 10u);
  // Rotate appears at bins 9, 8 and 3 (30, 26.67 and 10 degrees), either sign.
  std::set<double> angles;
  for (const auto& [angle, count] : rotations) angles.insert(std::fabs(angle));
  EXPECT_EQ(angles, (std::set<double>{10.0, 26.666666030883789, 30.0}));
  // P(neither op): the mean over sub-policies of (1 - p1)(1 - p2), 0.1504.
  EXPECT_NEAR(static_cast<double>(none) / kDraws, 0.1504, 0.01);
}

// Names: the --auto-augment vocabulary; others throw, naming the value and the choices.
TEST(AugmentPolicyTest, NamesParseAndBadOnesThrow) {
  for (const std::string& name : AugmentPolicyNames()) {
    EXPECT_EQ(AugmentPolicyName(ParseAugmentPolicy(name)), name);
  }
  EXPECT_EQ(ParseAugmentPolicy("ta_wide"), AugmentPolicyKind::kTrivialAugmentWide);
  EXPECT_EQ(ParseAugmentPolicy("imagenet"), AugmentPolicyKind::kAutoAugmentImageNet);
  for (const std::string bad : {"TA_WIDE", "augmix", "", "cifar10"}) {
    try {
      ParseAugmentPolicy(bad);
      ADD_FAILURE() << bad;
    } catch (const InvalidArgument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("'" + bad + "'"), std::string::npos) << what;
      EXPECT_NE(what.find("auto_augment must be one of 'none', 'ta_wide', 'ra', 'imagenet'"), std::string::npos)
          << what;
    }
  }
  SplitMix64 random(0);
  for (auto change : {+[](AugmentPolicyOptions& o) { o.ra_magnitude = 31; },
                      +[](AugmentPolicyOptions& o) { o.ra_magnitude = -1; },
                      +[](AugmentPolicyOptions& o) { o.ra_num_ops = -1; },
                      +[](AugmentPolicyOptions& o) { o.num_magnitude_bins = 1; }}) {
    AugmentPolicyOptions options = Policy(AugmentPolicyKind::kRandAugment);
    change(options);
    EXPECT_THROW(DrawAugmentPolicy(options, 10, 10, random), InvalidArgument);
  }
  EXPECT_THROW(AugmentationSpace(AugmentPolicyKind::kNone, 31, 10, 10), InvalidArgument);
  EXPECT_TRUE(DrawAugmentPolicy(AugmentPolicyOptions{}, 10, 10, random).empty());
}

// SampleErasing: inside the image, within the scale and ratio bounds (up to the rounding
// of each side), with probability p; never when nothing fits.
TEST(AugmentPolicyTest, SampleErasingRespectsItsBounds) {
  SplitMix64 random(4);
  for (auto [h, w] : {std::pair{224, 224}, {151, 223}, {13, 300}, {2, 2}}) {
    int hits = 0;
    for (int i = 0; i < 4000; ++i) {
      const std::optional<EraseRect> r = SampleErasing(h, w, 0.5, random);
      if (!r) continue;
      ++hits;
      ASSERT_GE(r->top, 0);
      ASSERT_GE(r->left, 0);
      ASSERT_LT(r->height, h);
      ASSERT_LT(r->width, w);
      ASSERT_LE(r->top + r->height, h);
      ASSERT_LE(r->left + r->width, w);
      const double area = static_cast<double>(h) * w;
      EXPECT_GE((r->height + 0.5) * (r->width + 0.5), 0.02 * area);
      EXPECT_LE((r->height - 0.5) * (r->width - 0.5), 0.33 * area);
      EXPECT_GE((r->height + 0.5) / std::max(r->width - 0.5, 0.5), 0.3);
      EXPECT_LE((r->height - 0.5) / (r->width + 0.5), 3.3);
    }
    // p = 0.5; on a thin image many tries do not fit, and some draws none.
    if (h == w) {
      EXPECT_NEAR(hits, 2000, 150) << h << "x" << w;
    } else {
      EXPECT_GT(hits, 1000) << h << "x" << w;
      EXPECT_LT(hits, 2150) << h << "x" << w;
    }
  }
  // On one pixel only an empty rectangle fits strictly inside (as in torchvision).
  for (int i = 0; i < 100; ++i) {
    const std::optional<EraseRect> r = SampleErasing(1, 1, 1.0, random);
    if (r) {
      EXPECT_EQ(r->height * r->width, 0);
    }
  }
  EXPECT_FALSE(SampleErasing(100, 100, 0.0, random));
  EXPECT_THROW(SampleErasing(100, 100, 1.5, random), InvalidArgument);
  EXPECT_THROW(SampleErasing(100, 100, 0.5, random, 0.5, 0.2), InvalidArgument);
  EXPECT_THROW(SampleErasing(100, 100, 0.5, random, 0.02, 0.33, 0.0, 1.0), InvalidArgument);
  EXPECT_THROW(SampleErasing(0, 100, 0.5, random), InvalidArgument);
}

// Erasing writes exactly the rectangle: the constant, or normal(0, 1) values from the
// seed; HWC bytes the rounded mean.
TEST(AugmentPolicyTest, ErasingWritesExactlyTheRectangle) {
  constexpr int kC = 3, kH = 40, kW = 50;
  const EraseRect rect{5, 7, 20, 30};
  auto inside = [&](int y, int x) {
    return y >= rect.top && y < rect.top + rect.height && x >= rect.left &&
           x < rect.left + rect.width;
  };
  std::vector<float> original(kC * kH * kW);
  for (size_t i = 0; i < original.size(); ++i) original[i] = 10.0f + i;
  for (bool random_value : {false, true}) {
    std::vector<float> chw = original, again = original;
    SplitMix64 random(5), same(5);
    EraseChw(chw.data(), kC, kH, kW, rect, {random_value, 0.0f}, random);
    EraseChw(again.data(), kC, kH, kW, rect, {random_value, 0.0f}, same);
    EXPECT_EQ(chw, again);
    double sum = 0, squares = 0;
    for (int c = 0; c < kC; ++c) {
      for (int y = 0; y < kH; ++y) {
        for (int x = 0; x < kW; ++x) {
          const size_t i = (static_cast<size_t>(c) * kH + y) * kW + x;
          if (!inside(y, x)) {
            ASSERT_EQ(chw[i], original[i]);
          } else if (!random_value) {
            ASSERT_EQ(chw[i], 0.0f);
          }
          sum += inside(y, x) ? chw[i] : 0;
          squares += inside(y, x) ? chw[i] * chw[i] : 0;
        }
      }
    }
    const double n = kC * rect.height * rect.width;
    EXPECT_NEAR(sum / n, 0.0, random_value ? 0.08 : 0.0);
    EXPECT_NEAR(squares / n, random_value ? 1.0 : 0.0, 0.1);
  }
  Image image = GradientImage(kW, kH, 3);
  const Image before = image;
  EraseHwc(&image, rect, {0.485f, 0.456f, 0.406f});
  for (int y = 0; y < kH; ++y) {
    for (int x = 0; x < kW; ++x) {
      for (int c = 0; c < 3; ++c) {
        const uint8_t expected = inside(y, x) ? std::vector<uint8_t>{124, 116, 104}[c]
                                              : before.row(y)[x * 3 + c];
        ASSERT_EQ(image.row(y)[x * 3 + c], expected) << x << "," << y;
      }
    }
  }
  SplitMix64 random(6);
  EXPECT_THROW(EraseHwc(&image, EraseRect{30, 0, 11, 5}, {}), InvalidArgument);
  EXPECT_THROW(EraseChw(nullptr, 3, kH, kW, EraseRect{0, -1, 1, 1}, {}, random), InvalidArgument);
}

}  // namespace
}  // namespace imgpipe
