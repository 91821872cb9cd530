#include "image/transforms.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "image/image_test_util.h"
#include "util/error.h"

namespace imgpipe {
namespace {

TEST(SampleRandomResizedCropTest, WindowsLieInsideWithAreaAndRatioInRange) {
  SplitMix64 random(7);
  for (auto [width, height] : {std::pair{500, 375}, {375, 500}, {1920, 1080}, {64, 64}}) {
    std::set<int> xs;
    for (int i = 0; i < 2000; ++i) {
      CropWindow w = SampleRandomResizedCrop(width, height, random);
      ASSERT_GE(w.x, 0);
      ASSERT_GE(w.y, 0);
      ASSERT_GT(w.width, 0);
      ASSERT_GT(w.height, 0);
      ASSERT_LE(w.x + w.width, width);
      ASSERT_LE(w.y + w.height, height);
      // Rounding w and h moves area and ratio by at most a pixel's worth.
      const double area = static_cast<double>(w.width) * w.height / (width * height);
      const double slack = 2.0 / std::min(w.width, w.height);
      EXPECT_GE(area, 0.08 * (1 - slack) * (1 - slack));
      const double ratio = static_cast<double>(w.width) / w.height;
      EXPECT_GE(ratio, 3.0 / 4 * (1 - slack));
      EXPECT_LE(ratio, 4.0 / 3 * (1 + slack));
      xs.insert(w.x);
    }
    EXPECT_GT(xs.size(), std::min(50u, width / 2u));  // positions spread over the image
  }
}

TEST(SampleRandomResizedCropTest, FollowsTorchvisionDraws) {
  // Area 0.5 and ratio 1 are always accepted at the first try: w = h = round(sqrt(5000))
  // = 71; then torchvision draws the top row, then the left column, each uniform.
  SplitMix64 random(42), replay(42);
  std::set<int> ys;
  for (int i = 0; i < 500; ++i) {
    CropWindow w = SampleRandomResizedCrop(100, 100, random, 0.5, 0.5, 1.0, 1.0);
    replay.Next();  // area
    replay.Next();  // ratio
    const int y = static_cast<int>(replay.Below(30));
    const int x = static_cast<int>(replay.Below(30));
    ASSERT_EQ(w, (CropWindow{x, y, 71, 71}));
    ys.insert(y);
  }
  EXPECT_EQ(ys.size(), 30u);
  // Python's round() rounds halves to even: sqrt(6.25) = 2.5 gives 2.
  SplitMix64 r(1);
  EXPECT_EQ(SampleRandomResizedCrop(10, 10, r, 0.0625, 0.0625, 1.0, 1.0).width, 2);
}

TEST(SampleRandomResizedCropTest, FallsBackToACentreCropAtTheClampedRatio) {
  SplitMix64 random(3);
  // Ratio 2..3 on a square never fits at full area: the whole width, height w / 2.
  EXPECT_EQ(SampleRandomResizedCrop(100, 100, random, 1.0, 1.0, 2.0, 3.0),
            (CropWindow{0, 25, 100, 50}));
  // Ratio 1/4..1/2: the whole height, width h / 2.
  EXPECT_EQ(SampleRandomResizedCrop(100, 100, random, 1.0, 1.0, 0.25, 0.5),
            (CropWindow{25, 0, 50, 100}));
  // A ratio out of range: clamped (30x20 is 1.5; 20 * 4/3 = 26.7 -> 27).
  EXPECT_EQ(SampleRandomResizedCrop(30, 20, random, 1.0, 1.0, 3.0 / 4, 4.0 / 3),
            (CropWindow{1, 0, 27, 20}));
  // In range: the whole image (also the only window the tries can accept here).
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(SampleRandomResizedCrop(100, 100, random, 1.0, 1.0, 0.5, 2.0),
              (CropWindow{0, 0, 100, 100}));
  }
  EXPECT_THROW(SampleRandomResizedCrop(0, 10, random), Error);
  EXPECT_THROW(SampleRandomResizedCrop(10, 10, random, 0.5, 0.1), Error);
}

TEST(CenterCropWindowTest, MatchesResizeThenCenterCrop) {
  for (auto [width, height] : {std::pair{500, 375}, {375, 500}, {640, 408}, {1920, 1080},
                               {256, 256}, {300, 1000}, {224, 240}}) {
    SCOPED_TRACE(std::to_string(width) + "x" + std::to_string(height));
    CropWindow w = CenterCropWindow(width, height, 256, 224);
    // torchvision: Resize(256) makes the shorter side 256 and the longer
    // int(256 * longer / shorter); CenterCrop(224) starts at round((size - 224) / 2).
    const bool wide = width >= height;
    const int shorter = wide ? height : width, longer = wide ? width : height;
    const int resized_long = 256 * longer / shorter;
    const int rw = wide ? resized_long : 256, rh = wide ? 256 : resized_long;
    const double left = std::nearbyint((rw - 224) / 2.0) * width / rw;
    const double top = std::nearbyint((rh - 224) / 2.0) * height / rh;
    // Within a resized pixel (torchvision rounds in resized pixels, we in original ones).
    EXPECT_NEAR(w.x, left, static_cast<double>(width) / rw);
    EXPECT_NEAR(w.y, top, static_cast<double>(height) / rh);
    EXPECT_NEAR(w.width, 224.0 * width / rw, static_cast<double>(width) / rw);
    EXPECT_NEAR(w.height, 224.0 * height / rh, static_cast<double>(height) / rh);
    EXPECT_EQ(w.width, w.height);
  }
  // A crop larger than the resize keeps to the image.
  EXPECT_EQ(CenterCropWindow(100, 80, 64, 128), (CropWindow{10, 0, 80, 80}));
  EXPECT_THROW(CenterCropWindow(100, 80, 0, 224), Error);
}

TEST(CenterCropWindowTest, BoxHasTorchvisionsExactGeometry) {
  // 640x360: resized to 455x256, crop at left round(115.5) = 116 (ties to even), top 16.
  const PixelBox box = CenterCropBox(640, 360, 256, 224);
  EXPECT_DOUBLE_EQ(box.x0, 116 * 640.0 / 455);
  EXPECT_DOUBLE_EQ(box.x1, 340 * 640.0 / 455);
  EXPECT_DOUBLE_EQ(box.y0, 16 * 360.0 / 256);
  EXPECT_DOUBLE_EQ(box.y1, 240 * 360.0 / 256);
  // Portrait: the width is the shorter side.
  const PixelBox tall = CenterCropBox(300, 400, 256, 224);
  EXPECT_DOUBLE_EQ(tall.x0, 16 * 300.0 / 256);
  EXPECT_DOUBLE_EQ(tall.y0, std::nearbyint((341 - 224) / 2.0) * 400.0 / 341);
  // A crop larger than the resized image takes the whole axis.
  const PixelBox big = CenterCropBox(100, 50, 32, 80);
  EXPECT_DOUBLE_EQ(big.y0, 0);
  EXPECT_DOUBLE_EQ(big.y1, 50);
}

TEST(HorizontalFlipTest, MirrorsEachRow) {
  for (int channels : {1, 3}) {
    const Image src = GradientImage(31, 9, channels);
    Image flipped = src;
    HorizontalFlip(&flipped);
    for (int y = 0; y < src.height; ++y) {
      for (int x = 0; x < src.width; ++x) {
        for (int c = 0; c < channels; ++c) {
          ASSERT_EQ(flipped.row(y)[x * channels + c],
                    src.row(y)[(src.width - 1 - x) * channels + c]);
        }
      }
    }
    HorizontalFlip(&flipped);
    EXPECT_EQ(flipped.pixels, src.pixels);
  }
}

Image Jittered(const Image& src, const ColorJitterOptions& options, uint64_t seed) {
  Image image = src;
  SplitMix64 random(seed);
  ColorJitter(&image, options, random);
  return image;
}

TEST(ColorJitterTest, BrightnessScalesEverySampleByOneFactor) {
  const Image src = GradientImage(64, 48, 3);
  std::set<int> bright_values;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const Image image = Jittered(src, ColorJitterOptions{0.4f, 0, 0}, seed);
    // The factor, from samples that cannot clip (f <= 1.4); every sample is then
    // trunc(min(255, f * v)).
    double in = 0, out = 0;
    for (size_t i = 0; i < src.pixels.size(); ++i) {
      if (src.pixels[i] <= 180) {
        in += src.pixels[i];
        out += image.pixels[i] + 0.5;  // truncation loses half a level on average
      }
    }
    const double f = out / in;
    for (size_t i = 0; i < src.pixels.size(); ++i) {
      ASSERT_NEAR(image.pixels[i], std::min(255.0, f * src.pixels[i]), 2.0);
    }
    bright_values.insert(image.pixels.back());
  }
  EXPECT_GT(bright_values.size(), 5u);  // factors vary with the seed
}

TEST(ColorJitterTest, SaturationAndContrastKeepGreyAndTheMean) {
  Image src = GradientImage(64, 48, 3);
  // Saturation: grey pixels stay grey, colourful ones move towards or away from grey.
  for (int x = 0; x < 64; ++x) std::fill_n(src.row(0) + 3 * x, 3, static_cast<uint8_t>(4 * x));
  for (uint64_t seed = 0; seed < 10; ++seed) {
    const Image image = Jittered(src, ColorJitterOptions{0, 0, 0.8f}, seed);
    for (int i = 0; i < 64 * 3; ++i) ASSERT_NEAR(image.pixels[i], src.pixels[i], 1);
    EXPECT_GT(MeanAbsDiff(image, src), 0.5) << seed;
  }
  // Contrast: blends with the mean grey level, so the mean moves little and the spread
  // changes.
  for (uint64_t seed = 0; seed < 10; ++seed) {
    const Image image = Jittered(src, ColorJitterOptions{0, 0.5f, 0}, seed);
    double mean_in = 0, mean_out = 0;
    for (size_t i = 0; i < src.pixels.size(); ++i) {
      mean_in += src.pixels[i];
      mean_out += image.pixels[i];
    }
    EXPECT_NEAR(mean_in / src.pixels.size(), mean_out / src.pixels.size(), 3.0);
    EXPECT_GT(MeanAbsDiff(image, src), 0.5) << seed;
  }
}

TEST(ColorJitterTest, DeterministicAndOffByDefault) {
  const Image src = GradientImage(40, 30, 3);
  Image a = src, b = src, c = src;
  SplitMix64 ra(9), rb(9), rc(9);
  const ColorJitterOptions all{0.4f, 0.4f, 0.4f};
  ColorJitter(&a, all, ra);
  ColorJitter(&b, all, rb);
  EXPECT_EQ(a.pixels, b.pixels);
  EXPECT_NE(a.pixels, src.pixels);
  ColorJitter(&c, ColorJitterOptions{}, rc);
  EXPECT_EQ(c.pixels, src.pixels);
}

TEST(NormalizeToChwTest, PlanesOfNormalisedValues) {
  const Image src = GradientImage(7, 5, 3);
  std::vector<float> out(3 * 7 * 5, -100);
  NormalizeToChw(src, kImageNetMean, kImageNetStd, out.data());
  for (int c = 0; c < 3; ++c) {
    for (int y = 0; y < 5; ++y) {
      for (int x = 0; x < 7; ++x) {
        const float expected =
            (src.row(y)[3 * x + c] / 255.0f - kImageNetMean[c]) / kImageNetStd[c];
        ASSERT_NEAR(out[(c * 5 + y) * 7 + x], expected, 1e-6);
      }
    }
  }
  Image gray = GradientImage(7, 5, 1);
  EXPECT_THROW(NormalizeToChw(gray, kImageNetMean, kImageNetStd, out.data()), Error);
}

// Every kernel this CPU has writes exactly the portable loop's floats (memcmp), on
// random images of odd and block-straddling sizes, mirrored or not, for several means
// and deviations; and the output outside the planes is left alone.
TEST(NormalizeToChwTest, KernelsMatchPortableBitForBit) {
  const std::array<float, 3> means[] = {kImageNetMean, {0.5f, 0.5f, 0.5f}, {0, 0, 0},
                                        {-1.25f, 0.1f, 3.0f}};
  const std::array<float, 3> stds[] = {kImageNetStd, {0.5f, 0.5f, 0.5f}, {1, 1, 1},
                                       {0.0117f, 7.5f, 0.333f}};
  std::mt19937 rng(17);
  int kernels_run = 0;
  for (NormalizeKernel kernel : {NormalizeKernel::kPortable, NormalizeKernel::kAvx512Vbmi}) {
    if (!NormalizeKernelAvailable(kernel)) {
      EXPECT_THROW(NormalizeToChwWith(kernel, GradientImage(4, 4, 3), kImageNetMean,
                                      kImageNetStd, nullptr),
                   Error);
      continue;
    }
    ++kernels_run;
    for (int width : {1, 3, 63, 64, 65, 127, 129, 224, 301}) {
      for (int height : {1, 5, 21}) {
        Image src;
        src.width = width;
        src.height = height;
        src.channels = 3;
        src.pixels.resize(static_cast<size_t>(width) * height * 3);
        for (uint8_t& v : src.pixels) v = static_cast<uint8_t>(rng());
        const size_t n = src.pixels.size();  // 3 planes of width * height
        for (size_t m = 0; m < std::size(means); ++m) {
          for (bool mirror : {false, true}) {
            SCOPED_TRACE(std::string(NormalizeKernelName(kernel)) + " " +
                         std::to_string(width) + "x" + std::to_string(height) + " mean " +
                         std::to_string(m) + (mirror ? " mirrored" : ""));
            std::vector<float> expected(n + 16, 42.0f);
            NormalizeToChwWith(NormalizeKernel::kPortable, src, means[m], stds[m],
                               expected.data(), mirror);
            // At a 64-byte boundary (the SIMD loop streams its stores) and off one.
            for (size_t offset : {0, 1, 16}) {
              std::vector<float> buffer(n + 16 + 32, 42.0f);
              float* got = buffer.data() + (64 - reinterpret_cast<uintptr_t>(buffer.data()) % 64) /
                                               sizeof(float) % 16 + offset;
              NormalizeToChwWith(kernel, src, means[m], stds[m], got, mirror);
              ASSERT_EQ(std::memcmp(got, expected.data(), (n + 16) * sizeof(float)), 0) << offset;
              EXPECT_EQ(got[n], 42.0f);
            }
          }
        }
      }
    }
  }
  EXPECT_GE(kernels_run, 1);
}

// The portable loop computes each value as (float(v) / 255 - mean) / std in float.
TEST(NormalizeToChwTest, PortableIsTheFloatFormulaExactly) {
  Image src;
  src.width = 256;
  src.height = 1;
  src.channels = 3;
  for (int v = 0; v < 256; ++v) {
    for (int k = 0; k < 3; ++k) src.pixels.push_back(static_cast<uint8_t>((v + 85 * k) % 256));
  }
  std::vector<float> out(3 * 256);
  NormalizeToChwWith(NormalizeKernel::kPortable, src, kImageNetMean, kImageNetStd, out.data());
  for (int k = 0; k < 3; ++k) {
    for (int x = 0; x < 256; ++x) {
      const float v = static_cast<float>(src.pixels[3 * x + k]);
      const float expected = (v / 255.0f - kImageNetMean[k]) / kImageNetStd[k];
      ASSERT_EQ(std::memcmp(&out[k * 256 + x], &expected, sizeof(float)), 0) << k << " " << x;
    }
  }
}

// mirror = true gives exactly HorizontalFlip followed by the plain layout, for both the
// float planes and the uint8 copy, at odd and even widths.
TEST(NormalizeToChwTest, MirrorEqualsFlipThenLayout) {
  for (int width : {7, 8, 1}) {
    SCOPED_TRACE(width);
    const Image src = GradientImage(width, 5, 3);
    Image flipped = src;
    HorizontalFlip(&flipped);
    std::vector<float> expected(3 * width * 5), mirrored(3 * width * 5);
    NormalizeToChw(flipped, kImageNetMean, kImageNetStd, expected.data());
    NormalizeToChw(src, kImageNetMean, kImageNetStd, mirrored.data(), /*mirror=*/true);
    EXPECT_EQ(mirrored, expected);
    std::vector<uint8_t> copied(src.pixels.size()), copied_mirror(src.pixels.size());
    CopyPixels(src, copied.data());
    CopyPixels(src, copied_mirror.data(), /*mirror=*/true);
    EXPECT_EQ(copied, src.pixels);
    EXPECT_EQ(copied_mirror, flipped.pixels);
  }
}

}  // namespace
}  // namespace imgpipe
