#include "loader/batch_mixing.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "util/error.h"
#include "util/random.h"

namespace imgpipe::loader {
namespace {

// Keeps the mixing draws apart from the pipeline's other streams of the same seed.
constexpr uint64_t kMixSalt = 0x6d69787570637574ull;  // "mixupcut"

// A standard normal draw (Marsaglia's polar method).
double SampleNormal(SplitMix64& rng) {
  while (true) {
    const double u = rng.Uniform(-1.0, 1.0), v = rng.Uniform(-1.0, 1.0);
    const double s = u * u + v * v;
    if (s > 0 && s < 1) return u * std::sqrt(-2.0 * std::log(s) / s);
  }
}

// A Gamma(a, 1) draw, a > 0: Marsaglia and Tsang (2000); for a < 1, Gamma(a + 1) * U^(1/a).
double SampleGamma(double a, SplitMix64& rng) {
  if (a < 1) {
    const double boost = std::pow(1.0 - rng.Uniform(), 1.0 / a);  // U in (0, 1]
    return SampleGamma(a + 1, rng) * boost;
  }
  const double d = a - 1.0 / 3, c = 1 / std::sqrt(9 * d);
  while (true) {
    double x, v;
    do {
      x = SampleNormal(rng);
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = 1.0 - rng.Uniform();  // (0, 1]
    if (u < 1 - 0.0331 * x * x * x * x) return d * v;
    if (std::log(u) < 0.5 * x * x + d * (1 - v + std::log(v))) return d * v;
  }
}

// Copies (or mixes) sample `from`'s values into sample `to` over rows [y0, y1) and
// columns [x0, x1) of every channel: to = a * to + b * from (cutmix: a = 0, b = 1).
void MixRegion(float* to, const float* from, int64_t channels, int64_t height, int64_t width, int64_t y0,
               int64_t y1, int64_t x0, int64_t x1, float a, float b, bool copy) {
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t y = y0; y < y1; ++y) {
      float* out = to + (c * height + y) * width;
      const float* in = from + (c * height + y) * width;
      if (copy) {
        std::memcpy(out + x0, in + x0, static_cast<size_t>(x1 - x0) * sizeof(float));
        continue;
      }
      for (int64_t x = x0; x < x1; ++x) {
        const float own = out[x] * a, partner = in[x] * b;  // torch's mul_, mul_, add_
        out[x] = own + partner;
      }
    }
  }
}

}  // namespace

const char* MixKindName(MixKind kind) {
  return kind == MixKind::kMixup ? "mixup" : kind == MixKind::kCutmix ? "cutmix" : "none";
}

bool MixingOn(const BatchMixOptions& o) { return o.mixup_alpha > 0 || o.cutmix_alpha > 0; }

void CheckBatchMixOptions(const BatchMixOptions& o) {
  for (const auto& [name, alpha] : {std::pair{"mixup_alpha", o.mixup_alpha}, {"cutmix_alpha", o.cutmix_alpha}}) {
    if (!(alpha >= 0) || !std::isfinite(alpha)) {
      throw InvalidArgument(std::string("Loader: ") + name + " must be >= 0 (0: off), not " + std::to_string(alpha));
    }
  }
}

double SampleBeta(double a, double b, uint64_t& rng_state) {
  SplitMix64 rng(rng_state);
  double x = 0, y = 0;
  while (x + y == 0) {  // both underflow only for tiny alphas: draw again
    x = SampleGamma(a, rng);
    y = SampleGamma(b, rng);
  }
  rng_state = rng.state();
  return x / (x + y);
}

MixDraw DrawMix(const BatchMixOptions& o, uint64_t seed, int64_t epoch, int64_t batch, int rank, int height,
                int width) {
  MixDraw draw;
  if (!MixingOn(o)) return draw;
  SplitMix64 rng(DeriveSeed(seed ^ kMixSalt, static_cast<uint64_t>(epoch), static_cast<uint64_t>(batch),
                            static_cast<uint64_t>(rank)));
  // 1. Which one (torchvision's RandomChoice of the two when both are on).
  const bool both = o.mixup_alpha > 0 && o.cutmix_alpha > 0;
  draw.kind = both ? (rng.Below(2) == 0 ? MixKind::kMixup : MixKind::kCutmix)
                   : (o.mixup_alpha > 0 ? MixKind::kMixup : MixKind::kCutmix);
  const double alpha = draw.kind == MixKind::kMixup ? o.mixup_alpha : o.cutmix_alpha;
  uint64_t state = rng.state();
  draw.lambda = SampleBeta(alpha, alpha, state);
  rng.set_state(state);
  if (draw.kind == MixKind::kMixup) return draw;
  // 2. Cutmix's box, as RandomCutmix: a centre uniform over the image, half-sides
  // int(0.5 * sqrt(1 - lambda) * side), clamped; lambda becomes the share left.
  const int cx = static_cast<int>(rng.Below(static_cast<uint64_t>(width)));
  const int cy = static_cast<int>(rng.Below(static_cast<uint64_t>(height)));
  const double r = 0.5 * std::sqrt(1.0 - draw.lambda);
  const int half_w = static_cast<int>(r * width), half_h = static_cast<int>(r * height);
  draw.x0 = std::max(cx - half_w, 0);
  draw.y0 = std::max(cy - half_h, 0);
  draw.x1 = std::min(cx + half_w, width);
  draw.y1 = std::min(cy + half_h, height);
  draw.lambda = 1.0 - static_cast<double>(draw.x1 - draw.x0) * (draw.y1 - draw.y0) /
                          (static_cast<double>(width) * height);
  return draw;
}

void ApplyMixNchw(const MixDraw& draw, float* data, int64_t n, int64_t channels, int64_t height, int64_t width) {
  if (draw.kind == MixKind::kNone || n < 2) return;  // a sample mixed with itself is itself
  const bool cut = draw.kind == MixKind::kCutmix;
  const int64_t y0 = cut ? draw.y0 : 0, y1 = cut ? draw.y1 : height;
  const int64_t x0 = cut ? draw.x0 : 0, x1 = cut ? draw.x1 : width;
  if (y1 <= y0 || x1 <= x0) return;
  const int64_t sample = channels * height * width;
  const float a = static_cast<float>(draw.lambda), b = static_cast<float>(1.0 - draw.lambda);
  // Sample 0's partner is the last one as it was: keep it before it changes. The others
  // go from the last down, so each partner is still unmixed when it is read.
  std::vector<float> last(data + (n - 1) * sample, data + n * sample);
  for (int64_t i = n - 1; i >= 1; --i) {
    MixRegion(data + i * sample, data + (i - 1) * sample, channels, height, width, y0, y1, x0, x1, a, b, cut);
  }
  MixRegion(data, last.data(), channels, height, width, y0, y1, x0, x1, a, b, cut);
}

}  // namespace imgpipe::loader
