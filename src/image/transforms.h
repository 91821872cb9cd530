// Augmentations and output layouts for classification: torchvision's vocabulary.
#pragma once

#include <array>
#include <cstdint>

#include "image/image.h"
#include "image/jpeg_region_decoder.h"
#include "image/resize.h"
#include "util/random.h"

namespace imgpipe {

// torchvision.transforms.RandomResizedCrop.get_params: up to 10 tries of an area in
// [scale_min, scale_max] of the image and a log-uniform aspect ratio in
// [ratio_min, ratio_max]; else a center crop at the clamped ratio.
CropWindow SampleRandomResizedCrop(int width, int height, SplitMix64& random,
                                   double scale_min = 0.08, double scale_max = 1.0,
                                   double ratio_min = 3.0 / 4, double ratio_max = 4.0 / 3);

// The window that resize_shorter(resize_size) followed by center_crop(crop_size)
// takes from a width x height image (torchvision's Resize + CenterCrop, evaluation).
CropWindow CenterCropWindow(int width, int height, int resize_size, int crop_size);

// The same with torchvision's exact geometry: the fractional box of the original image
// that becomes the crop (the resized size truncated as torchvision does, the crop's
// offset rounded in resized pixels). Resize(image, box, crop_size, crop_size) then gives
// what Resize + CenterCrop give on the whole image. A crop larger than the resized
// image takes all of that axis (torchvision would pad).
PixelBox CenterCropBox(int width, int height, int resize_size, int crop_size);

// The same geometry in resized pixels: torchvision's Resize(resize_size) size (the
// longer side truncated) and the centre crop in it (its offset rounded; a crop larger
// than the resized image takes all of that axis). Throws Error on non-positive sizes.
ResizeCrop CenterResizeCrop(int width, int height, int resize_size, int crop_size);

void HorizontalFlip(Image* image);

// torchvision ColorJitter with factors drawn uniformly from [max(0, 1-b), 1+b] etc.,
// applied in a random order; 0 disables a component.
struct ColorJitterOptions {
  float brightness = 0;
  float contrast = 0;
  float saturation = 0;
};
void ColorJitter(Image* image, const ColorJitterOptions& options, SplitMix64& random);

// (x / 255 - mean) / std per channel, HWC uint8 -> CHW float32. `out` holds 3*H*W.
// `mirror`: writes the image flipped left to right (HorizontalFlip in the same pass).
void NormalizeToChw(const Image& image, const std::array<float, 3>& mean,
                    const std::array<float, 3>& std, float* out, bool mirror = false);

// The loops NormalizeToChw can run; all write the same floats. NormalizeToChw runs the
// fastest this CPU has.
enum class NormalizeKernel { kPortable, kAvx512Vbmi };
const char* NormalizeKernelName(NormalizeKernel kernel);
// Whether this build and CPU can run `kernel`.
bool NormalizeKernelAvailable(NormalizeKernel kernel);
// NormalizeToChw by `kernel`; throws Error as it does, or if the kernel is not available.
void NormalizeToChwWith(NormalizeKernel kernel, const Image& image,
                        const std::array<float, 3>& mean, const std::array<float, 3>& std,
                        float* out, bool mirror = false);

// The pixels as they are (HWC uint8) into `out` (H*W*channels bytes); `mirror`: flipped
// left to right, as HorizontalFlip then a copy would give.
void CopyPixels(const Image& image, uint8_t* out, bool mirror = false);

inline constexpr std::array<float, 3> kImageNetMean = {0.485f, 0.456f, 0.406f};
inline constexpr std::array<float, 3> kImageNetStd = {0.229f, 0.224f, 0.225f};

}  // namespace imgpipe
