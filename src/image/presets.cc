#include "image/presets.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "image/codec.h"
#include "image/image_format.h"
#include "image/resize.h"
#include "util/clock.h"
#include "util/error.h"

namespace imgpipe {
namespace {

PixelBox BoxOf(const CropWindow& window) {
  return {static_cast<double>(window.x), static_cast<double>(window.y),
          static_cast<double>(window.x + window.width),
          static_cast<double>(window.y + window.height)};
}

// Adds the thread's CPU seconds since the previous lap to a step of `times`; nothing
// when null.
class StepClock {
 public:
  explicit StepClock(PresetStepTimes* times) : times_(times) {
    if (times_ != nullptr) last_ = ThreadCpuSeconds();
  }
  void Lap(double PresetStepTimes::*step) {
    if (times_ == nullptr) return;
    const double now = ThreadCpuSeconds();
    times_->*step += now - last_;
    last_ = now;
  }
  // Records the region decode's options (or none: a whole decode).
  void Region(const std::optional<JpegRegionOptions>& options) {
    if (times_ != nullptr) times_->region = options;
  }

 private:
  PresetStepTimes* times_;
  double last_ = 0;
};

// `box` (displayed-image pixels) within the decoded image of region `crop`, where the
// region's pixels lie at `part` (DecodeJpegRegion's `box` out-parameter: scaled, offset).
PixelBox BoxInDecodedPart(const PixelBox& box, const CropWindow& crop, const PixelBox& part) {
  const double sx = part.width() / crop.width, sy = part.height() / crop.height;
  return {part.x0 + (box.x0 - crop.x) * sx, part.y0 + (box.y0 - crop.y) * sy,
          part.x0 + (box.x1 - crop.x) * sx, part.y0 + (box.y1 - crop.y) * sy};
}

// The thread's buffer for decoded images, reused from one image to the next.
Image& ThreadDecodedImage() {
  thread_local Image decoded;
  return decoded;
}

// A decoded image (the thread's buffer) and where the window lies in it.
struct DecodedWindow {
  const Image& image;
  PixelBox box;
};

// Decodes the part of `encoded` that `choose_box` (displayed width, height -> PixelBox)
// picks into the thread's buffer. JPEGs with `region_decode` decode only the whole
// pixels under the box (and the columns beside it libjpeg decodes anyway), DCT-scaled
// down while the box stays at least min_size x min_size, with `speed`'s settings;
// everything else decodes whole.
template <typename ChooseBox>
DecodedWindow DecodeWindow(std::string_view encoded, const std::string& path,
                           bool region_decode, int min_size, const JpegSpeed& speed,
                           StepClock& clock, ChooseBox choose_box) {
  Image& image = ThreadDecodedImage();
  if (!region_decode || DetectImageFormat(encoded) != ImageFormat::kJpeg) {
    clock.Region(std::nullopt);
    image = DecodeImage(encoded, path);
    clock.Lap(&PresetStepTimes::decode);
    const PixelBox box = choose_box(image.width, image.height);
    clock.Lap(&PresetStepTimes::window);
    return {image, box};
  }
  // 1. The box, from the header's size.
  const ImageInfo info = ReadDisplayedJpegInfo(encoded, path);
  const PixelBox box = choose_box(info.width, info.height);
  // 2. The part to decode: the whole pixels under the box.
  const int x0 = std::max(static_cast<int>(std::floor(box.x0)), 0);
  const int y0 = std::max(static_cast<int>(std::floor(box.y0)), 0);
  const int x1 = std::min(static_cast<int>(std::ceil(box.x1)), info.width);
  const int y1 = std::min(static_cast<int>(std::ceil(box.y1)), info.height);
  JpegRegionOptions options;
  options.crop = CropWindow{x0, y0, x1 - x0, y1 - y0};
  options.min_width = min_size;
  options.min_height = min_size;
  options.speed = speed;
  options.keep_decoded_columns = true;
  clock.Region(options);
  clock.Lap(&PresetStepTimes::window);
  PixelBox part;
  DecodeJpegRegionInto(encoded, path, options, &image, nullptr, &part);
  clock.Lap(&PresetStepTimes::decode);
  // 3. The box within the decoded part (scaled like it).
  return {image, BoxInDecodedPart(box, *options.crop, part)};
}

// Resizes the window of `decoded` to size x size into `resized` (reused by the thread):
// the whole pixels that hold the box, as an image of their own (torchvision's
// RandomResizedCrop: the filter stops at the window's edges).
void ResizeWindow(const DecodedWindow& decoded, int size, Image* resized) {
  const Image& image = decoded.image;
  const int x0 = static_cast<int>(std::floor(decoded.box.x0));
  const int y0 = static_cast<int>(std::floor(decoded.box.y0));
  const int width = static_cast<int>(std::ceil(decoded.box.x1)) - x0;
  const int height = static_cast<int>(std::ceil(decoded.box.y1)) - y0;
  const PixelBox box = {decoded.box.x0 - x0, decoded.box.y0 - y0, decoded.box.x1 - x0,
                        decoded.box.y1 - y0};
  ResizeInto(image.row(y0) + static_cast<size_t>(x0) * image.channels, width, height,
             image.row_bytes(), image.channels, box, resized->pixels.data(), size, size,
             resized->row_bytes());
}

// A decoded image (the thread's buffer), the pixels of the displayed image it holds,
// and the eval preset's resize and crop of that image.
struct EvalDecode {
  const Image& image;
  ResizeCropSpan held;
  ResizeCrop rc;
};

// Decodes what the exact eval preset reads of `encoded` into the thread's buffer: for
// JPEGs with region decode the pixels the crop's filters read (and the columns beside
// them libjpeg decodes anyway), else the whole image.
EvalDecode DecodeForEval(std::string_view encoded, const std::string& path,
                         const EvalPreset& preset, StepClock& clock) {
  Image& image = ThreadDecodedImage();
  if (!preset.use_region_decode || DetectImageFormat(encoded) != ImageFormat::kJpeg) {
    clock.Region(std::nullopt);
    image = DecodeImage(encoded, path);
    clock.Lap(&PresetStepTimes::decode);
    const ResizeCrop rc =
        CenterResizeCrop(image.width, image.height, preset.resize_size, preset.crop_size);
    clock.Lap(&PresetStepTimes::window);
    return {image, {0, 0, image.width, image.height}, rc};
  }
  const ImageInfo info = ReadDisplayedJpegInfo(encoded, path);
  const ResizeCrop rc = CenterResizeCrop(info.width, info.height, preset.resize_size,
                                         preset.crop_size);
  const ResizeCropSpan needed = ResizeCropSource(rc);
  JpegRegionOptions options;
  options.crop = CropWindow{needed.x0, needed.y0, needed.x1 - needed.x0, needed.y1 - needed.y0};
  options.keep_decoded_columns = true;
  clock.Region(options);
  clock.Lap(&PresetStepTimes::window);
  PixelBox part;  // unscaled: whole pixels
  DecodeJpegRegionInto(encoded, path, options, &image, nullptr, &part);
  clock.Lap(&PresetStepTimes::decode);
  const int x0 = needed.x0 - static_cast<int>(part.x0), y0 = needed.y0 - static_cast<int>(part.y0);
  return {image, {x0, y0, x0 + image.width, y0 + image.height}, rc};
}

// The draft-decoded eval preset of a JPEG into `resized` (crop_size square): the crop's
// box (CenterCropBox) with the pixels its filter reads around it, decoded at the
// largest DCT scale denominator d whose whole image still spans the Resize size, then
// the box (its geometry exact, in 1/d pixels) resized as Pillow's resize(box=...) does.
// Returns false, having done nothing, when d would be 1 (the exact path is as fast).
bool DraftEval(std::string_view encoded, const std::string& path, const EvalPreset& preset,
               StepClock& clock, Image* resized) {
  const ImageInfo info = ReadDisplayedJpegInfo(encoded, path);
  const ResizeCrop rc =
      CenterResizeCrop(info.width, info.height, preset.resize_size, preset.crop_size);
  int d = 8;
  while (d > 1 && (info.width < d * rc.resized_width || info.height < d * rc.resized_height)) {
    d /= 2;
  }
  if (d == 1) return false;
  const PixelBox box = CenterCropBox(info.width, info.height, preset.resize_size,
                                     preset.crop_size);
  ResizeCropSpan span = ResizeCropSource(rc);  // in full-size pixels; widened by 2 of 1/d
  span = {std::max(span.x0 - 2 * d, 0), std::max(span.y0 - 2 * d, 0),
          std::min(span.x1 + 2 * d, info.width), std::min(span.y1 + 2 * d, info.height)};
  JpegRegionOptions options;
  options.crop = CropWindow{span.x0, span.y0, span.x1 - span.x0, span.y1 - span.y0};
  options.scale = d;
  clock.Region(options);
  clock.Lap(&PresetStepTimes::window);
  options.keep_decoded_columns = true;
  PixelBox part;
  Image& image = ThreadDecodedImage();
  DecodeJpegRegionInto(encoded, path, options, &image, nullptr, &part);
  clock.Lap(&PresetStepTimes::decode);
  const PixelBox in_part = BoxInDecodedPart(box, *options.crop, part);
  ResizeInto(image.pixels.data(), image.width, image.height, image.row_bytes(), image.channels,
             in_part, resized->pixels.data(), resized->width, resized->height,
             resized->row_bytes());
  return true;
}

// A size x size x 3 image reused by the thread.
Image& ThreadOutputImage(int size) {
  thread_local Image resized;
  resized.width = size;
  resized.height = size;
  resized.channels = 3;
  resized.pixels.resize(static_cast<size_t>(size) * size * 3);
  return resized;
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

// The train preset's steps after the jitter when a policy or random erasing is on: the
// flip (on `image` when the policy drew a geometric op, which does not commute with it;
// else in the layout's copy), the policy, the layout into `out`, and random erasing
// (before the uint8 copy, mirrored as the copy mirrors; after Normalize for float32),
// their draws from TrainAugmentSeed(seed).
void AugmentAndWrite(Image& image, const TrainPreset& preset, uint64_t seed, bool flip,
                     void* out, StepClock& clock) {
  SplitMix64 random(TrainAugmentSeed(seed));
  bool mirror = flip;
  // 1. The policy's ops, drawn; the flip first when one of them moves pixels.
  const std::vector<AugmentDraw> draws =
      DrawAugmentPolicy(preset.augment, image.height, image.width, random);
  if (flip && std::any_of(draws.begin(), draws.end(),
                          [](const AugmentDraw& d) { return IsGeometricAugmentOp(d.op); })) {
    HorizontalFlip(&image);
    mirror = false;
    clock.Lap(&PresetStepTimes::output);
  }
  for (const AugmentDraw& d : draws) ApplyAugmentOp(&image, d.op, d.magnitude, preset.augment.fill);
  // 2. Erasing's rectangle; uint8: erased before the copy.
  const int size = preset.size;
  const std::optional<EraseRect> rect = SampleErasing(size, size, preset.random_erase, random);
  const bool uint8 = preset.layout == OutputLayout::kUint8Nhwc;
  if (rect && uint8) {
    EraseRect where = *rect;
    if (mirror) where.left = size - rect->left - rect->width;
    EraseHwc(&image, where, preset.mean);
  }
  clock.Lap(&PresetStepTimes::augment);
  // 3. The layout; float32: erased after Normalize, as torchvision erases.
  WriteOutput(image, preset.layout, preset.mean, preset.std, mirror, out);
  clock.Lap(&PresetStepTimes::output);
  if (rect && !uint8) {
    EraseChw(static_cast<float*>(out), 3, size, size, *rect, EraseValue{}, random);
    clock.Lap(&PresetStepTimes::augment);
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
  throw InvalidArgument("unknown output layout '" + name + "': use float32 (normalised NCHW) or uint8 (NHWC)");
}

EvalPreset EvalPresetForCrop(int crop_size, OutputLayout layout) {
  EvalPreset preset;
  preset.crop_size = crop_size;
  preset.resize_size = crop_size * 256 / 224;
  preset.layout = layout;
  return preset;
}

uint64_t TrainAugmentSeed(uint64_t seed) {
  return DeriveSeed(seed, 0x6175676d656e74ull);  // "augment": a stream of its own
}

size_t OutputBytes(OutputLayout layout, int size) {
  const size_t samples = static_cast<size_t>(size) * size * 3;
  return layout == OutputLayout::kUint8Nhwc ? samples : samples * sizeof(float);
}

void ApplyTrainPreset(std::string_view encoded, const std::string& path,
                      const TrainPreset& preset, uint64_t seed, void* out,
                      PresetStepTimes* times) {
  CheckSize(preset.size, "ApplyTrainPreset");
  StepClock clock(times);
  // 1. The window (from the header's size, for JPEGs) and its decode.
  SplitMix64 random(seed);
  const DecodedWindow decoded = DecodeWindow(
      encoded, path, preset.use_region_decode, preset.size, preset.decode_speed, clock,
      [&](int width, int height) {
        return BoxOf(SampleRandomResizedCrop(width, height, random, preset.scale_min,
                                             preset.scale_max, preset.ratio_min,
                                             preset.ratio_max));
      });
  // 2. Resize and jitter (jitter treats every position alike, so the order of flip and
  //    jitter does not matter).
  Image& resized = ThreadOutputImage(preset.size);
  ResizeWindow(decoded, preset.size, &resized);
  clock.Lap(&PresetStepTimes::resize);
  const bool flip = random.Uniform() < preset.flip_probability;
  ColorJitter(&resized, preset.jitter, random);
  // 3. Without a policy or erasing: laid out, flipped while laid out.
  if (preset.augment.kind == AugmentPolicyKind::kNone && preset.random_erase == 0) {
    WriteOutput(resized, preset.layout, preset.mean, preset.std, flip, out);
    clock.Lap(&PresetStepTimes::output);
    return;
  }
  // 4. Else the flip, the policy, the layout and erasing, from a stream of their own.
  AugmentAndWrite(resized, preset, seed, flip, out, clock);
}

void ApplyEvalPreset(std::string_view encoded, const std::string& path,
                     const EvalPreset& preset, void* out, PresetStepTimes* times) {
  CheckSize(preset.crop_size, "ApplyEvalPreset");
  CheckSize(preset.resize_size, "ApplyEvalPreset");
  if (preset.resize_size < preset.crop_size) {
    throw Error("ApplyEvalPreset: resize_size " + std::to_string(preset.resize_size) +
                " is smaller than crop_size " + std::to_string(preset.crop_size));
  }
  StepClock clock(times);
  Image& resized = ThreadOutputImage(preset.crop_size);
  if (!preset.draft_decode || !preset.use_region_decode ||
      DetectImageFormat(encoded) != ImageFormat::kJpeg ||
      !DraftEval(encoded, path, preset, clock, &resized)) {
    const EvalDecode decoded = DecodeForEval(encoded, path, preset, clock);
    ResizeCropInto(decoded.image.pixels.data(), decoded.held, decoded.image.row_bytes(),
                   decoded.image.channels, decoded.rc, resized.pixels.data(),
                   resized.row_bytes());
  }
  clock.Lap(&PresetStepTimes::resize);
  WriteOutput(resized, preset.layout, preset.mean, preset.std, /*mirror=*/false, out);
  clock.Lap(&PresetStepTimes::output);
}

}  // namespace imgpipe
