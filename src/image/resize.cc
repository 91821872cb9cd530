#include "image/resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#endif

#include "util/error.h"

namespace imgpipe {
namespace {

// Pillow's fixed point for 8-bit images (Resample.c): weights scaled by 2^22, so that
// 255 * the sum of a row of weights, plus rounding, fits in an int32.
constexpr int kPrecisionBits = 32 - 8 - 2;
constexpr int32_t kHalf = 1 << (kPrecisionBits - 1);
constexpr double kTriangleSupport = 1.0;

double Triangle(double x) {
  x = std::fabs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

// The weights of one pass: output pixel i reads count[i] input pixels from first[i],
// weighted by weights[i * taps ...].
struct Coefficients {
  int taps = 0;
  std::vector<int> first;
  std::vector<int> count;
  std::vector<int32_t> weights;
};

// Pillow's precompute_coeffs + normalize_coeffs_8bpc for the triangle filter: output
// pixel i is centred at in0 + (i + 0.5) * scale, and the filter widens by the scale when
// shrinking (the antialiasing).
Coefficients Precompute(int in_size, double in0, double in1, int out_size) {
  const double scale = (in1 - in0) / out_size;
  const double filter_scale = std::max(scale, 1.0);
  const double support = kTriangleSupport * filter_scale;
  Coefficients k;
  k.taps = static_cast<int>(std::ceil(support)) * 2 + 1;
  k.first.resize(out_size);
  k.count.resize(out_size);
  k.weights.assign(static_cast<size_t>(out_size) * k.taps, 0);
  const double inverse_scale = 1.0 / filter_scale;  // multiplied, as Pillow, for equal bits
  std::vector<double> w(k.taps);
  for (int i = 0; i < out_size; ++i) {
    const double center = in0 + (i + 0.5) * scale;
    // Truncation as in C, then clamped: Pillow's "round the value".
    const int xmin = std::max(static_cast<int>(center - support + 0.5), 0);
    const int xmax = std::min(static_cast<int>(center + support + 0.5), in_size) - xmin;
    double sum = 0;
    for (int x = 0; x < xmax; ++x) {
      w[x] = Triangle((x + xmin - center + 0.5) * inverse_scale);
      sum += w[x];
    }
    int32_t* out = &k.weights[static_cast<size_t>(i) * k.taps];
    for (int x = 0; x < xmax; ++x) {
      const double v = (sum != 0.0 ? w[x] / sum : w[x]) * (1 << kPrecisionBits);
      out[x] = static_cast<int32_t>(v < 0 ? v - 0.5 : v + 0.5);
    }
    k.first[i] = xmin;
    k.count[i] = std::max(xmax, 0);
  }
  return k;
}

inline uint8_t Clip8(int32_t v) {
  v >>= kPrecisionBits;
  return static_cast<uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v);
}

// The vertical pass gets an AVX2 clone besides the baseline one, picked at load time
// (GCC's function multi-versioning): its 32-bit multiplies are native there. Not under
// ThreadSanitizer: the clone's resolver runs while the program is being loaded, before
// TSan's runtime is up, and its instrumentation crashes there.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
#define IMGPIPE_AVX2_CLONE __attribute__((target_clones("avx2", "default")))
#else
#define IMGPIPE_AVX2_CLONE
#endif

// Horizontal pass over `rows` rows; C channels known at compile time so that the inner
// loops unroll.
template <int C>
void ResampleRows(const uint8_t* src, size_t src_stride, int rows, const Coefficients& k,
                  uint8_t* dst, size_t dst_stride, int out_width) {
  for (int r = 0; r < rows; ++r) {
    const uint8_t* in = src + r * src_stride;
    uint8_t* out = dst + r * dst_stride;
    for (int i = 0; i < out_width; ++i) {
      const int32_t* w = &k.weights[static_cast<size_t>(i) * k.taps];
      const uint8_t* p = in + static_cast<size_t>(k.first[i]) * C;
      const int n = k.count[i];
      int32_t acc[C];
      for (int c = 0; c < C; ++c) acc[c] = kHalf;
      for (int t = 0; t < n; ++t) {
        for (int c = 0; c < C; ++c) acc[c] += p[t * C + c] * w[t];
      }
      for (int c = 0; c < C; ++c) out[i * C + c] = Clip8(acc[c]);
    }
  }
}

// Output pixels [0, end) of a horizontal pass whose taps end before the row's last
// pixel, so that reading 4 bytes at each 3-byte RGB tap stays within the row.
int FourByteReadsEnd(const Coefficients& k, int in_width, int out_width) {
  int end = 0;
  while (end < out_width && k.first[end] + k.count[end] < in_width) ++end;
  return end;
}

#if defined(__GNUC__) && defined(__x86_64__)
// The horizontal pass for RGB with AVX2, one pixel per 4 x 32-bit vector (its 4th
// lane, the next pixel's red, is computed and dropped); pixels [end, out_width) are
// left to the caller.
__attribute__((target("avx2"))) void ResampleRowsRgbAvx2(const uint8_t* src, size_t src_stride,
                                                         int rows, const Coefficients& k,
                                                         uint8_t* dst, size_t dst_stride,
                                                         int end) {
  const __m128i half = _mm_set1_epi32(kHalf);
  for (int r = 0; r < rows; ++r) {
    const uint8_t* in = src + r * src_stride;
    uint8_t* out = dst + r * dst_stride;
    for (int i = 0; i < end; ++i) {
      const int32_t* w = &k.weights[static_cast<size_t>(i) * k.taps];
      const uint8_t* p = in + static_cast<size_t>(k.first[i]) * 3;
      __m128i acc = half;
      for (int t = 0; t < k.count[i]; ++t) {
        int32_t four;
        std::memcpy(&four, p + 3 * t, sizeof four);
        const __m128i pixel = _mm_cvtepu8_epi32(_mm_cvtsi32_si128(four));
        acc = _mm_add_epi32(acc, _mm_mullo_epi32(pixel, _mm_set1_epi32(w[t])));
      }
      // >> 22, then saturate to 0..255 (Clip8) through 16 bits.
      acc = _mm_srai_epi32(acc, kPrecisionBits);
      const __m128i bytes = _mm_packus_epi16(_mm_packs_epi32(acc, acc), acc);
      const int32_t rgbx = _mm_cvtsi128_si32(bytes);
      std::memcpy(out + 3 * i, &rgbx, 3);
    }
  }
}
#endif

// The horizontal pass for RGB: the AVX2 loop where the CPU has it, then the portable
// one for the rest.
void ResampleRowsRgb(const uint8_t* src, size_t src_stride, int rows, int in_width,
                     const Coefficients& k, uint8_t* dst, size_t dst_stride, int out_width) {
  int done = 0;
#if defined(__GNUC__) && defined(__x86_64__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) {
    done = FourByteReadsEnd(k, in_width, out_width);
    ResampleRowsRgbAvx2(src, src_stride, rows, k, dst, dst_stride, done);
  }
#endif
  if (done == out_width) return;
  Coefficients rest;
  rest.taps = k.taps;
  rest.first.assign(k.first.begin() + done, k.first.end());
  rest.count.assign(k.count.begin() + done, k.count.end());
  rest.weights.assign(k.weights.begin() + static_cast<size_t>(done) * k.taps, k.weights.end());
  ResampleRows<3>(src, src_stride, rows, rest, dst + 3 * done, dst_stride, out_width - done);
}

// Vertical pass: each output row is a weighted sum of whole input rows, so the inner
// loop runs over contiguous bytes (vectorised by the compiler).
IMGPIPE_AVX2_CLONE
void ResampleColumns(const uint8_t* src, size_t src_stride, const Coefficients& k,
                     uint8_t* dst, size_t dst_stride, int out_height, size_t row_bytes) {
  thread_local std::vector<int32_t> acc_buffer;
  acc_buffer.resize(row_bytes);
  int32_t* acc = acc_buffer.data();
  for (int i = 0; i < out_height; ++i) {
    const int32_t* w = &k.weights[static_cast<size_t>(i) * k.taps];
    const uint8_t* first = src + static_cast<size_t>(k.first[i]) * src_stride;
    for (size_t b = 0; b < row_bytes; ++b) acc[b] = kHalf;
    for (int t = 0; t < k.count[i]; ++t) {
      const uint8_t* in = first + t * src_stride;
      const int32_t weight = w[t];
      for (size_t b = 0; b < row_bytes; ++b) acc[b] += in[b] * weight;
    }
    uint8_t* out = dst + i * dst_stride;
    for (size_t b = 0; b < row_bytes; ++b) out[b] = Clip8(acc[b]);
  }
}

void ResampleRowsFor(int channels, const uint8_t* src, size_t src_stride, int rows,
                     int in_width, const Coefficients& k, uint8_t* dst, size_t dst_stride,
                     int out_width) {
  switch (channels) {
    case 1: return ResampleRows<1>(src, src_stride, rows, k, dst, dst_stride, out_width);
    case 2: return ResampleRows<2>(src, src_stride, rows, k, dst, dst_stride, out_width);
    case 3:
      return ResampleRowsRgb(src, src_stride, rows, in_width, k, dst, dst_stride, out_width);
    case 4: return ResampleRows<4>(src, src_stride, rows, k, dst, dst_stride, out_width);
  }
}

// A pass is the identity (and skipped) when it maps whole pixels one to one.
bool IsIdentity(double in0, double in1, int out_size) {
  return in1 - in0 == out_size && in0 == std::floor(in0);
}

}  // namespace

void ResizeInto(const uint8_t* src, int src_width, int src_height, size_t src_stride,
                int channels, const PixelBox& box, uint8_t* dst, int width, int height,
                size_t dst_stride) {
  // 1. Check the arguments: a bad call is a programming error, not bad data.
  if (channels < 1 || channels > 4 || src_width < 1 || src_height < 1 || width < 1 ||
      height < 1 || !(box.x0 >= 0 && box.y0 >= 0 && box.x1 <= src_width &&
                      box.y1 <= src_height && box.x0 < box.x1 && box.y0 < box.y1)) {
    throw Error("Resize: cannot resize box (" + std::to_string(box.x0) + ", " +
                std::to_string(box.y0) + ")-(" + std::to_string(box.x1) + ", " +
                std::to_string(box.y1) + ") of a " + std::to_string(src_width) + "x" +
                std::to_string(src_height) + "x" + std::to_string(channels) + " image to " +
                std::to_string(width) + "x" + std::to_string(height));
  }
  const size_t out_row_bytes = static_cast<size_t>(width) * channels;
  const bool horizontal = !IsIdentity(box.x0, box.x1, width);
  const bool vertical = !IsIdentity(box.y0, box.y1, height);
  const uint8_t* src_x0 = src + static_cast<size_t>(box.x0) * channels;  // when !horizontal

  // 2. Only vertical, or neither: rows of the source, at the box's first column.
  if (!horizontal) {
    if (vertical) {
      Coefficients kv = Precompute(src_height, box.y0, box.y1, height);
      ResampleColumns(src_x0, src_stride, kv, dst, dst_stride, height, out_row_bytes);
    } else {
      for (int y = 0; y < height; ++y) {
        std::copy_n(src_x0 + (static_cast<size_t>(box.y0) + y) * src_stride, out_row_bytes,
                    dst + y * dst_stride);
      }
    }
    return;
  }
  Coefficients kh = Precompute(src_width, box.x0, box.x1, width);
  // 3. Only horizontal: straight into dst.
  if (!vertical) {
    ResampleRowsFor(channels, src + static_cast<size_t>(box.y0) * src_stride, src_stride,
                    height, src_width, kh, dst, dst_stride, width);
    return;
  }
  // 4. Both: the horizontal pass over the rows the vertical pass reads, into a buffer
  //    reused by the thread, then the vertical pass.
  Coefficients kv = Precompute(src_height, box.y0, box.y1, height);
  const int first_row = kv.first.front();
  const int last_row = kv.first.back() + kv.count.back();
  for (int& f : kv.first) f -= first_row;
  thread_local std::vector<uint8_t> temp;
  temp.resize(static_cast<size_t>(last_row - first_row) * out_row_bytes);
  ResampleRowsFor(channels, src + static_cast<size_t>(first_row) * src_stride, src_stride,
                  last_row - first_row, src_width, kh, temp.data(), out_row_bytes, width);
  ResampleColumns(temp.data(), out_row_bytes, kv, dst, dst_stride, height, out_row_bytes);
}

void ResizeInto(const uint8_t* src, int src_width, int src_height, size_t src_stride,
                int channels, uint8_t* dst, int width, int height, size_t dst_stride) {
  ResizeInto(src, src_width, src_height, src_stride, channels,
             PixelBox{0, 0, static_cast<double>(src_width), static_cast<double>(src_height)},
             dst, width, height, dst_stride);
}

Image Resize(const Image& src, const PixelBox& box, int width, int height) {
  Image out;
  out.width = width;
  out.height = height;
  out.channels = src.channels;
  out.pixels.resize(static_cast<size_t>(std::max(width, 0)) * std::max(height, 0) *
                    std::max(src.channels, 0));
  ResizeInto(src.pixels.data(), src.width, src.height, src.row_bytes(), src.channels, box,
             out.pixels.data(), width, height, out.row_bytes());
  return out;
}

Image Resize(const Image& src, int width, int height) {
  return Resize(src,
                PixelBox{0, 0, static_cast<double>(src.width), static_cast<double>(src.height)},
                width, height);
}

}  // namespace imgpipe
