// Batch mixing: the draws (Beta's moments, the cutmix box, determinism per batch), the
// in-place mixing of float32 NCHW batches, and a Loader over real photos that mixes its
// float32 batches exactly as the draw says, resumes to the same mixed batches, and
// refuses negative alphas.
#include "loader/batch_mixing.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "loader/loader.h"
#include "util/error.h"

namespace imgpipe::loader {
namespace {

const std::string kPhotos = std::string(IMGPIPE_TESTDATA_DIR) + "/images/hymenoptera/val";  // 153 photos

TEST(BatchMixing, BetaHasTheMeanAndVarianceOfItsParameters) {
  for (double a : {0.2, 1.0, 3.0}) {
    uint64_t state = 42;
    double sum = 0, squares = 0;
    const int n = 40000;
    for (int i = 0; i < n; ++i) {
      const double x = SampleBeta(a, a, state);
      ASSERT_GE(x, 0.0);
      ASSERT_LE(x, 1.0);
      sum += x;
      squares += x * x;
    }
    const double mean = sum / n, variance = squares / n - mean * mean;
    EXPECT_NEAR(mean, 0.5, 0.01) << a;
    EXPECT_NEAR(variance, 1 / (4 * (2 * a + 1)), 0.01) << a;  // Beta(a, a)'s variance
  }
}

TEST(BatchMixing, DrawsAreDeterministicPerBatchAndBothKindsOccur) {
  const BatchMixOptions both{0.2, 1.0};
  int mixups = 0, cutmixes = 0;
  for (int64_t batch = 0; batch < 200; ++batch) {
    const MixDraw d = DrawMix(both, 7, 3, batch, 0, 32, 48);
    const MixDraw again = DrawMix(both, 7, 3, batch, 0, 32, 48);
    EXPECT_EQ(d.kind, again.kind);
    EXPECT_EQ(d.lambda, again.lambda);
    EXPECT_GE(d.lambda, 0.0);
    EXPECT_LE(d.lambda, 1.0);
    if (d.kind == MixKind::kMixup) {
      ++mixups;
    } else {
      ASSERT_EQ(d.kind, MixKind::kCutmix);
      ++cutmixes;
      // The box lies in the image, and lambda is the share it leaves.
      EXPECT_LE(0, d.y0);
      EXPECT_LE(d.y0, d.y1);
      EXPECT_LE(d.y1, 32);
      EXPECT_LE(0, d.x0);
      EXPECT_LE(d.x0, d.x1);
      EXPECT_LE(d.x1, 48);
      EXPECT_DOUBLE_EQ(d.lambda, 1.0 - (d.y1 - d.y0) * (d.x1 - d.x0) / (32.0 * 48));
    }
  }
  EXPECT_GT(mixups, 60);
  EXPECT_GT(cutmixes, 60);
  // Another batch, epoch or rank draws anew.
  EXPECT_NE(DrawMix(both, 7, 3, 0, 0, 32, 48).lambda, DrawMix(both, 7, 3, 0, 1, 32, 48).lambda);
  EXPECT_NE(DrawMix(both, 7, 3, 0, 0, 32, 48).lambda, DrawMix(both, 7, 4, 0, 0, 32, 48).lambda);
  EXPECT_EQ(DrawMix({}, 7, 3, 0, 0, 32, 48).kind, MixKind::kNone);
  EXPECT_EQ(DrawMix({0, 1.0}, 7, 3, 0, 0, 32, 48).kind, MixKind::kCutmix);
}

// A batch of n samples of c x h x w, value = sample * 1000 + position.
std::vector<float> Numbered(int64_t n, int64_t c, int64_t h, int64_t w) {
  std::vector<float> v(n * c * h * w);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i / (c * h * w) * 1000 + i % (c * h * w));
  return v;
}

// `batch` (n samples of c x h x w) with `draw` applied.
std::vector<float> MixedCopy(const MixDraw& draw, std::vector<float> batch, int64_t n, int64_t c, int64_t h,
                             int64_t w) {
  ApplyMixNchw(draw, batch.data(), n, c, h, w);
  return batch;
}

TEST(BatchMixing, MixupBlendsEachSampleWithThePreviousOne) {
  const int64_t n = 3, c = 3, h = 4, w = 5, size = c * h * w;
  const std::vector<float> original = Numbered(n, c, h, w);
  const std::vector<float> mixed = MixedCopy({.kind = MixKind::kMixup, .lambda = 0.3}, original, n, c, h, w);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t partner = (i + n - 1) % n;
    for (int64_t k = 0; k < size; ++k) {
      const float own = original[i * size + k] * 0.3f, other = original[partner * size + k] * 0.7f;
      EXPECT_EQ(mixed[i * size + k], own + other) << i << " " << k;
    }
  }
}

TEST(BatchMixing, CutmixPastesThePartnersBox) {
  const int64_t n = 4, c = 3, h = 6, w = 7, size = c * h * w;
  const std::vector<float> original = Numbered(n, c, h, w);
  const MixDraw box{.kind = MixKind::kCutmix, .lambda = 0.5, .y0 = 1, .y1 = 4, .x0 = 2, .x1 = 7};
  const std::vector<float> mixed = MixedCopy(box, original, n, c, h, w);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t partner = (i + n - 1) % n;
    for (int64_t k = 0; k < size; ++k) {
      const int64_t y = k / w % h, x = k % w;
      const bool in_box = y >= 1 && y < 4 && x >= 2 && x < 7;
      EXPECT_EQ(mixed[i * size + k], original[(in_box ? partner : i) * size + k]) << i << " " << k;
    }
  }
}

LoaderOptions FloatOptions() {
  LoaderOptions o;
  o.batch_size = 16;
  o.image_size = 32;
  o.layout = "float32";
  o.threads = 2;
  o.seed = 7;
  o.start_ahead = false;
  return o;
}

std::vector<float> Pixels(const LoaderBatch& b) {
  const float* p = reinterpret_cast<const float*>(b.batch->data.data());
  return std::vector<float>(p, p + b.batch->size * b.batch->sample_bytes / sizeof(float));
}

TEST(BatchMixing, LoaderMixesFloatBatchesByTheirDrawAndResumesToTheSameBatches) {
  LoaderOptions plain = FloatOptions();
  LoaderOptions mixing = plain;
  mixing.mixup_alpha = 0.2;
  mixing.cutmix_alpha = 1.0;
  Loader unmixed(kPhotos, plain), mixed(kPhotos, mixing);
  unmixed.SetEpoch(1);
  mixed.SetEpoch(1);
  auto unmixed_pass = unmixed.Iterate();
  auto mixed_pass = mixed.Iterate();
  std::vector<std::vector<float>> mixed_batches;
  LoaderState state;
  for (int64_t index = 0; index < mixed.size(); ++index) {
    std::optional<LoaderBatch> u = unmixed_pass->Next(), m = mixed_pass->Next();
    ASSERT_TRUE(u && m);
    EXPECT_FALSE(u->mix.has_value());
    ASSERT_TRUE(m->mix.has_value());
    EXPECT_EQ(m->batch->labels, u->batch->labels);  // the labels stay the samples' own
    const MixDraw want = DrawMix({0.2, 1.0}, 7, 1, index, 0, 32, 32);
    EXPECT_EQ(m->mix->kind, want.kind);
    EXPECT_EQ(m->mix->lambda, want.lambda);
    std::vector<float> expected = Pixels(*u);
    ApplyMixNchw(want, expected.data(), static_cast<int64_t>(u->batch->size), 3, 32, 32);
    EXPECT_EQ(Pixels(*m), expected) << "batch " << index;
    mixed_batches.push_back(Pixels(*m));
    if (index == 3) state = DeserializeLoaderState(SerializeLoaderState(mixed.State()));
  }
  // A state taken mid-epoch resumes to the same mixed batches.
  EXPECT_EQ(state.options.cutmix_alpha, 1.0);
  Loader resumed(kPhotos, mixing);
  resumed.LoadState(state);
  auto pass = resumed.Iterate();
  for (int64_t k = 4; k < mixed.size(); ++k) {
    std::optional<LoaderBatch> r = pass->Next();
    ASSERT_TRUE(r);
    EXPECT_EQ(Pixels(*r), mixed_batches[k]) << "batch " << k;
  }
  // Another alpha is another loader: its state is refused.
  LoaderOptions other = mixing;
  other.mixup_alpha = 0.4;
  Loader different(kPhotos, other);
  EXPECT_THROW(different.LoadState(state), InvalidArgument);
}

TEST(BatchMixing, NegativeAlphaIsRefusedByName) {
  LoaderOptions o = FloatOptions();
  o.cutmix_alpha = -1;
  try {
    Loader loader(kPhotos, o);
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("cutmix_alpha"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace imgpipe::loader
