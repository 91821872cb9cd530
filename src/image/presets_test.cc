#include "image/presets.h"
#include "image/presets_test_util.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "image/codec.h"
#include "image/image_test_util.h"
#include "image/resize.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe {
namespace {

std::vector<std::string> AllPhotos() {
  std::vector<std::string> paths;
  for (const std::string& dir : ListDirectory(TestDataPath("images/photos-by-class"))) {
    if (dir == "image_list.txt") continue;
    for (const std::string& path : ImageFilesIn(JoinPath("images/photos-by-class", dir))) {
      paths.push_back(path);
    }
  }
  return paths;
}

Image EvalUint8(const std::string& bytes, EvalPreset preset) {
  preset.layout = OutputLayout::kUint8Nhwc;
  Image out;
  out.width = out.height = preset.crop_size;
  out.channels = 3;
  out.pixels.resize(OutputBytes(preset.layout, preset.crop_size));
  ApplyEvalPreset(bytes, "eval.jpg", preset, out.pixels.data());
  return out;
}

TEST(PresetsTest, OutputBytes) {
  EXPECT_EQ(OutputBytes(OutputLayout::kUint8Nhwc, 224), 224u * 224 * 3);
  EXPECT_EQ(OutputBytes(OutputLayout::kFloat32Nchw, 224), 224u * 224 * 3 * 4);
}

// Region decode gives what full decode + crop + resize gives: the same bytes when the
// window decodes at scale 1 (the region decoder is exact), and within a small mean
// difference when DCT scaling replaces part of the shrinking.
TEST(PresetsTest, LayoutNamesAndEvalPresetForCrop) {
  for (OutputLayout layout : {OutputLayout::kFloat32Nchw, OutputLayout::kUint8Nhwc}) {
    EXPECT_EQ(ParseOutputLayout(OutputLayoutName(layout)), layout);
  }
  EXPECT_THROW(ParseOutputLayout("float16"), Error);
  EvalPreset preset = EvalPresetForCrop(224, OutputLayout::kUint8Nhwc);
  EXPECT_EQ(preset.crop_size, 224);
  EXPECT_EQ(preset.resize_size, 256);
  EXPECT_EQ(preset.layout, OutputLayout::kUint8Nhwc);
  EXPECT_EQ(EvalPresetForCrop(112, OutputLayout::kFloat32Nchw).resize_size, 128);
}

TEST(PresetsTest, TrainRegionDecodeMatchesFullDecode) {
  TrainPreset region, full;
  full.use_region_decode = false;
  int scaled = 0, exact = 0;
  double worst_scaled = 0;
  for (const std::string& path : AllPhotos()) {
    const std::string bytes = ReadFile(path);
    const ImageInfo info = ReadDisplayedJpegInfo(bytes, path);
    for (uint64_t seed : {1, 2, 3}) {
      SCOPED_TRACE(path + " seed " + std::to_string(seed));
      const Image a = TrainPresetUint8(bytes, region, seed);
      const Image b = TrainPresetUint8(bytes, full, seed);
      // The window the preset picks, to know whether it was DCT-scaled.
      SplitMix64 random(seed);
      const CropWindow w = SampleRandomResizedCrop(info.width, info.height, random);
      if (w.width >= 2 * region.size && w.height >= 2 * region.size) {
        ++scaled;
        worst_scaled = std::max(worst_scaled, MeanAbsDiff(a, b));
        EXPECT_LT(MeanAbsDiff(a, b), 2.5);
      } else {
        ++exact;
        EXPECT_EQ(MaxAbsDiff(a, b), 0);
      }
    }
  }
  EXPECT_GT(scaled, 20);
  EXPECT_GT(exact, 20);
  std::printf("train preset, region vs full decode: %d exact, %d DCT-scaled (worst mean "
              "abs diff %.2f)\n", exact, scaled, worst_scaled);
}

TEST(PresetsTest, TrainIsDeterministicPerSeed) {
  const std::string bytes = ReadFile(AllPhotos().at(5));
  TrainPreset preset;
  EXPECT_EQ(TrainPresetUint8(bytes, preset, 11).pixels, TrainPresetUint8(bytes, preset, 11).pixels);
  EXPECT_NE(TrainPresetUint8(bytes, preset, 11).pixels, TrainPresetUint8(bytes, preset, 12).pixels);
}

TEST(PresetsTest, FlipAndFloatLayout) {
  const std::string bytes = ReadFile(AllPhotos().at(7));
  TrainPreset never, always;
  never.flip_probability = 0;
  always.flip_probability = 1;
  Image plain = TrainPresetUint8(bytes, never, 5);
  Image flipped = TrainPresetUint8(bytes, always, 5);
  HorizontalFlip(&flipped);
  EXPECT_EQ(plain.pixels, flipped.pixels);
  // The float layout is the uint8 one, normalised into planes.
  TrainPreset floats = never;
  std::vector<float> out(OutputBytes(OutputLayout::kFloat32Nchw, 224) / sizeof(float));
  ApplyTrainPreset(bytes, "f.jpg", floats, 5, out.data());
  std::vector<float> expected(out.size());
  NormalizeToChw(plain, floats.mean, floats.std, expected.data());
  EXPECT_EQ(out, expected);
  // Jitter changes the pixels.
  TrainPreset jitter = never;
  jitter.jitter = {0.4f, 0.4f, 0.4f};
  EXPECT_GT(MeanAbsDiff(TrainPresetUint8(bytes, jitter, 5), plain), 1.0);
}

TEST(PresetsTest, OrientedAndNonJpegInputs) {
  TrainPreset region, full;
  full.use_region_decode = false;
  const std::string plain = ReadFile(AllPhotos().at(0));
  for (int orientation : {3, 6, 8}) {
    const std::string jpeg = WithExifOrientation(plain, orientation);
    for (uint64_t seed = 0; seed < 4; ++seed) {
      EXPECT_LT(MeanAbsDiff(TrainPresetUint8(jpeg, region, seed), TrainPresetUint8(jpeg, full, seed)), 2.5);
    }
  }
  // A PNG goes through DecodeImage, then the same window, resize and flip.
  const std::string png = ReadFile(TestDataPath("images/mixed-formats/1/auto-union-3579207_640.png"));
  const Image decoded = DecodeImage(png, "p.png");
  SplitMix64 random(4);
  const CropWindow w = SampleRandomResizedCrop(decoded.width, decoded.height, random);
  Image expected = Resize(CropImage(decoded, w.x, w.y, w.width, w.height), 224, 224);
  if (random.Uniform() < 0.5) HorizontalFlip(&expected);
  EXPECT_EQ(TrainPresetUint8(png, region, 4).pixels, expected.pixels);
}

// The eval preset computes torchvision's Resize(256) + CenterCrop(224) (on the decoded
// pixels, as on a PIL image) exactly, with region decode or without, on real photos
// (hymenoptera's and photos-by-class's); draft_decode within a small mean difference
// when it DCT-scales (the shorter side at least 2 x 256 pixels).
TEST(PresetsTest, EvalMatchesResizeThenCenterCrop) {
  EvalPreset region, full, draft;
  full.use_region_decode = false;
  draft.draft_decode = true;
  double worst_draft = 0;
  int scaled = 0;
  std::vector<std::string> photos = AllPhotos();
  for (const char* dir : {"train/ants", "val/bees"}) {
    const std::vector<std::string> files = ImageFilesIn(std::string("images/hymenoptera/") + dir);
    for (size_t i = 0; i < files.size() && i < 40; i += 2) photos.push_back(files[i]);
  }
  for (const std::string& path : photos) {
    SCOPED_TRACE(path);
    const std::string bytes = ReadFile(path);
    // torchvision: shorter side to 256, the longer truncated, then the centre 224x224.
    const Image image = DecodeImage(bytes, path);
    const int shorter = std::min(image.width, image.height);
    const int rw = image.width <= image.height ? 256 : 256 * image.width / shorter;
    const int rh = image.width <= image.height ? 256 * image.height / shorter : 256;
    const Image torchvision =
        CropImage(Resize(image, rw, rh), static_cast<int>(std::nearbyint((rw - 224) / 2.0)),
                  static_cast<int>(std::nearbyint((rh - 224) / 2.0)), 224, 224);
    EXPECT_EQ(EvalUint8(bytes, region).pixels, torchvision.pixels);
    EXPECT_EQ(EvalUint8(bytes, full).pixels, torchvision.pixels);
    const Image d = EvalUint8(bytes, draft);
    if (shorter >= 2 * 256) {
      ++scaled;
      worst_draft = std::max(worst_draft, MeanAbsDiff(d, torchvision));
      EXPECT_LT(MeanAbsDiff(d, torchvision), 3.5);
    } else {
      EXPECT_EQ(d.pixels, torchvision.pixels);
    }
  }
  EXPECT_GT(scaled, 10);
  std::printf("eval preset: %zu photos exact; draft decode: %d DCT-scaled, worst mean abs "
              "diff %.2f\n", photos.size(), scaled, worst_draft);
  EvalPreset small;
  small.resize_size = 200;
  std::vector<uint8_t> out(OutputBytes(small.layout, small.crop_size));
  EXPECT_THROW(ApplyEvalPreset(ReadFile(photos[0]), "x.jpg", small, out.data()), Error);
}

TEST(PresetsTest, BadImagesAreDataErrors) {
  const std::string bytes = ReadFile(AllPhotos().at(0));
  std::vector<uint8_t> out(OutputBytes(OutputLayout::kFloat32Nchw, 224));
  for (bool region : {true, false}) {
    TrainPreset train;
    train.use_region_decode = region;
    EvalPreset eval;
    eval.use_region_decode = region;
    EXPECT_THROW(ApplyTrainPreset(bytes.substr(0, 1000), "cut.jpg", train, 1, out.data()),
                 DataError);
    EXPECT_THROW(ApplyTrainPreset("not an image", "x.jpg", train, 1, out.data()), DataError);
    EXPECT_THROW(ApplyEvalPreset(bytes.substr(0, bytes.size() / 3), "cut.jpg", eval, out.data()),
                 DataError);
  }
}

}  // namespace
}  // namespace imgpipe
