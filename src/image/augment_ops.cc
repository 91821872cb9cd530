#include "image/augment_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "util/error.h"

namespace imgpipe {
namespace {

// torchvision's names, in AugmentOp's order.
constexpr const char* kOpNames[kAugmentOpCount] = {
    "Identity", "ShearX",    "ShearY", "TranslateX", "TranslateY",   "Rotate",   "Brightness",
    "Color",    "Contrast",  "Sharpness", "Posterize", "Solarize", "AutoContrast", "Equalize",
    "Invert"};

// CPython's math.radians and math.degrees factors.
constexpr double kDegToRad = M_PI / 180.0;
constexpr double kRadToDeg = 180.0 / M_PI;

using Lut = std::array<uint8_t, 256>;
using Histogram = std::array<uint32_t, 256>;

// Throws InvalidArgument unless `image` has 1 or 3 channels.
void CheckChannels(const Image& image, const char* what) {
  if (image.channels != 1 && image.channels != 3) {
    throw InvalidArgument(std::string(what) + ": needs an image of 1 or 3 channels, not " +
                          std::to_string(image.channels));
  }
}

// Checks `src` and gives `out` its size (keeping out's buffer where it is large enough).
// Throws InvalidArgument if `out` is `src`.
void PrepareOut(const Image& src, Image* out, const char* what) {
  CheckChannels(src, what);
  if (out == &src) throw InvalidArgument(std::string(what) + ": the output is the input");
  out->width = src.width;
  out->height = src.height;
  out->channels = src.channels;
  out->pixels.resize(src.pixels.size());
}

// Calls f with std::integral_constant<int, 1> or <int, 3>: loops with the pixel size
// known at compile time.
template <typename F>
void WithChannels(int channels, F f) {
  if (channels == 1) {
    f(std::integral_constant<int, 1>{});
  } else {
    f(std::integral_constant<int, 3>{});
  }
}

// Pillow's clip8: a float sample clamped to [0, 255], then truncated (as a min and a max,
// which vectorise).
uint8_t Clip8(float v) { return static_cast<uint8_t>(std::min(std::max(v, 0.0f), 255.0f)); }

// Pillow's ImagingBlend(degenerate, image, alpha) for one sample: in float32,
// degenerate + alpha * (image - degenerate), through Clip8. `alpha` is the factor as
// Pillow receives it, a C float; the samples are integers held as float (their
// difference is then exact, as Pillow's int-to-float is).
uint8_t Blend(float alpha, float degenerate, float value) {
  return Clip8(degenerate + alpha * (value - degenerate));
}

// Every sample of channel k through luts[k].
void ApplyLuts(Image* image, const std::array<Lut, 3>& luts) {
  if (image->channels == 1) {
    for (uint8_t& v : image->pixels) v = luts[0][v];
    return;
  }
  uint8_t* p = image->pixels.data();
  uint8_t* const end = p + image->pixels.size();
  for (; p < end; p += 3) {
    p[0] = luts[0][p[0]];
    p[1] = luts[1][p[1]];
    p[2] = luts[2][p[2]];
  }
}

// Every sample through `lut`.
void ApplyLut(Image* image, const Lut& lut) { ApplyLuts(image, {lut, lut, lut}); }

// The table of Blend(factor, degenerate, v) for every v: a blend with a constant image.
Lut BlendLut(double factor, int degenerate) {
  const float alpha = static_cast<float>(factor);
  Lut lut;
  for (int v = 0; v < 256; ++v) lut[v] = Blend(alpha, static_cast<float>(degenerate), static_cast<float>(v));
  return lut;
}

// The histogram of each channel (Pillow's Image.histogram, split by band).
std::array<Histogram, 3> Histograms(const Image& image) {
  std::array<Histogram, 3> h{};
  const uint8_t* p = image.pixels.data();
  const uint8_t* const end = p + image.pixels.size();
  if (image.channels == 1) {
    for (; p < end; ++p) ++h[0][*p];
    return h;
  }
  for (; p < end; p += 3) {
    ++h[0][p[0]];
    ++h[1][p[1]];
    ++h[2][p[2]];
  }
  return h;
}

// ImageOps' per-band tables: checks the image, then runs each channel through the table
// make(histogram of the channel) builds.
template <typename MakeLut>
void ApplyHistogramLuts(Image* image, const char* what, MakeLut make) {
  CheckChannels(*image, what);
  const std::array<Histogram, 3> hist = Histograms(*image);
  std::array<Lut, 3> luts;
  for (int k = 0; k < image->channels; ++k) luts[k] = make(hist[k]);
  ApplyLuts(image, luts);
}

// Pillow's "RGB" to "L": (19595 R + 38470 G + 7471 B + 0x8000) >> 16.
int Luma(const uint8_t* p) { return (p[0] * 19595 + p[1] * 38470 + p[2] * 7471 + 0x8000) >> 16; }

// The row kernels below are compiled for AVX2 as well as the baseline, the copy chosen
// at load time by an ifunc resolver. Not under ThreadSanitizer: its instrumented
// resolver runs before the TSan runtime starts and crashes the program at load.
#if defined(__SANITIZE_THREAD__)
#define IMGPIPE_AVX2_CLONES
#else
#define IMGPIPE_AVX2_CLONES __attribute__((target_clones("avx2", "default")))
#endif

// Blend(alpha, degenerate[i], row[i]) into row[i] for i < n.
IMGPIPE_AVX2_CLONES void BlendRow(const float* degenerate, float alpha, size_t n,
                                  uint8_t* row) {
  for (size_t i = 0; i < n; ++i) row[i] = Blend(alpha, degenerate[i], static_cast<float>(row[i]));
}

// One row of EnhanceSharpness inside the border, samples [c, n - c): ImagingFilter3x3's
// sum of 0.5, the row below's and the row above's outer sums (`down`, `up`) and the
// centre row's (`mid`, as float) through Clip8, blended with the pixel by `alpha` into
// `out`. No FMA in the AVX2 copy, so the same float results.
IMGPIPE_AVX2_CLONES void SharpenRow(const float* up, const float* mid, const float* down,
                                    size_t c, size_t n, float alpha, uint8_t* out) {
  const float k1 = 1.0f / 13.0f, k5 = 5.0f / 13.0f;
  for (size_t i = c; i < n - c; ++i) {
    const float centre = mid[i - c] * k1 + mid[i] * k5 + mid[i + c] * k1;
    const float smooth = static_cast<float>(Clip8((0.5f + down[i]) + centre + up[i]));
    out[i] = Blend(alpha, smooth, mid[i]);
  }
}

// Python's float % (CPython's float_rem): the result takes the sign of the divisor.
double PyFloatMod(double x, double m) {
  double mod = std::fmod(x, m);
  if (mod != 0) {
    if ((m < 0) != (mod < 0)) mod += m;
  } else {
    mod = std::copysign(0.0, m);
  }
  return mod;
}

// Python's round(v, 15): the correctly rounded 15-decimal string, read back.
double PyRound15(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%.15f", v);
  return std::strtod(text, nullptr);
}

// Pillow's COORD: the pixel index of a position, -1 left of 0; saturated at INT_MAX (far
// outside any image) where Pillow's cast would overflow.
int Coord(double v) {
  if (!(v >= 0.0)) return -1;
  return v >= 2147483647.0 ? 2147483647 : static_cast<int>(v);
}

// Writes C copies of the fill's samples.
template <int C>
void FillPixels(uint8_t* out, int count, const AugmentFill& fill) {
  for (int i = 0; i < count; ++i, out += C) std::memcpy(out, fill.data(), C);
}

// Pillow's ImagingScaleAffine, NEAREST (a matrix without rotation or shear): the input
// column of each output column tabulated once, then whole rows.
template <int C>
void ScaleAffine(const Image& src, const std::array<double, 6>& a, const AugmentFill& fill,
                 Image* out) {
  const int w = src.width, h = src.height;
  // 1. Input columns, and the span [xmin, xmax) of output columns that have one.
  std::vector<int> xin(static_cast<size_t>(w), 0);
  int xmin = w, xmax = 0;
  double xo = a[2] + a[0] * 0.5;
  for (int x = 0; x < w; ++x, xo += a[0]) {
    const int col = Coord(xo);
    if (col >= 0 && col < w) {
      xmax = x + 1;
      xmin = std::min(xmin, x);
      xin[x] = col;
    }
  }
  // 2. Rows: the input row's pixels in the span, the fill elsewhere.
  double yo = a[5] + a[4] * 0.5;
  for (int y = 0; y < h; ++y, yo += a[4]) {
    const int row = Coord(yo);
    uint8_t* o = out->row(y);
    if (row < 0 || row >= h || xmin >= xmax) {
      FillPixels<C>(o, w, fill);
      continue;
    }
    const uint8_t* in = src.row(row);
    FillPixels<C>(o, xmin, fill);
    for (int x = xmin; x < xmax; ++x) std::memcpy(o + x * C, in + xin[x] * C, C);
    FillPixels<C>(o + xmax * C, w - xmax, fill);
  }
}

// Pillow's affine loops, NEAREST: along each output row the input position steps by
// (a0, a3), from row to row by (a1, a4); `index` turns a position into a pixel index
// (>> 16 in 16.16 fixed point, COORD for doubles). Pixels outside the input take the fill.
template <int C, typename T, typename Index>
void AffineRows(const Image& src, T xo, T yo, T a0, T a1, T a3, T a4, Index index,
                const AugmentFill& fill, Image* out) {
  const int w = src.width, h = src.height;
  for (int y = 0; y < h; ++y, xo += a1, yo += a4) {
    T xx = xo, yy = yo;
    uint8_t* o = out->row(y);
    for (int x = 0; x < w; ++x, xx += a0, yy += a3, o += C) {
      const int col = index(xx);
      const int row = index(yy);
      const bool inside = col >= 0 && col < w && row >= 0 && row < h;
      std::memcpy(o, inside ? src.row(row) + col * C : fill.data(), C);
    }
  }
}

// Pillow's check_fixed on the four corners: whether 16.16 fixed point holds every
// position the matrix maps the output to.
bool FitsFixedPoint(const std::array<double, 6>& a, int w, int h) {
  for (auto [x, y] : {std::pair{0, 0}, {w, h}, {0, h}, {w, 0}}) {
    if (!(std::fabs(x * a[0] + y * a[1] + a[2]) < 32768.0 &&
          std::fabs(x * a[3] + y * a[4] + a[5]) < 32768.0)) {
      return false;
    }
  }
  return true;
}

// Pillow's FIX: a double in 16.16 fixed point, rounded half up.
int Fix16(double v) {
  const double x = v * 65536.0 + 0.5;
  return x < 0.0 ? static_cast<int>(std::floor(x)) : static_cast<int>(x);
}

// Pillow's ImagingTransformAffine with NEAREST, past the scaling case: 16.16 fixed point
// where it holds the positions (affine_fixed), else doubles.
template <int C>
void GeneralAffine(const Image& src, const std::array<double, 6>& a, const AugmentFill& fill,
                   Image* out) {
  const double xo = a[2] + a[1] * 0.5 + a[0] * 0.5;
  const double yo = a[5] + a[4] * 0.5 + a[3] * 0.5;
  if (FitsFixedPoint(a, src.width, src.height)) {
    AffineRows<C>(src, Fix16(xo), Fix16(yo), Fix16(a[0]), Fix16(a[1]), Fix16(a[3]),
                  Fix16(a[4]), [](int v) { return v >> 16; }, fill, out);
  } else {
    AffineRows<C>(src, xo, yo, a[0], a[1], a[3], a[4], Coord, fill, out);
  }
}

// Pillow's Image.transpose(ROTATE_90, ROTATE_180 or ROTATE_270) for turns 1, 2, 3
// (counter-clockwise quarter turns): out's width and height swap on odd turns.
template <int C>
void QuarterTurns(const Image& src, int turns, Image* out) {
  const int w = src.width, h = src.height;
  if (turns % 2 == 1) std::swap(out->width, out->height);
  for (int y = 0; y < out->height; ++y) {
    uint8_t* o = out->row(y);
    for (int x = 0; x < out->width; ++x, o += C) {
      const int sx = turns == 1 ? w - 1 - y : turns == 2 ? w - 1 - x : y;
      const int sy = turns == 1 ? x : turns == 2 ? h - 1 - y : h - 1 - x;
      std::memcpy(o, src.row(sy) + sx * C, C);
    }
  }
}

// Runs op(image, &scratch) into the thread's scratch image, then swaps the two: the image
// holds the result and the scratch its old buffer, reused by the next call.
template <typename Op>
void ThroughScratch(Image* image, Op op) {
  thread_local Image scratch;
  op(*image, &scratch);
  std::swap(*image, scratch);
}

}  // namespace

const char* AugmentOpName(AugmentOp op) { return kOpNames[static_cast<int>(op)]; }

bool IsGeometricAugmentOp(AugmentOp op) {
  return op == AugmentOp::kShearX || op == AugmentOp::kShearY || op == AugmentOp::kTranslateX ||
         op == AugmentOp::kTranslateY || op == AugmentOp::kRotate;
}

AugmentOp ParseAugmentOp(const std::string& name) {
  std::string names;
  for (int i = 0; i < kAugmentOpCount; ++i) {
    if (name == kOpNames[i]) return static_cast<AugmentOp>(i);
    names += std::string(i == 0 ? "" : ", ") + kOpNames[i];
  }
  throw InvalidArgument("unknown augmentation op '" + name + "': use one of " + names);
}

std::array<double, 6> InverseAffineMatrix(const AffineParams& p) {
  // torchvision's rotation-scale-shear matrix [[a, b], [c, d]], inverted (det 1).
  const double rot = p.angle * kDegToRad;
  const double sx = p.shear_x * kDegToRad;
  const double sy = p.shear_y * kDegToRad;
  const double a = std::cos(rot - sy) / std::cos(sy);
  const double b = -std::cos(rot - sy) * std::tan(sx) / std::cos(sy) - std::sin(rot);
  const double c = std::sin(rot - sy) / std::cos(sy);
  const double d = -std::sin(rot - sy) * std::tan(sx) / std::cos(sy) + std::cos(rot);
  std::array<double, 6> m = {d / p.scale, -b / p.scale, 0.0 / p.scale,
                             -c / p.scale, a / p.scale, 0.0 / p.scale};
  // Then the inverse translation and centre shift, and the centre back.
  const double tx = -p.center_x - p.translate_x, ty = -p.center_y - p.translate_y;
  m[2] += m[0] * tx + m[1] * ty;
  m[5] += m[3] * tx + m[4] * ty;
  m[2] += p.center_x;
  m[5] += p.center_y;
  return m;
}

void TransformAffineNearest(const Image& src, const std::array<double, 6>& matrix,
                            const AugmentFill& fill, Image* out) {
  PrepareOut(src, out, "TransformAffineNearest");
  for (double v : matrix) {
    if (!std::isfinite(v)) {
      throw InvalidArgument("TransformAffineNearest: a matrix entry is not finite");
    }
  }
  WithChannels(src.channels, [&](auto c) {
    if (matrix[1] == 0 && matrix[3] == 0) {
      ScaleAffine<c()>(src, matrix, fill, out);
    } else {
      GeneralAffine<c()>(src, matrix, fill, out);
    }
  });
}

void RotateNearest(const Image& src, double degrees, const AugmentFill& fill, Image* out) {
  PrepareOut(src, out, "RotateNearest");
  // 1. Pillow's fast paths: a copy, or a transpose.
  const double angle = PyFloatMod(degrees, 360.0);
  const bool square = src.width == src.height;
  int turns = -1;  // none: the affine transform
  if (angle == 0) {
    turns = 0;
  } else if (angle == 180) {
    turns = 2;
  } else if (square && (angle == 90 || angle == 270)) {
    turns = angle == 90 ? 1 : 3;
  }
  if (turns == 0) {
    out->pixels = src.pixels;
    return;
  }
  if (turns > 0) {
    WithChannels(src.channels, [&](auto c) { QuarterTurns<c()>(src, turns, out); });
    return;
  }
  // 2. Its matrix: the rotation by -angle (rounded to 15 decimals) about the centre.
  const double r = -(angle * kDegToRad);
  std::array<double, 6> m = {PyRound15(std::cos(r)), PyRound15(std::sin(r)), 0.0,
                             PyRound15(-std::sin(r)), PyRound15(std::cos(r)), 0.0};
  const double cx = src.width / 2.0, cy = src.height / 2.0;
  m[2] = m[0] * -cx + m[1] * -cy + m[2] + cx;
  m[5] = m[3] * -cx + m[4] * -cy + m[5] + cy;
  TransformAffineNearest(src, m, fill, out);
}

void EnhanceBrightness(Image* image, double factor) {
  CheckChannels(*image, "EnhanceBrightness");
  ApplyLut(image, BlendLut(factor, 0));
}

void EnhanceColor(Image* image, double factor) {
  CheckChannels(*image, "EnhanceColor");
  if (image->channels == 1) return;  // its grey is itself
  // Row by row: each sample's grey (its pixel's Luma, as float), then the blends over the
  // row's samples, a loop that vectorises.
  const float alpha = static_cast<float>(factor);
  const size_t n = image->row_bytes();
  std::vector<float> gray(n);
  for (int y = 0; y < image->height; ++y) {
    uint8_t* r = image->row(y);
    for (size_t i = 0; i < n; i += 3) gray[i] = gray[i + 1] = gray[i + 2] = static_cast<float>(Luma(r + i));
    BlendRow(gray.data(), alpha, n, r);
  }
}

void EnhanceContrast(Image* image, double factor) {
  CheckChannels(*image, "EnhanceContrast");
  // 1. ImageStat's mean of the grey image, rounded half up.
  const size_t n = static_cast<size_t>(image->width) * image->height;
  if (n == 0) return;
  uint64_t sum = 0;
  if (image->channels == 1) {
    for (uint8_t v : image->pixels) sum += v;
  } else {
    for (size_t i = 0; i < n; ++i) sum += Luma(&image->pixels[3 * i]);
  }
  const int mean = static_cast<int>(static_cast<double>(sum) / static_cast<double>(n) + 0.5);
  // 2. The blend of that grey and the image.
  ApplyLut(image, BlendLut(factor, mean));
}

void EnhanceSharpness(const Image& src, double factor, Image* out) {
  PrepareOut(src, out, "EnhanceSharpness");
  const int w = src.width, h = src.height, c = src.channels;
  out->pixels = src.pixels;  // the border (and images under 3x3) stays: SMOOTH keeps it
  if (w < 3 || h < 3) return;
  // 1. Pillow's kernel in float32: 1/13 around a centre of 5/13. The rows above and below
  //    weigh alike, so each row's sum with weights 1 1 1 serves both of its neighbours:
  //    sums[0..2] hold those of rows y - 1, y and y + 1, and mid the samples of row y as
  //    float (simple loops over float rows, which vectorise).
  const float k1 = 1.0f / 13.0f;
  const size_t n = src.row_bytes();
  std::vector<float> buffer(5 * n);
  float* sums[3] = {buffer.data(), buffer.data() + n, buffer.data() + 2 * n};
  float* const samples = buffer.data() + 3 * n;  // row y + 1 as float
  float* mid = buffer.data() + 4 * n;            // row y as float
  auto to_float = [&](int y, float* f) {
    const uint8_t* r = src.row(y);
    for (size_t i = 0; i < n; ++i) f[i] = static_cast<float>(r[i]);
  };
  auto outer_sums = [&](const float* f, float* s) {
    for (size_t i = c; i < n - c; ++i) s[i] = f[i - c] * k1 + f[i] * k1 + f[i + c] * k1;
  };
  to_float(0, samples);
  outer_sums(samples, sums[0]);
  to_float(1, mid);
  outer_sums(mid, sums[1]);
  // 2. Inside: ImagingFilter3x3's sum (0.5, then the rows below, at and above), through
  //    Clip8 (a truncation to an integer), then blended with the pixel.
  const float alpha = static_cast<float>(factor);
  for (int y = 1; y < h - 1; ++y) {
    to_float(y + 1, samples);
    outer_sums(samples, sums[2]);
    SharpenRow(sums[0], mid, sums[2], c, n, alpha, out->row(y));
    std::rotate(sums, sums + 1, sums + 3);
    std::copy(samples, samples + n, mid);
  }
}

void Posterize(Image* image, int bits) {
  CheckChannels(*image, "Posterize");
  if (bits < 0 || bits > 8) {
    throw InvalidArgument("Posterize: bits must be in [0, 8], not " + std::to_string(bits));
  }
  const int mask = ~((1 << (8 - bits)) - 1);
  Lut lut;
  for (int i = 0; i < 256; ++i) lut[i] = static_cast<uint8_t>(i & mask);
  ApplyLut(image, lut);
}

void Solarize(Image* image, double threshold) {
  CheckChannels(*image, "Solarize");
  Lut lut;
  for (int i = 0; i < 256; ++i) lut[i] = static_cast<uint8_t>(i < threshold ? i : 255 - i);
  ApplyLut(image, lut);
}

void AutoContrast(Image* image) {
  ApplyHistogramLuts(image, "AutoContrast", [](const Histogram& h) {
    // The lowest and highest values used; a single value (or none) keeps the channel.
    int lo = 0, hi = 255;
    while (lo < 255 && h[lo] == 0) ++lo;
    while (hi > 0 && h[hi] == 0) --hi;
    const double scale = hi > lo ? 255.0 / (hi - lo) : 1.0;
    const double offset = hi > lo ? -lo * scale : 0.0;
    Lut lut;
    for (int ix = 0; ix < 256; ++ix) {
      // Python's int() truncates towards zero; then the clamp.
      const double v = ix * scale + offset;
      lut[ix] = static_cast<uint8_t>(std::clamp(static_cast<int>(v), 0, 255));
    }
    return lut;
  });
}

void Equalize(Image* image) {
  ApplyHistogramLuts(image, "Equalize", [](const Histogram& h) {
    // 1. The step: the pixels but those of the last used value, over 255.
    int64_t total = 0, last = 0, used = 0;
    for (uint32_t count : h) {
      total += count;
      if (count != 0) {
        last = count;
        ++used;
      }
    }
    const int64_t step = used <= 1 ? 0 : (total - last) / 255;
    // 2. Each value goes to (the pixels below it + step / 2) / step, clamped as Pillow's
    //    point() clamps its table; no step: the identity.
    Lut lut;
    int64_t n = step / 2;
    for (int i = 0; i < 256; ++i) {
      lut[i] = step == 0 ? static_cast<uint8_t>(i)
                         : static_cast<uint8_t>(std::min<int64_t>(n / step, 255));
      n += h[i];
    }
    return lut;
  });
}

void Invert(Image* image) {
  CheckChannels(*image, "Invert");
  Lut lut;
  for (int i = 0; i < 256; ++i) lut[i] = static_cast<uint8_t>(255 - i);
  ApplyLut(image, lut);
}

void ApplyAugmentOp(Image* image, AugmentOp op, double magnitude, const AugmentFill& fill) {
  CheckChannels(*image, "ApplyAugmentOp");
  if (!std::isfinite(magnitude)) {
    throw InvalidArgument(std::string("ApplyAugmentOp: ") + AugmentOpName(op) +
                          " magnitude is not finite");
  }
  AffineParams affine;
  switch (op) {
    case AugmentOp::kIdentity:
      return;
    case AugmentOp::kShearX:
    case AugmentOp::kShearY:
      // math.degrees(math.atan(magnitude)) about (0, 0).
      (op == AugmentOp::kShearX ? affine.shear_x : affine.shear_y) =
          std::atan(magnitude) * kRadToDeg;
      break;
    case AugmentOp::kTranslateX:
    case AugmentOp::kTranslateY:
      // int(magnitude) pixels, through an affine about the centre (torchvision's PIL path).
      affine.center_x = image->width * 0.5;
      affine.center_y = image->height * 0.5;
      (op == AugmentOp::kTranslateX ? affine.translate_x : affine.translate_y) =
          std::trunc(std::clamp(magnitude, -1e9, 1e9));
      break;
    case AugmentOp::kRotate:
      return ThroughScratch(image, [&](const Image& src, Image* out) {
        RotateNearest(src, magnitude, fill, out);
      });
    case AugmentOp::kBrightness: return EnhanceBrightness(image, 1.0 + magnitude);
    case AugmentOp::kColor: return EnhanceColor(image, 1.0 + magnitude);
    case AugmentOp::kContrast: return EnhanceContrast(image, 1.0 + magnitude);
    case AugmentOp::kSharpness:
      return ThroughScratch(image, [&](const Image& src, Image* out) {
        EnhanceSharpness(src, 1.0 + magnitude, out);
      });
    case AugmentOp::kPosterize:
      return Posterize(image, static_cast<int>(std::clamp(magnitude, -1.0, 9.0)));
    case AugmentOp::kSolarize: return Solarize(image, magnitude);
    case AugmentOp::kAutoContrast: return AutoContrast(image);
    case AugmentOp::kEqualize: return Equalize(image);
    case AugmentOp::kInvert: return Invert(image);
  }
  // The shears and translations: one affine transform.
  const std::array<double, 6> matrix = InverseAffineMatrix(affine);
  ThroughScratch(image, [&](const Image& src, Image* out) {
    TransformAffineNearest(src, matrix, fill, out);
  });
}

}  // namespace imgpipe
