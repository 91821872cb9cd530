// Image operations one at a time, single-threaded, over the 47 photos of
// ${IMGPIPE_TESTDATA_DIR}/images/photos-by-class (640 to 1920 pixels wide): full
// TurboJPEG decode, crop-window and DCT-scaled decodes, Resize, the train and eval
// presets with and without region decode, the train preset with torchvision's policies,
// and each policy op on 224x224 crops of the photos. items_per_second is images per
// second per core; compare rows side by side (e.g. train preset with / without region
// decode; an op's row against Identity's, which is the copy every op row includes).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "image/augment_ops.h"
#include "image/codec.h"
#include "image/jpeg_region_decoder.h"
#include "image/presets.h"
#include "image/resize.h"
#include "util/file.h"

namespace imgpipe {
namespace {

struct Photo {
  std::string path;
  std::string bytes;
  ImageInfo info;  // displayed size
};

const std::vector<Photo>& Photos() {
  static const std::vector<Photo> photos = [] {
    std::vector<Photo> out;
    const std::string root = JoinPath(IMGPIPE_TESTDATA_DIR, "images/photos-by-class");
    for (const std::string& dir : ListDirectory(root)) {
      if (!IsDirectory(JoinPath(root, dir))) continue;
      for (const std::string& name : ListDirectory(JoinPath(root, dir))) {
        Photo photo;
        photo.path = JoinPath(JoinPath(root, dir), name);
        photo.bytes = ReadFile(photo.path);
        photo.info = ReadDisplayedJpegInfo(photo.bytes, photo.path);
        out.push_back(std::move(photo));
      }
    }
    return out;
  }();
  return photos;
}

// Runs `fn(photo, iteration)` over the photos in turn; one item per call.
template <typename Fn>
void OverPhotos(benchmark::State& state, Fn fn) {
  const std::vector<Photo>& photos = Photos();
  if (photos.empty()) {
    state.SkipWithError("no photos under IMGPIPE_TESTDATA_DIR");
    return;
  }
  uint64_t i = 0;
  for (auto _ : state) {
    fn(photos[i % photos.size()], i);
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_FullDecodeTurboJpeg(benchmark::State& state) {
  OverPhotos(state, [](const Photo& p, uint64_t) {
    benchmark::DoNotOptimize(DecodeImage(p.bytes, p.path));
  });
}
BENCHMARK(BM_FullDecodeTurboJpeg);

// A centred window of half the area (sides * sqrt(1/2)), at scale 1.
void BM_RegionDecodeHalfArea(benchmark::State& state) {
  OverPhotos(state, [](const Photo& p, uint64_t) {
    const int w = static_cast<int>(p.info.width * M_SQRT1_2);
    const int h = static_cast<int>(p.info.height * M_SQRT1_2);
    JpegRegionOptions options;
    options.crop = CropWindow{(p.info.width - w) / 2, (p.info.height - h) / 2, w, h};
    benchmark::DoNotOptimize(DecodeJpegRegion(p.bytes, p.path, options));
  });
}
BENCHMARK(BM_RegionDecodeHalfArea);

// The whole image at 1/denom.
void BM_ScaledDecode(benchmark::State& state) {
  const int denom = static_cast<int>(state.range(0));
  OverPhotos(state, [denom](const Photo& p, uint64_t) {
    JpegRegionOptions options;
    options.min_width = p.info.width / denom;
    options.min_height = p.info.height / denom;
    benchmark::DoNotOptimize(DecodeJpegRegion(p.bytes, p.path, options));
  });
}
BENCHMARK(BM_ScaledDecode)->Arg(2)->Arg(4)->Arg(8);

// Resize of a synthetic photo-like image (a decoded photo, cropped) from
// src_width x src_height to width x height.
void BM_Resize(benchmark::State& state) {
  const int src_width = static_cast<int>(state.range(0));
  const int src_height = static_cast<int>(state.range(1));
  const int width = static_cast<int>(state.range(2));
  const int height = static_cast<int>(state.range(3));
  const Photo* photo = nullptr;
  for (const Photo& p : Photos()) {
    if (p.info.width >= src_width && p.info.height >= src_height) photo = &p;
  }
  if (photo == nullptr) {
    state.SkipWithError("no photo large enough");
    return;
  }
  const Image full = DecodeImage(photo->bytes, photo->path);
  std::vector<uint8_t> out(static_cast<size_t>(width) * height * 3);
  for (auto _ : state) {
    ResizeInto(full.pixels.data(), src_width, src_height, full.row_bytes(), 3, out.data(),
               width, height, static_cast<size_t>(width) * 3);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Resize)
    ->Args({500, 375, 224, 224})
    ->Args({300, 300, 224, 224})
    ->Args({640, 427, 341, 256})
    ->Args({1280, 853, 384, 256})
    ->Args({1280, 853, 224, 224})
    ->Args({150, 120, 224, 224});

void BM_TrainPreset(benchmark::State& state) {
  TrainPreset preset;
  preset.use_region_decode = state.range(0) != 0;
  std::vector<uint8_t> out(OutputBytes(preset.layout, preset.size));
  OverPhotos(state, [&](const Photo& p, uint64_t i) {
    ApplyTrainPreset(p.bytes, p.path, preset, i, out.data());
    benchmark::DoNotOptimize(out.data());
  });
}
BENCHMARK(BM_TrainPreset)->ArgName("region_decode")->Arg(1)->Arg(0);

// The train preset (region decode, float32) with a policy (AugmentPolicyKind: 0 none,
// 1 ta_wide, 2 ra, 3 imagenet) and random erasing with p = range(1) / 100: the
// recipe's cost against the plain preset's row (0, 0).
void BM_TrainPresetPolicy(benchmark::State& state) {
  TrainPreset preset;
  preset.augment.kind = static_cast<AugmentPolicyKind>(state.range(0));
  preset.random_erase = static_cast<double>(state.range(1)) / 100;
  std::vector<uint8_t> out(OutputBytes(preset.layout, preset.size));
  OverPhotos(state, [&](const Photo& p, uint64_t i) {
    ApplyTrainPreset(p.bytes, p.path, preset, i, out.data());
    benchmark::DoNotOptimize(out.data());
  });
}
BENCHMARK(BM_TrainPresetPolicy)
    ->ArgNames({"policy", "erase_percent"})
    ->Args({0, 0})
    ->Args({1, 0})
    ->Args({1, 10})
    ->Args({2, 0})
    ->Args({3, 0})
    ->Args({0, 100});

// The 224x224 centre-ish crops (resized) of the photos, the policies' input.
const std::vector<Image>& Crops224() {
  static const std::vector<Image> crops = [] {
    std::vector<Image> out;
    for (const Photo& p : Photos()) {
      const Image full = DecodeImage(p.bytes, p.path);
      const int side = std::min(full.width, full.height);
      Image crop{224, 224, 3, std::vector<uint8_t>(224 * 224 * 3)};
      const uint8_t* corner = full.row((full.height - side) / 2) + (full.width - side) / 2 * 3;
      ResizeInto(corner, side, side, full.row_bytes(), 3, crop.pixels.data(), 224, 224, 224 * 3);
      out.push_back(std::move(crop));
    }
    return out;
  }();
  return crops;
}

// One op (AugmentOp's order) at a mid-range magnitude of TrivialAugmentWide's space, on
// a fresh copy of a crop each time (Identity's row is that copy alone).
void BM_AugmentOp(benchmark::State& state) {
  const AugmentOp op = static_cast<AugmentOp>(state.range(0));
  constexpr double kMagnitudes[kAugmentOpCount] = {0,   0.5, 0.5, 16,  16,  67.5, 0.5, 0.5,
                                                   0.5, 0.5, 4,   128, 0,   0,    0};
  state.SetLabel(AugmentOpName(op));
  const std::vector<Image>& crops = Crops224();
  if (crops.empty()) {
    state.SkipWithError("no photos under IMGPIPE_TESTDATA_DIR");
    return;
  }
  Image image;
  uint64_t i = 0;
  for (auto _ : state) {
    image = crops[i++ % crops.size()];
    ApplyAugmentOp(&image, op, kMagnitudes[state.range(0)]);
    benchmark::DoNotOptimize(image.pixels.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AugmentOp)->ArgName("op")->DenseRange(0, kAugmentOpCount - 1);

void BM_EvalPreset(benchmark::State& state) {
  EvalPreset preset;
  preset.use_region_decode = state.range(0) != 0;
  std::vector<uint8_t> out(OutputBytes(preset.layout, preset.crop_size));
  OverPhotos(state, [&](const Photo& p, uint64_t) {
    ApplyEvalPreset(p.bytes, p.path, preset, out.data());
    benchmark::DoNotOptimize(out.data());
  });
}
BENCHMARK(BM_EvalPreset)->ArgName("region_decode")->Arg(1)->Arg(0);

}  // namespace
}  // namespace imgpipe
