#include "image/transforms.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <string>
#include <utility>

#ifdef IMGPIPE_NORMALIZE_SIMD
#include <xmmintrin.h>  // _mm_sfence
#endif

#include "image/normalize_kernels.h"
#include "util/error.h"

namespace imgpipe {
namespace {

// Python's round(): to nearest, ties to even (the default floating-point rounding mode).
int PyRound(double v) { return static_cast<int>(std::nearbyint(v)); }

// torchvision's rgb_to_grayscale on uint8 tensors: float weights, truncated to uint8.
uint8_t Gray(const uint8_t* p) {
  return static_cast<uint8_t>(0.2989f * p[0] + 0.587f * p[1] + 0.114f * p[2]);
}

// torchvision's _blend on uint8: ratio * a + (1 - ratio) * b, clamped to [0, 255] and
// truncated (Tensor.to(uint8)).
uint8_t Blend(uint8_t a, float b, float ratio) {
  float v = ratio * a + (1.0f - ratio) * b;
  return static_cast<uint8_t>(std::clamp(v, 0.0f, 255.0f));
}

void AdjustBrightness(Image* image, float factor) {
  for (uint8_t& v : image->pixels) v = Blend(v, 0.0f, factor);
}

void AdjustContrast(Image* image, float factor) {
  // 1. The mean of the grayscale image (of the image itself when it has one channel).
  const size_t n = static_cast<size_t>(image->width) * image->height;
  const int c = image->channels;
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* p = &image->pixels[i * c];
    sum += c >= 3 ? Gray(p) : p[0];
  }
  const float mean = n == 0 ? 0.0f : static_cast<float>(sum / n);
  // 2. Blend every sample with it.
  for (uint8_t& v : image->pixels) v = Blend(v, mean, factor);
}

void AdjustSaturation(Image* image, float factor) {
  if (image->channels < 3) return;  // as torchvision: grey has no saturation
  const size_t n = static_cast<size_t>(image->width) * image->height;
  for (size_t i = 0; i < n; ++i) {
    uint8_t* p = &image->pixels[i * image->channels];
    const float gray = Gray(p);
    for (int k = 0; k < 3; ++k) p[k] = Blend(p[k], gray, factor);
  }
}

// Fills table->bytes from table->value.
void BuildTableBytes(transforms_internal::NormalizeTable* table) {
  for (int k = 0; k < 3; ++k) {
    for (int v = 0; v < 256; ++v) {
      uint8_t bytes[4];
      std::memcpy(bytes, &table->value[k][v], 4);
      for (int j = 0; j < 4; ++j) table->bytes[k][j][v] = bytes[j];
    }
  }
}

// The table of (v / 255 - mean) / std for every byte value, with its bytes, kept by the
// thread for its next image with the same mean and deviation (compared bit for bit: a
// deviation of -0 gives other values than one of +0).
const transforms_internal::NormalizeTable& ThreadNormalizeTable(const std::array<float, 3>& mean,
                                                                const std::array<float, 3>& std) {
  struct Cached {
    bool built = false;
    std::array<float, 3> mean{}, std{};
    transforms_internal::NormalizeTable table;
  };
  thread_local Cached cached;
  if (!cached.built || std::memcmp(cached.mean.data(), mean.data(), sizeof mean) != 0 ||
      std::memcmp(cached.std.data(), std.data(), sizeof std) != 0) {
    for (int k = 0; k < 3; ++k) {
      for (int v = 0; v < 256; ++v) cached.table.value[k][v] = (v / 255.0f - mean[k]) / std[k];
    }
    BuildTableBytes(&cached.table);
    cached.mean = mean;
    cached.std = std;
    cached.built = true;
  }
  return cached.table;
}

// Writes the table's values of `n` RGB pixels to planes[k][at, at + n): the pixels from
// src on, or (mirror) backwards from just before src. `simd`: the AVX-512 VBMI loop takes
// runs of at least 64 pixels, the portable loop shorter ones.
void NormalizeRun(const transforms_internal::NormalizeTable& table, bool simd,
                  const uint8_t* src, size_t n, float* const planes[3], size_t at,
                  bool mirror) {
  float* r = planes[0] + at;
  float* g = planes[1] + at;
  float* b = planes[2] + at;
  size_t i = 0;
#ifdef IMGPIPE_NORMALIZE_SIMD
  if (simd) i = transforms_internal::NormalizeBlocksAvx512Vbmi(src, n, table, r, g, b, mirror);
#else
  (void)simd;
#endif
  const ptrdiff_t step = mirror ? -3 : 3;
  const uint8_t* p = mirror ? src - 3 * (i + 1) : src + 3 * i;
  for (; i < n; ++i, p += step) {
    r[i] = table.value[0][p[0]];
    g[i] = table.value[1][p[1]];
    b[i] = table.value[2][p[2]];
  }
}

}  // namespace

CropWindow SampleRandomResizedCrop(int width, int height, SplitMix64& random, double scale_min,
                                   double scale_max, double ratio_min, double ratio_max) {
  if (width < 1 || height < 1 || !(scale_min > 0 && scale_min <= scale_max) ||
      !(ratio_min > 0 && ratio_min <= ratio_max)) {
    throw Error("SampleRandomResizedCrop: bad arguments: " + std::to_string(width) + "x" +
                std::to_string(height) + ", scale [" + std::to_string(scale_min) + ", " +
                std::to_string(scale_max) + "], ratio [" + std::to_string(ratio_min) + ", " +
                std::to_string(ratio_max) + "]");
  }
  // 1. Up to 10 tries: an area fraction and a log-uniform aspect ratio.
  const double area = static_cast<double>(width) * height;
  const double log_ratio_min = std::log(ratio_min), log_ratio_max = std::log(ratio_max);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target_area = area * random.Uniform(scale_min, scale_max);
    const double aspect_ratio = std::exp(random.Uniform(log_ratio_min, log_ratio_max));
    const int w = PyRound(std::sqrt(target_area * aspect_ratio));
    const int h = PyRound(std::sqrt(target_area / aspect_ratio));
    if (0 < w && w <= width && 0 < h && h <= height) {
      // torchvision draws the top row first, then the left column.
      const int y = static_cast<int>(random.Below(static_cast<uint64_t>(height - h + 1)));
      const int x = static_cast<int>(random.Below(static_cast<uint64_t>(width - w + 1)));
      return {x, y, w, h};
    }
  }
  // 2. Fallback: the largest centred window whose ratio is clamped into range.
  const double in_ratio = static_cast<double>(width) / height;
  int w = width, h = height;
  if (in_ratio < ratio_min) {
    h = std::clamp(PyRound(w / ratio_min), 1, height);
  } else if (in_ratio > ratio_max) {
    w = std::clamp(PyRound(h * ratio_max), 1, width);
  }
  return {(width - w) / 2, (height - h) / 2, w, h};
}

CropWindow CenterCropWindow(int width, int height, int resize_size, int crop_size) {
  if (width < 1 || height < 1 || resize_size < 1 || crop_size < 1) {
    throw Error("CenterCropWindow: bad arguments: " + std::to_string(width) + "x" +
                std::to_string(height) + ", resize " + std::to_string(resize_size) +
                ", crop " + std::to_string(crop_size));
  }
  // The crop's side in the original image: crop_size resized pixels, at resize_size
  // per shorter side; at most the shorter side (torchvision would pad).
  const int shorter = std::min(width, height);
  const int side = std::clamp(
      PyRound(static_cast<double>(crop_size) * shorter / resize_size), 1, shorter);
  return {PyRound((width - side) / 2.0), PyRound((height - side) / 2.0), side, side};
}

ResizeCrop CenterResizeCrop(int width, int height, int resize_size, int crop_size) {
  CenterCropWindow(width, height, resize_size, crop_size);  // checks the arguments
  // 1. torchvision's Resize(resize_size): the shorter side to resize_size, the longer
  //    in proportion, truncated.
  const bool wide = width > height;
  const int shorter = wide ? height : width, longer = wide ? width : height;
  const int resized_long = static_cast<int>(static_cast<double>(resize_size) * longer / shorter);
  ResizeCrop rc;
  rc.full_width = width;
  rc.full_height = height;
  rc.resized_width = wide ? resized_long : resize_size;
  rc.resized_height = wide ? resize_size : resized_long;
  // 2. CenterCrop(crop_size) there.
  rc.crop_width = std::min(crop_size, rc.resized_width);
  rc.crop_height = std::min(crop_size, rc.resized_height);
  rc.crop_x = PyRound((rc.resized_width - rc.crop_width) / 2.0);
  rc.crop_y = PyRound((rc.resized_height - rc.crop_height) / 2.0);
  return rc;
}

PixelBox CenterCropBox(int width, int height, int resize_size, int crop_size) {
  const ResizeCrop rc = CenterResizeCrop(width, height, resize_size, crop_size);
  // The crop mapped back to the original image.
  const double sx = static_cast<double>(width) / rc.resized_width;
  const double sy = static_cast<double>(height) / rc.resized_height;
  return {rc.crop_x * sx, rc.crop_y * sy, (rc.crop_x + rc.crop_width) * sx,
          (rc.crop_y + rc.crop_height) * sy};
}

void HorizontalFlip(Image* image) {
  const int c = image->channels;
  for (int y = 0; y < image->height; ++y) {
    uint8_t* left = image->row(y);
    uint8_t* right = left + static_cast<size_t>(image->width - 1) * c;
    for (; left < right; left += c, right -= c) std::swap_ranges(left, left + c, right);
  }
}

void ColorJitter(Image* image, const ColorJitterOptions& options, SplitMix64& random) {
  // 1. torchvision's order of draws: a permutation of the components, then each
  //    enabled component's factor in [max(0, 1 - v), 1 + v].
  int order[3] = {0, 1, 2};
  for (int i = 2; i > 0; --i) std::swap(order[i], order[random.Below(i + 1)]);
  const float settings[3] = {options.brightness, options.contrast, options.saturation};
  float factors[3] = {1, 1, 1};
  for (int k = 0; k < 3; ++k) {
    if (settings[k] > 0) {
      factors[k] = static_cast<float>(
          random.Uniform(std::max(0.0, 1.0 - settings[k]), 1.0 + settings[k]));
    }
  }
  // 2. Apply them in that order.
  for (int k : order) {
    if (settings[k] <= 0) continue;
    switch (k) {
      case 0: AdjustBrightness(image, factors[k]); break;
      case 1: AdjustContrast(image, factors[k]); break;
      case 2: AdjustSaturation(image, factors[k]); break;
    }
  }
}

bool NormalizeKernelAvailable(NormalizeKernel kernel) {
#ifdef IMGPIPE_NORMALIZE_SIMD
  static const bool vbmi = (__builtin_cpu_init(), __builtin_cpu_supports("avx512bw") &&
                                                      __builtin_cpu_supports("avx512vbmi"));
  if (kernel == NormalizeKernel::kAvx512Vbmi) return vbmi;
#endif
  return kernel == NormalizeKernel::kPortable;
}

void NormalizeToChwWith(NormalizeKernel kernel, const Image& image,
                        const std::array<float, 3>& mean, const std::array<float, 3>& std,
                        float* out, bool mirror) {
  const int c = image.channels;
  if (c != 3) {
    throw Error("NormalizeToChw: needs 3 channels, not " + std::to_string(c));
  }
  if (!NormalizeKernelAvailable(kernel)) {
    throw Error(std::string("NormalizeToChw: this CPU cannot run the ") +
                NormalizeKernelName(kernel) + " kernel");
  }
  // 1. The table, and which loop reads it.
  const transforms_internal::NormalizeTable& table = ThreadNormalizeTable(mean, std);
  const bool simd = kernel != NormalizeKernel::kPortable;
  // 2. The planes: the whole image as one run of pixels, else (mirrored) row by row.
  const size_t width = static_cast<size_t>(image.width);
  const size_t plane = width * image.height;
  float* planes[3] = {out, out + plane, out + 2 * plane};
  if (!mirror) {
    NormalizeRun(table, simd, image.pixels.data(), plane, planes, 0, false);
  } else {
    for (int y = 0; y < image.height; ++y) {
      const uint8_t* end = image.row(y) + width * 3;  // just past the row's last pixel
      NormalizeRun(table, simd, end, width, planes, static_cast<size_t>(y) * width, true);
    }
  }
#ifdef IMGPIPE_NORMALIZE_SIMD
  // 3. The SIMD loop's streamed stores, ordered before whatever hands the planes on.
  if (simd) _mm_sfence();
#endif
}

void NormalizeToChw(const Image& image, const std::array<float, 3>& mean,
                    const std::array<float, 3>& std, float* out, bool mirror) {
  static const NormalizeKernel best = NormalizeKernelAvailable(NormalizeKernel::kAvx512Vbmi)
                                          ? NormalizeKernel::kAvx512Vbmi
                                          : NormalizeKernel::kPortable;
  NormalizeToChwWith(best, image, mean, std, out, mirror);
}

const char* NormalizeKernelName(NormalizeKernel kernel) {
  return kernel == NormalizeKernel::kAvx512Vbmi ? "avx512vbmi" : "portable";
}

void CopyPixels(const Image& image, uint8_t* out, bool mirror) {
  if (!mirror) {
    std::memcpy(out, image.pixels.data(), image.pixels.size());
    return;
  }
  const int c = image.channels;
  const size_t row_bytes = image.row_bytes();
  for (int y = 0; y < image.height; ++y) {
    const uint8_t* p = image.row(y) + row_bytes - c;  // the row's last pixel
    uint8_t* o = out + static_cast<size_t>(y) * row_bytes;
    for (int x = 0; x < image.width; ++x, p -= c, o += c) std::memcpy(o, p, c);
  }
}

}  // namespace imgpipe
