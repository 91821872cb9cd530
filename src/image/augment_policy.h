// torchvision's automatic augmentation policies (TrivialAugmentWide, RandAugment and
// AutoAugment's ImageNet policy, as its reference train.py selects them with
// --auto-augment ta_wide|ra|imagenet) and RandomErasing: their augmentation spaces and
// distributions, drawn from a SplitMix64 so that a seed, not torch's generator, decides.
// Bad options, policy names, probabilities and rectangles throw InvalidArgument.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "image/augment_ops.h"
#include "image/image.h"
#include "util/random.h"

namespace imgpipe {

enum class AugmentPolicyKind {
  kNone,
  kTrivialAugmentWide,   // "ta_wide": TrivialAugmentWide()
  kRandAugment,          // "ra": RandAugment(num_ops, magnitude, num_magnitude_bins)
  kAutoAugmentImageNet,  // "imagenet": AutoAugment(AutoAugmentPolicy.IMAGENET)
};

// The --auto-augment name of `kind`: "none", "ta_wide", "ra" or "imagenet".
const char* AugmentPolicyName(AugmentPolicyKind kind);
// Those names, in the enum's order.
const std::vector<std::string>& AugmentPolicyNames();
// The kind of a name; throws InvalidArgument ("auto_augment must be one of 'none', ...,
// not 'x'") naming `name` and the names allowed.
AugmentPolicyKind ParseAugmentPolicy(const std::string& name);

// torchvision's policy arguments, named as the reference train.py's flags. torchvision
// interpolates with NEAREST, its policies' default (train.py passes its --interpolation).
struct AugmentPolicyOptions {
  AugmentPolicyKind kind = AugmentPolicyKind::kNone;  // --auto-augment
  int ra_num_ops = 2;                                  // --ra-num-ops
  int ra_magnitude = 9;                                // --ra-magnitude: a bin
  int num_magnitude_bins = 31;                         // RandAugment's and TrivialAugmentWide's
  AugmentFill fill = {0, 0, 0};                        // fill=None: 0
};

// Throws InvalidArgument naming the first option out of range ("ra_magnitude must be in
// [0, 30], not 31") unless ra_num_ops >= 0, num_magnitude_bins >= 2 and
// 0 <= ra_magnitude < num_magnitude_bins.
void CheckAugmentPolicyOptions(const AugmentPolicyOptions& options);

// One op of a policy's `_augmentation_space`: its magnitudes by bin (the float32 values of
// torch.linspace as PyTorch's AVX2 CPU kernel computes them, or Posterize's bits; empty
// where the op takes none) and whether a draw negates them half the time.
struct AugmentSpaceOp {
  AugmentOp op;
  std::vector<float> magnitudes;
  bool is_signed = false;
};

// The augmentation space of `kind` (not kNone) for a height x width image, in
// torchvision's order: TrivialAugmentWide's and RandAugment's with `num_bins` bins,
// AutoAugment's with 10 whatever `num_bins` says. Throws InvalidArgument for kNone, fewer
// than 2 bins or an empty image.
std::vector<AugmentSpaceOp> AugmentationSpace(AugmentPolicyKind kind, int num_bins, int height,
                                              int width);

// One op a policy chose, with its signed magnitude.
struct AugmentDraw {
  AugmentOp op;
  double magnitude = 0;
};

// The ops the policy applies to a height x width image, drawn as torchvision's forward
// draws them: TrivialAugmentWide one op, a uniform bin and a sign; RandAugment ra_num_ops
// ops at bin ra_magnitude, each with a sign; AutoAugment a sub-policy, then each of its two
// ops with its probability and a sign. kNone: none. Checks the options (as
// CheckAugmentPolicyOptions).
std::vector<AugmentDraw> DrawAugmentPolicy(const AugmentPolicyOptions& options, int height,
                                           int width, SplitMix64& random);

// Draws as DrawAugmentPolicy and applies the ops (ApplyAugmentOp with options.fill), in
// place. Throws as both.
void ApplyAugmentPolicy(Image* image, const AugmentPolicyOptions& options, SplitMix64& random);

// A rectangle of pixels: rows [top, top + height), columns [left, left + width).
struct EraseRect {
  int top = 0, left = 0, height = 0, width = 0;
};

// torchvision RandomErasing's choice: with probability p, up to 10 tries of an area in
// [scale_min, scale_max] of the image and a log-uniform ratio (height / width) in
// [ratio_min, ratio_max], rounded; the first that fits strictly inside gets a uniform
// position. nullopt when the coin says no or no try fits (torchvision leaves the image).
// Throws InvalidArgument for an empty image, p outside [0, 1], a scale range outside
// [0, 1] or reversed, a ratio range not positive or reversed.
std::optional<EraseRect> SampleErasing(int height, int width, double p, SplitMix64& random,
                                       double scale_min = 0.02, double scale_max = 0.33,
                                       double ratio_min = 0.3, double ratio_max = 3.3);

// RandomErasing's value: torchvision's value=0 (a constant, in normalised space) or
// value="random" (each element a normal(0, 1) draw).
struct EraseValue {
  bool random = false;
  float constant = 0;
};

// Writes `value` into `rect` of every channel of a channels x height x width float image
// (what torchvision erases after Normalize); random values come from `random`, which is
// untouched otherwise. Throws InvalidArgument if the rectangle is not inside the image.
void EraseChw(float* chw, int channels, int height, int width, const EraseRect& rect,
              const EraseValue& value, SplitMix64& random);

// The uint8 HWC equivalent of erasing with 0 in normalised space: each channel's pixels
// in `rect` become round(mean[c] * 255), the nearest byte to the mean (a 1-channel image
// takes mean[0]). Throws InvalidArgument if the rectangle is not inside the image.
void EraseHwc(Image* image, const EraseRect& rect, const std::array<float, 3>& mean);

}  // namespace imgpipe
