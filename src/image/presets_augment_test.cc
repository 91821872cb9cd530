// The train preset's policy and random erasing on real photos (hymenoptera): they apply
// exactly the ops and the rectangle drawn from TrainAugmentSeed(seed), after the flip,
// and leave the window, flip and jitter as the preset without them draws them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "image/augment_policy.h"
#include "image/image_test_util.h"
#include "image/presets.h"
#include "image/presets_test_util.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe {
namespace {

// Every 8th photo of hymenoptera's train/ants and val/bees.
std::vector<std::string> SomePhotos() {
  std::vector<std::string> photos;
  for (const char* dir : {"images/hymenoptera/train/ants", "images/hymenoptera/val/bees"}) {
    const std::vector<std::string> files = ImageFilesIn(dir);
    for (size_t i = 0; i < files.size(); i += 8) photos.push_back(files[i]);
  }
  return photos;
}

// The preset's float32 output.
std::vector<float> FloatOutput(const std::string& bytes, TrainPreset preset, uint64_t seed) {
  preset.layout = OutputLayout::kFloat32Nchw;
  std::vector<float> out(OutputBytes(preset.layout, preset.size) / sizeof(float));
  ApplyTrainPreset(bytes, "train.jpg", preset, seed, out.data());
  return out;
}

// What the preset should give: its output without the policy and erasing (flipped as
// drawn), then the ops DrawAugmentPolicy draws from TrainAugmentSeed(seed), then the
// rectangle SampleErasing draws next, erased with the mean's bytes. Counts the ops
// other than Identity into `ops` and the erasings into `erased`.
Image Expected(const std::string& bytes, const TrainPreset& preset, uint64_t seed, int* ops,
               int* erased) {
  TrainPreset plain = preset;
  plain.augment = {};
  plain.random_erase = 0;
  Image expected = TrainPresetUint8(bytes, plain, seed);
  SplitMix64 random(TrainAugmentSeed(seed));
  if (preset.augment.kind != AugmentPolicyKind::kNone) {
    for (const AugmentDraw& draw : DrawAugmentPolicy(preset.augment, preset.size, preset.size, random)) {
      ApplyAugmentOp(&expected, draw.op, draw.magnitude, preset.augment.fill);
      *ops += draw.op != AugmentOp::kIdentity;
    }
  }
  if (std::optional<EraseRect> rect =
          SampleErasing(preset.size, preset.size, preset.random_erase, random)) {
    EraseHwc(&expected, *rect, preset.mean);
    ++*erased;
  }
  return expected;
}

TEST(PresetsAugmentTest, PoliciesApplyExactlyTheDrawnOpsAfterTheFlip) {
  for (AugmentPolicyKind kind : {AugmentPolicyKind::kTrivialAugmentWide, AugmentPolicyKind::kRandAugment,
                                 AugmentPolicyKind::kAutoAugmentImageNet}) {
    TrainPreset preset;
    preset.size = 96;
    preset.augment.kind = kind;
    int ops = 0, erased = 0, images = 0;
    for (const std::string& path : SomePhotos()) {
      const std::string bytes = ReadFile(path);
      for (uint64_t seed : {1, 2, 3}) {
        SCOPED_TRACE(path + " " + AugmentPolicyName(kind) + " seed " + std::to_string(seed));
        const Image expected = Expected(bytes, preset, seed, &ops, &erased);
        EXPECT_EQ(TrainPresetUint8(bytes, preset, seed).pixels, expected.pixels);
        ++images;
      }
    }
    EXPECT_GT(ops, images / 2) << AugmentPolicyName(kind);  // the policy did something
    EXPECT_EQ(erased, 0);
  }
}

TEST(PresetsAugmentTest, FloatLayoutIsTheUint8OneNormalised) {
  TrainPreset preset;
  preset.size = 64;
  preset.augment.kind = AugmentPolicyKind::kTrivialAugmentWide;
  for (const std::string& path : SomePhotos()) {
    const std::string bytes = ReadFile(path);
    const Image pixels = TrainPresetUint8(bytes, preset, 9);
    std::vector<float> expected(OutputBytes(OutputLayout::kFloat32Nchw, preset.size) / sizeof(float));
    NormalizeToChw(pixels, preset.mean, preset.std, expected.data());
    EXPECT_EQ(FloatOutput(bytes, preset, 9), expected) << path;
  }
}

TEST(PresetsAugmentTest, SameSeedSameBytesOtherSeedsDiffer) {
  const std::string bytes = ReadFile(SomePhotos().at(3));
  TrainPreset preset;
  preset.augment.kind = AugmentPolicyKind::kTrivialAugmentWide;
  preset.random_erase = 0.5;
  for (OutputLayout layout : {OutputLayout::kUint8Nhwc, OutputLayout::kFloat32Nchw}) {
    preset.layout = layout;
    std::vector<uint8_t> a(OutputBytes(layout, preset.size)), b(a.size()), c(a.size());
    ApplyTrainPreset(bytes, "p.jpg", preset, 21, a.data());
    ApplyTrainPreset(bytes, "p.jpg", preset, 21, b.data());
    ApplyTrainPreset(bytes, "p.jpg", preset, 22, c.data());
    EXPECT_EQ(a, b) << OutputLayoutName(layout);
    EXPECT_NE(a, c) << OutputLayoutName(layout);
  }
}

// RandomErasing(p=1) erases the rectangle SampleErasing draws: to 0 after Normalize
// (float32), to round(mean * 255) (uint8), whether or not the image was flipped, with
// or without a policy before it; the rest of the image is untouched.
TEST(PresetsAugmentTest, RandomEraseOneErasesTheDrawnRectangle) {
  const std::string bytes = ReadFile(SomePhotos().at(5));
  for (AugmentPolicyKind kind : {AugmentPolicyKind::kNone, AugmentPolicyKind::kTrivialAugmentWide}) {
    for (double flip : {0.0, 1.0}) {
      TrainPreset preset;
      preset.size = 80;
      preset.flip_probability = flip;
      preset.augment.kind = kind;
      preset.random_erase = 1.0;
      int ops = 0, erased = 0;
      for (uint64_t seed = 0; seed < 6; ++seed) {
        SCOPED_TRACE("flip " + std::to_string(flip) + " seed " + std::to_string(seed));
        const Image expected = Expected(bytes, preset, seed, &ops, &erased);
        EXPECT_EQ(TrainPresetUint8(bytes, preset, seed).pixels, expected.pixels);
        // float32: the policy's pixels normalised, then zeros in the rectangle.
        TrainPreset unerased = preset;
        unerased.random_erase = 0;
        std::vector<float> want = FloatOutput(bytes, unerased, seed);
        SplitMix64 random(TrainAugmentSeed(seed));
        DrawAugmentPolicy(preset.augment, preset.size, preset.size, random);
        const std::optional<EraseRect> rect = SampleErasing(preset.size, preset.size, 1.0, random);
        ASSERT_TRUE(rect.has_value());
        EXPECT_GT(rect->width * rect->height, 0);
        EraseChw(want.data(), 3, preset.size, preset.size, *rect, EraseValue{}, random);
        EXPECT_EQ(FloatOutput(bytes, preset, seed), want);
        // The uint8 rectangle holds the mean's bytes: 124, 116, 104 for ImageNet's.
        const Image out = TrainPresetUint8(bytes, preset, seed);
        const uint8_t* p = out.row(rect->top) + 3 * rect->left;
        EXPECT_EQ(std::vector<int>(p, p + 3), (std::vector<int>{124, 116, 104}));
      }
      EXPECT_EQ(erased, 6);
    }
  }
}

TEST(PresetsAugmentTest, BadPolicyOptionsAndEraseProbabilityAreInvalidArguments) {
  const std::string bytes = ReadFile(SomePhotos().at(0));
  std::vector<uint8_t> out(OutputBytes(OutputLayout::kFloat32Nchw, 224));
  TrainPreset erase;
  erase.random_erase = 1.5;
  EXPECT_THROW(ApplyTrainPreset(bytes, "p.jpg", erase, 1, out.data()), InvalidArgument);
  TrainPreset magnitude;
  magnitude.augment.kind = AugmentPolicyKind::kRandAugment;
  magnitude.augment.ra_magnitude = 31;
  EXPECT_THROW(ApplyTrainPreset(bytes, "p.jpg", magnitude, 1, out.data()), InvalidArgument);
}

}  // namespace
}  // namespace imgpipe
