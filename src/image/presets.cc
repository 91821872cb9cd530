#include "image/presets.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "image/codec.h"
#include "image/image_format.h"
#include "image/resize.h"
#include "util/error.h"

namespace imgpipe {
namespace {

PixelBox BoxOf(const CropWindow& window) {
  return {static_cast<double>(window.x), static_cast<double>(window.y),
          static_cast<double>(window.x + window.width),
          static_cast<double>(window.y + window.height)};
}

// How torchvision reads the pixels at the window's edges: kCropThenResize (its
// RandomResizedCrop: the window is an image of its own, the filter stops at its edges)
// or kResizeThenCrop (Resize + CenterCrop: the filter reads the pixels around it).
enum class EdgeMode { kCropThenResize, kResizeThenCrop };

// A decoded image and where the window lies in it.
struct DecodedWindow {
  Image image;
  PixelBox box;
};

// Decodes the part of `encoded` that `choose_box` (displayed width, height -> PixelBox)
// picks. JPEGs with `region_decode` decode only the whole pixels under the box, plus a
// margin for the filter in kResizeThenCrop mode, DCT-scaled down while the box stays at
// least min_size x min_size; everything else decodes whole.
template <typename ChooseBox>
DecodedWindow DecodeWindow(std::string_view encoded, const std::string& path,
                           bool region_decode, int min_size, EdgeMode mode,
                           ChooseBox choose_box) {
  DecodedWindow out;
  if (!region_decode || DetectImageFormat(encoded) != ImageFormat::kJpeg) {
    out.image = DecodeImage(encoded, path);
    out.box = choose_box(out.image.width, out.image.height);
    return out;
  }
  // 1. The box, from the header's size.
  const ImageInfo info = ReadDisplayedJpegInfo(encoded, path);
  const PixelBox box = choose_box(info.width, info.height);
  // 2. The part to decode: the pixels under the box, and with kResizeThenCrop those
  //    the filter reads around it (its support is the shrink factor, about
  //    box / min_size input pixels, plus rounding).
  int margin = 0;
  if (mode == EdgeMode::kResizeThenCrop) {
    margin = 2 * static_cast<int>(std::max(box.width(), box.height()) / std::max(min_size, 1)) + 2;
  }
  const int x0 = std::max(static_cast<int>(std::floor(box.x0)) - margin, 0);
  const int y0 = std::max(static_cast<int>(std::floor(box.y0)) - margin, 0);
  const int x1 = std::min(static_cast<int>(std::ceil(box.x1)) + margin, info.width);
  const int y1 = std::min(static_cast<int>(std::ceil(box.y1)) + margin, info.height);
  JpegRegionOptions options;
  options.crop = CropWindow{x0, y0, x1 - x0, y1 - y0};
  options.min_width = min_size;
  options.min_height = min_size;
  PixelBox part;
  out.image = DecodeJpegRegion(encoded, path, options, nullptr, &part);
  // 3. The box within the decoded part (scaled like it).
  const double sx = part.width() / (x1 - x0), sy = part.height() / (y1 - y0);
  out.box = {part.x0 + (box.x0 - x0) * sx, part.y0 + (box.y0 - y0) * sy,
             part.x0 + (box.x1 - x0) * sx, part.y0 + (box.y1 - y0) * sy};
  return out;
}

// Resizes the window of `decoded` to size x size into `resized` (reused by the thread).
// kCropThenResize resizes the whole pixels that hold the box as an image of their own.
void ResizeWindow(const DecodedWindow& decoded, EdgeMode mode, int size, Image* resized) {
  const Image& image = decoded.image;
  PixelBox box = decoded.box;
  int x0 = 0, y0 = 0, width = image.width, height = image.height;
  if (mode == EdgeMode::kCropThenResize) {
    x0 = static_cast<int>(std::floor(box.x0));
    y0 = static_cast<int>(std::floor(box.y0));
    width = static_cast<int>(std::ceil(box.x1)) - x0;
    height = static_cast<int>(std::ceil(box.y1)) - y0;
    box = {box.x0 - x0, box.y0 - y0, box.x1 - x0, box.y1 - y0};
  }
  resized->width = size;
  resized->height = size;
  resized->channels = 3;
  resized->pixels.resize(static_cast<size_t>(size) * size * 3);
  ResizeInto(image.row(y0) + static_cast<size_t>(x0) * image.channels, width, height,
             image.row_bytes(), image.channels, box, resized->pixels.data(), size, size,
             resized->row_bytes());
}

// Lays `image` out into `out`, flipped left to right when `mirror`.
void WriteOutput(const Image& image, OutputLayout layout, const std::array<float, 3>& mean,
                 const std::array<float, 3>& std, bool mirror, void* out) {
  if (layout == OutputLayout::kUint8Nhwc) {
    CopyPixels(image, static_cast<uint8_t*>(out), mirror);
  } else {
    NormalizeToChw(image, mean, std, static_cast<float*>(out), mirror);
  }
}

void CheckSize(int size, const char* what) {
  if (size < 1) throw Error(std::string(what) + ": size must be positive, not " + std::to_string(size));
}

}  // namespace

const char* OutputLayoutName(OutputLayout layout) {
  return layout == OutputLayout::kUint8Nhwc ? "uint8" : "float32";
}

OutputLayout ParseOutputLayout(const std::string& name) {
  if (name == "float32") return OutputLayout::kFloat32Nchw;
  if (name == "uint8") return OutputLayout::kUint8Nhwc;
  throw Error("unknown output layout '" + name + "': use float32 (normalised NCHW) or uint8 (NHWC)");
}

EvalPreset EvalPresetForCrop(int crop_size, OutputLayout layout) {
  EvalPreset preset;
  preset.crop_size = crop_size;
  preset.resize_size = crop_size * 256 / 224;
  preset.layout = layout;
  return preset;
}

size_t OutputBytes(OutputLayout layout, int size) {
  const size_t samples = static_cast<size_t>(size) * size * 3;
  return layout == OutputLayout::kUint8Nhwc ? samples : samples * sizeof(float);
}

void ApplyTrainPreset(std::string_view encoded, const std::string& path,
                      const TrainPreset& preset, uint64_t seed, void* out) {
  CheckSize(preset.size, "ApplyTrainPreset");
  // 1. The window (from the header's size, for JPEGs) and its decode.
  SplitMix64 random(seed);
  const DecodedWindow decoded = DecodeWindow(
      encoded, path, preset.use_region_decode, preset.size, EdgeMode::kCropThenResize,
      [&](int width, int height) {
        return BoxOf(SampleRandomResizedCrop(width, height, random, preset.scale_min,
                                             preset.scale_max, preset.ratio_min,
                                             preset.ratio_max));
      });
  // 2. Resize, jitter, lay out, flipped while laid out (jitter treats every position
  //    alike, so the order of flip and jitter does not matter).
  thread_local Image resized;
  ResizeWindow(decoded, EdgeMode::kCropThenResize, preset.size, &resized);
  const bool flip = random.Uniform() < preset.flip_probability;
  ColorJitter(&resized, preset.jitter, random);
  WriteOutput(resized, preset.layout, preset.mean, preset.std, flip, out);
}

void ApplyEvalPreset(std::string_view encoded, const std::string& path,
                     const EvalPreset& preset, void* out) {
  CheckSize(preset.crop_size, "ApplyEvalPreset");
  CheckSize(preset.resize_size, "ApplyEvalPreset");
  const DecodedWindow decoded = DecodeWindow(
      encoded, path, preset.use_region_decode, preset.crop_size, EdgeMode::kResizeThenCrop,
      [&](int width, int height) {
        return CenterCropBox(width, height, preset.resize_size, preset.crop_size);
      });
  thread_local Image resized;
  ResizeWindow(decoded, EdgeMode::kResizeThenCrop, preset.crop_size, &resized);
  WriteOutput(resized, preset.layout, preset.mean, preset.std, /*mirror=*/false, out);
}

}  // namespace imgpipe
