#include "image/resize_coefficients.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace imgpipe::resize_internal {
namespace {

constexpr double kTriangleSupport = 1.0;

double Triangle(double x) {
  x = std::fabs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

// Pillow's precompute_coeffs + normalize_coeffs_8bpc for the triangle filter: output
// pixel i is centred at in0 + (i + 0.5) * scale, and the filter widens by the scale when
// shrinking (the antialiasing). Fills taps, first, count and weights.
void PrecomputeWeights(int in_size, double in0, double in1, int out_size, Coefficients& k) {
  const double scale = (in1 - in0) / out_size;
  const double filter_scale = std::max(scale, 1.0);
  const double support = kTriangleSupport * filter_scale;
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
}

// The hi and lo 16-bit halves of a weight (see kSplitBits).
int16_t Hi(int32_t w) { return static_cast<int16_t>(w >> kSplitBits); }
int16_t Lo(int32_t w) { return static_cast<int16_t>(w & kLoMask); }

// The layout `packed` of `k`'s weights (resize_kernels.h); weights past `taps` count as 0.
std::vector<int16_t> PackRowGroups(const Coefficients& k) {
  const size_t out_size = k.first.size();
  std::vector<int16_t> packed(out_size * k.groups * kGroupInt16, 0);
  for (size_t i = 0; i < out_size; ++i) {
    const int32_t* w = &k.weights[i * k.taps];
    for (int g = 0; g < k.groups; ++g) {
      int16_t* out = &packed[(i * k.groups + g) * kGroupInt16];
      for (int j = 0; j < 16; ++j) {  // half j / 8 holds taps 2 (j / 8) and 2 (j / 8) + 1
        const int t = g * kGroupTaps + 2 * (j / 8) + j % 2;
        const int32_t weight = t < k.taps ? w[t] : 0;
        out[j] = Hi(weight);
        out[16 + j] = Lo(weight);
      }
    }
  }
  return packed;
}

// The layout `pair_words` of `k`'s weights (resize_kernels.h); weights past `taps`
// count as 0.
std::vector<int32_t> PackColumnPairs(const Coefficients& k) {
  const size_t out_size = k.first.size();
  std::vector<int32_t> pair_words(out_size * k.pairs * 2, 0);
  for (size_t i = 0; i < out_size; ++i) {
    const int32_t* w = &k.weights[i * k.taps];
    for (int p = 0; p < k.pairs; ++p) {
      const int32_t a = w[2 * p], b = 2 * p + 1 < k.taps ? w[2 * p + 1] : 0;
      int32_t* out = &pair_words[(i * k.pairs + p) * 2];
      out[0] = static_cast<int32_t>(static_cast<uint16_t>(Hi(a)) |
                                    static_cast<uint32_t>(static_cast<uint16_t>(Hi(b))) << 16);
      out[1] = static_cast<int32_t>(static_cast<uint16_t>(Lo(a)) |
                                    static_cast<uint32_t>(static_cast<uint16_t>(Lo(b))) << 16);
    }
  }
  return pair_words;
}

// The layout `quad_digits` of `k`'s weights (resize_kernels.h); empty if a weight has
// no WeightDigits.
std::vector<int32_t> PackDigits(const Coefficients& k) {
  const size_t out_size = k.first.size();
  std::vector<int32_t> quad_digits(out_size * k.quads * 3, 0);
  for (size_t i = 0; i < out_size; ++i) {
    for (int t = 0; t < k.taps; ++t) {
      int8_t d[3];
      if (!WeightDigits(k.weights[i * k.taps + t], d)) return {};
      int32_t* out = &quad_digits[(i * k.quads + t / kGroupTaps) * 3];
      for (int level = 0; level < 3; ++level) {
        out[2 - level] = static_cast<int32_t>(static_cast<uint32_t>(out[2 - level]) |
                                              static_cast<uint32_t>(static_cast<uint8_t>(d[level]))
                                                  << (8 * (t % kGroupTaps)));
      }
    }
  }
  return quad_digits;
}

struct CacheEntry {
  int in_size = -1, out_size = -1;
  double in0 = 0, in1 = 0;
  std::shared_ptr<const Coefficients> k;
};

}  // namespace

bool WeightDigits(int32_t w, int8_t* d) {
  int64_t rest = w;
  for (int j = 0; j < 2; ++j) {
    d[j] = static_cast<int8_t>(static_cast<uint8_t>(rest & 0xFF));
    rest = (rest - d[j]) / 256;
  }
  if (rest < -128 || rest > 127) return false;
  d[2] = static_cast<int8_t>(rest);
  return true;
}

CoefficientView Coefficients::View(unsigned layouts) const {
  CoefficientView view{taps,           groups,  pairs,   first.data(), count.data(),
                       weights.data(), nullptr, nullptr, quads,        nullptr};
  if (layouts & kRowGroups) {
    std::call_once(packed_once_, [&] { packed_ = PackRowGroups(*this); });
    view.packed = packed_.data();
  }
  if (layouts & kColumnDigits) {
    std::call_once(digits_once_, [&] { quad_digits_ = PackDigits(*this); });
    if (quad_digits_.empty()) layouts |= kColumnPairs;  // what the loops read instead
    else view.quad_digits = quad_digits_.data();
  }
  if (layouts & kColumnPairs) {
    std::call_once(pairs_once_, [&] { pair_words_ = PackColumnPairs(*this); });
    view.pair_words = pair_words_.data();
  }
  return view;
}

std::shared_ptr<const Coefficients> CoefficientsFor(int in_size, double in0, double in1,
                                                    int out_size) {
  // Four entries: the two axes of the last two sizes.
  thread_local std::array<CacheEntry, 4> cache;
  thread_local size_t next = 0;
  for (const CacheEntry& e : cache) {
    if (e.k && e.in_size == in_size && e.out_size == out_size && e.in0 == in0 && e.in1 == in1) {
      return e.k;
    }
  }
  auto k = std::make_shared<Coefficients>();
  PrecomputeWeights(in_size, in0, in1, out_size, *k);
  k->groups = (k->taps + kGroupTaps - 1) / kGroupTaps;
  k->pairs = (k->taps + 1) / 2;
  k->quads = k->groups;
  cache[next] = CacheEntry{in_size, out_size, in0, in1, k};
  next = (next + 1) % cache.size();
  return k;
}

int RowSimdEnd(const CoefficientView& k, int in_width, int channels, int out_width) {
  const int64_t row_bytes = static_cast<int64_t>(in_width) * channels;
  int end = 0;
  for (; end < out_width; ++end) {
    const int groups = (k.count[end] + kGroupTaps - 1) / kGroupTaps;
    if (groups == 0) continue;
    const int64_t last_load =
        static_cast<int64_t>(k.first[end]) * channels + (groups - 1) * kGroupTaps * channels;
    if (last_load + 16 > row_bytes) break;
  }
  return end;
}

}  // namespace imgpipe::resize_internal
