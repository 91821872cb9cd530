// Batch mixing (mixup, cutmix) as torchvision's classification reference does it
// (references/classification/transforms.py RandomMixup / RandomCutmix, 0.14): one draw
// per batch, deterministic from (seed, epoch, batch index in the epoch, rank), so that a
// resumed loader needs no state for it; applied in place to a float32 NCHW batch.
//
// Label convention: a mixed batch keeps its int64 labels and gains the draw's `lambda`;
// the partner of sample i is sample (i - 1 + N) % N (torch's roll(1, 0)), so the partner
// labels are the labels rolled by one. The loss
//   lambda * CE(logits, y) + (1 - lambda) * CE(logits, roll(y, 1))
// equals cross-entropy on torchvision's mixed one-hot targets
//   lambda * one_hot(y) + (1 - lambda) * one_hot(roll(y, 1)),
// label smoothing included (cross-entropy is linear in the target).
// Throws InvalidArgument for a negative alpha.
#pragma once

#include <cstdint>

namespace imgpipe::loader {

struct BatchMixOptions {
  double mixup_alpha = 0;   // > 0: mixup with lambda ~ Beta(alpha, alpha)
  double cutmix_alpha = 0;  // > 0: cutmix with lambda ~ Beta(alpha, alpha)
};

enum class MixKind { kNone, kMixup, kCutmix };

// "none", "mixup" or "cutmix".
const char* MixKindName(MixKind kind);

// One batch's draw. For cutmix, the box [y0, y1) x [x0, x1) of every sample is replaced
// by its partner's, and lambda is the share of the image left unreplaced.
struct MixDraw {
  MixKind kind = MixKind::kNone;
  double lambda = 1.0;  // weight of the sample's own label (1: unmixed)
  int y0 = 0, y1 = 0, x0 = 0, x1 = 0;
};

// Whether either alpha is positive.
bool MixingOn(const BatchMixOptions& o);

// Throws InvalidArgument naming the option ("Loader: mixup_alpha must be >= 0, ...")
// when an alpha is negative or not finite.
void CheckBatchMixOptions(const BatchMixOptions& o);

// A sample of Beta(a, b), a, b > 0, as the ratio of two Gamma draws (Marsaglia-Tsang,
// with the U^(1/a) boost for a < 1), from `rng_state` (a SplitMix64 state, advanced).
double SampleBeta(double a, double b, uint64_t& rng_state);

// The draw of batch `batch` (its index in the epoch) of `epoch` on `rank`, for images
// of height x width: with both alphas > 0 mixup or cutmix, chosen with even odds;
// with one, that one; with none, kNone. Each is applied with probability 1.
MixDraw DrawMix(const BatchMixOptions& o, uint64_t seed, int64_t epoch, int64_t batch, int rank, int height,
                int width);

// Applies `draw` in place to `n` float32 samples of channels x height x width (NCHW,
// contiguous): mixup: x[i] = lambda * x[i] + (1 - lambda) * x[i - 1]; cutmix: the box
// of x[i] from the original x[i - 1] (partners wrap around, as roll(1, 0)).
void ApplyMixNchw(const MixDraw& draw, float* data, int64_t n, int64_t channels, int64_t height, int64_t width);

}  // namespace imgpipe::loader
