// The usual ImageNet train and eval preprocessing, one call per image, doing the least
// decode work (crop-window and DCT-scaled decode) that gives the same result.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "image/augment_policy.h"
#include "image/jpeg_region_decoder.h"
#include "image/transforms.h"

namespace imgpipe {

enum class OutputLayout {
  kUint8Nhwc,    // uint8 HWC, to normalise on the GPU
  kFloat32Nchw,  // float32 CHW, normalised with mean/std
};

struct TrainPreset {
  int size = 224;
  double scale_min = 0.08, scale_max = 1.0;
  double ratio_min = 3.0 / 4, ratio_max = 4.0 / 3;
  double flip_probability = 0.5;
  ColorJitterOptions jitter;  // off by default
  // torchvision's --auto-augment policy, on the flipped size x size crop (off by default).
  AugmentPolicyOptions augment;
  // torchvision's --random-erase: RandomErasing(p) with value 0 (in normalised space; the
  // uint8 layout gets round(mean * 255)) and its default scale and ratio ranges.
  double random_erase = 0;
  OutputLayout layout = OutputLayout::kFloat32Nchw;
  std::array<float, 3> mean = kImageNetMean;
  std::array<float, 3> std = kImageNetStd;
  bool use_region_decode = true;  // crop-window + DCT-scaled decode; off: full decode then crop
  // The region decode's libjpeg-turbo settings: exact by default (bench/decode_modes_bench
  // measures the faster ones).
  JpegSpeed decode_speed;
};

struct EvalPreset {
  int resize_size = 256;  // at least crop_size
  int crop_size = 224;
  OutputLayout layout = OutputLayout::kFloat32Nchw;
  std::array<float, 3> mean = kImageNetMean;
  std::array<float, 3> std = kImageNetStd;
  // JPEGs: decode only the pixels the crop's filters read (exact); off: decode whole.
  bool use_region_decode = true;
  // JPEGs (with region decode): decode the crop's window at the smallest DCT scale (1/2,
  // 1/4, 1/8) whose whole image still spans the Resize(resize_size) size, then resize
  // the crop's box in it, as Pillow's draft mode then resize(box=...): faster on large
  // photos, not bit-identical (kDraftDecodeDoc). Images under 2 x resize_size: exact.
  bool draft_decode = false;
};

// The help text of the draft_decode option (--draft-decode, Loader(draft_decode=...)).
inline constexpr const char* kDraftDecodeDoc =
    "Eval preset: decode JPEGs at the smallest DCT scale that still covers the resize "
    "(Pillow's draft mode); faster on large photos, not bit-identical to torchvision";

// "float32" or "uint8" (the --layout names); Parse throws Error for any other name.
const char* OutputLayoutName(OutputLayout layout);
OutputLayout ParseOutputLayout(const std::string& name);

// The eval preset with `crop_size` outputs: the short side resized to
// crop_size * 256 / 224 (ImageNet's ratio), then the centre crop.
EvalPreset EvalPresetForCrop(int crop_size, OutputLayout layout);

// Bytes one output image takes in `layout` at size x size.
size_t OutputBytes(OutputLayout layout, int size);

// CPU seconds of the calling thread that each step of preset calls took, added up
// (for MeasurePresetCosts).
struct PresetStepTimes {
  double window = 0;  // header read and the crop window's geometry
  double decode = 0;  // the decode (of the window, for JPEGs with region decode)
  double resize = 0;
  double output = 0;  // jitter, flip and the layout (normalised float32 or uint8)
  double augment = 0;  // the train preset's policy and random erasing
  // The last call's region decode (DecodeJpegRegion's options); unset: a whole decode.
  std::optional<JpegRegionOptions> region;
};

// The seed of the train preset's second stream, from its `seed`: the policy's draws
// (DrawAugmentPolicy), then random erasing's (SampleErasing), so that turning them on
// leaves the window, flip and jitter as they were.
uint64_t TrainAugmentSeed(uint64_t seed);

// Decodes `encoded` (JPEG fast path; other formats through DecodeImage) and writes one
// preprocessed size x size image to `out` (OutputBytes bytes), in torchvision's order:
// RandomResizedCrop, RandomHorizontalFlip, (jitter,) the policy, the layout (ToTensor and
// Normalize, or uint8), RandomErasing. The random choices come from `seed` alone: the
// window, flip and jitter from SplitMix64(seed), the policy and erasing from
// SplitMix64(TrainAugmentSeed(seed)). Adds its steps' times to `times` if given. Throws
// DataError for bad images, InvalidArgument for bad policy options or random_erase.
void ApplyTrainPreset(std::string_view encoded, const std::string& path,
                      const TrainPreset& preset, uint64_t seed, void* out,
                      PresetStepTimes* times = nullptr);
// The eval preset computes only the crop's output pixels, with the whole resize's
// weights: bit-identical to torchvision's Resize + CenterCrop (+ ToTensor + Normalize)
// on the decoded image unless draft_decode. Throws Error if resize_size < crop_size.
void ApplyEvalPreset(std::string_view encoded, const std::string& path,
                     const EvalPreset& preset, void* out, PresetStepTimes* times = nullptr);

}  // namespace imgpipe
