#include "image/augment_policy.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "util/error.h"

namespace imgpipe {
namespace {

using Op = AugmentOp;

// How an op's magnitudes follow from its bin.
enum class Grid {
  kNone,       // no magnitude (0)
  kLinspace,   // torch.linspace(start, end, bins)[bin]
  kPosterize,  // 8 - round(bin / ((bins - 1) / end)), end 4 or 6
};

// One op of an augmentation space, without its values (no allocation per draw).
struct SpaceEntry {
  Op op;
  Grid grid;
  double start, end;
  bool is_signed;
};

// A policy's augmentation space: its ops in torchvision's dict order.
struct Space {
  std::array<SpaceEntry, kAugmentOpCount> ops;
  int size = 0;
  int bins = 0;
};

// One op of AutoAugment's ImageNet sub-policies: its probability and magnitude bin
// (-1: none).
struct PolicyStep {
  Op op;
  double probability;
  int bin;
};

// AutoAugment's ImageNet policy (torchvision's _get_policies(AutoAugmentPolicy.IMAGENET)).
constexpr PolicyStep kImageNetPolicy[25][2] = {
    {{Op::kPosterize, 0.4, 8}, {Op::kRotate, 0.6, 9}},
    {{Op::kSolarize, 0.6, 5}, {Op::kAutoContrast, 0.6, -1}},
    {{Op::kEqualize, 0.8, -1}, {Op::kEqualize, 0.6, -1}},
    {{Op::kPosterize, 0.6, 7}, {Op::kPosterize, 0.6, 6}},
    {{Op::kEqualize, 0.4, -1}, {Op::kSolarize, 0.2, 4}},
    {{Op::kEqualize, 0.4, -1}, {Op::kRotate, 0.8, 8}},
    {{Op::kSolarize, 0.6, 3}, {Op::kEqualize, 0.6, -1}},
    {{Op::kPosterize, 0.8, 5}, {Op::kEqualize, 1.0, -1}},
    {{Op::kRotate, 0.2, 3}, {Op::kSolarize, 0.6, 8}},
    {{Op::kEqualize, 0.6, -1}, {Op::kPosterize, 0.4, 6}},
    {{Op::kRotate, 0.8, 8}, {Op::kColor, 0.4, 0}},
    {{Op::kRotate, 0.4, 9}, {Op::kEqualize, 0.6, -1}},
    {{Op::kEqualize, 0.0, -1}, {Op::kEqualize, 0.8, -1}},
    {{Op::kInvert, 0.6, -1}, {Op::kEqualize, 1.0, -1}},
    {{Op::kColor, 0.6, 4}, {Op::kContrast, 1.0, 8}},
    {{Op::kRotate, 0.8, 8}, {Op::kColor, 1.0, 2}},
    {{Op::kColor, 0.8, 8}, {Op::kSolarize, 0.8, 7}},
    {{Op::kSharpness, 0.4, 7}, {Op::kInvert, 0.6, -1}},
    {{Op::kShearX, 0.6, 5}, {Op::kEqualize, 1.0, -1}},
    {{Op::kColor, 0.4, 0}, {Op::kEqualize, 0.6, -1}},
    {{Op::kEqualize, 0.4, -1}, {Op::kSolarize, 0.2, 4}},
    {{Op::kSolarize, 0.6, 5}, {Op::kAutoContrast, 0.6, -1}},
    {{Op::kInvert, 0.6, -1}, {Op::kEqualize, 1.0, -1}},
    {{Op::kColor, 0.6, 4}, {Op::kContrast, 1.0, 8}},
    {{Op::kEqualize, 0.8, -1}, {Op::kEqualize, 0.6, -1}},
};

constexpr const char* kPolicyNames[] = {"none", "ta_wide", "ra", "imagenet"};

// torch.linspace(start, end, steps)[index] in float32 as PyTorch's AVX2 CPU kernel
// computes it (cpu_serial_kernel_vec, compiled with FMA): the first half from start, the
// rest from end, each by a fused multiply-add; but in blocks of 16 elements (while 16 are
// left) each run of 8 takes its first element so and adds k * step, rounded, to it. Other
// builds (AVX-512, no vector kernel) differ from it in the last bit of some elements.
float TorchLinspace(float start, float end, int steps, int index) {
  if (steps == 1) return start;
  const float step = (end - start) / static_cast<float>(steps - 1);
  const int halfway = steps / 2;
  auto scalar = [&](int i) {
    return i < halfway ? std::fma(step, static_cast<float>(i), start)
                       : std::fma(-step, static_cast<float>(steps - i - 1), end);
  };
  if (index >= steps / 16 * 16) return scalar(index);
  const int lane0 = index / 8 * 8;
  if (index == lane0) return scalar(index);
  const float offset = static_cast<float>(index - lane0) * step;
  return scalar(lane0) + offset;
}

// The magnitude of `bin` in an op's grid of `bins`.
float GridValue(const SpaceEntry& entry, int bins, int bin) {
  switch (entry.grid) {
    case Grid::kNone:
      return 0.0f;
    case Grid::kLinspace:
      return TorchLinspace(static_cast<float>(entry.start), static_cast<float>(entry.end),
                           bins, bin);
    case Grid::kPosterize: {
      // float32 arange / ((bins - 1) / end), rounded half to even.
      const float divisor = static_cast<float>((bins - 1) / entry.end);
      return 8.0f - std::nearbyint(static_cast<float>(bin) / divisor);
    }
  }
  return 0.0f;
}

// The augmentation space of a policy kind (not kNone) for a height x width image:
// TrivialAugmentWide's wide ranges, else RandAugment's (AutoAugment's: no Identity, then
// Invert, 10 bins).
Space PolicySpace(AugmentPolicyKind kind, int num_bins, int height, int width) {
  const bool wide = kind == AugmentPolicyKind::kTrivialAugmentWide;
  const bool autoaugment = kind == AugmentPolicyKind::kAutoAugmentImageNet;
  const double shear = wide ? 0.99 : 0.3, enhance = wide ? 0.99 : 0.9;
  const double translate_x = wide ? 32.0 : 150.0 / 331.0 * width;
  const double translate_y = wide ? 32.0 : 150.0 / 331.0 * height;
  Space space;
  space.bins = autoaugment ? 10 : num_bins;
  auto add = [&space](Op op, Grid grid, double start, double end, bool is_signed) {
    space.ops[space.size++] = {op, grid, start, end, is_signed};
  };
  if (!autoaugment) add(Op::kIdentity, Grid::kNone, 0, 0, false);
  add(Op::kShearX, Grid::kLinspace, 0, shear, true);
  add(Op::kShearY, Grid::kLinspace, 0, shear, true);
  add(Op::kTranslateX, Grid::kLinspace, 0, translate_x, true);
  add(Op::kTranslateY, Grid::kLinspace, 0, translate_y, true);
  add(Op::kRotate, Grid::kLinspace, 0, wide ? 135.0 : 30.0, true);
  for (Op op : {Op::kBrightness, Op::kColor, Op::kContrast, Op::kSharpness}) {
    add(op, Grid::kLinspace, 0, enhance, true);
  }
  add(Op::kPosterize, Grid::kPosterize, 0, wide ? 6 : 4, false);
  add(Op::kSolarize, Grid::kLinspace, 255.0, 0.0, false);
  add(Op::kAutoContrast, Grid::kNone, 0, 0, false);
  add(Op::kEqualize, Grid::kNone, 0, 0, false);
  if (autoaugment) add(Op::kInvert, Grid::kNone, 0, 0, false);
  return space;
}

// The entry of `op` in `space` (AutoAugment's sub-policies name their ops).
const SpaceEntry& FindEntry(const Space& space, Op op) {
  for (int i = 0; i < space.size; ++i) {
    if (space.ops[i].op == op) return space.ops[i];
  }
  throw Error(std::string("augmentation space without ") + AugmentOpName(op));
}

// The signed magnitude of `entry` at `bin`: negated when `negate` and the op is signed.
AugmentDraw Draw(const Space& space, const SpaceEntry& entry, int bin, bool negate) {
  double magnitude = GridValue(entry, space.bins, bin);
  if (entry.is_signed && negate) magnitude *= -1.0;
  return {entry.op, magnitude};
}

// Calls f(AugmentDraw) for each op the policy applies, drawn as torchvision's forward
// (TrivialAugmentWide, RandAugment, AutoAugment) draws them; the signs negate on a draw of
// 1 (0 for AutoAugment), which is the same distribution.
template <typename F>
void ForEachDraw(const AugmentPolicyOptions& options, int height, int width,
                 SplitMix64& random, F f) {
  CheckAugmentPolicyOptions(options);
  if (options.kind == AugmentPolicyKind::kNone) return;
  const Space space = PolicySpace(options.kind, options.num_magnitude_bins, height, width);
  auto pick_op = [&]() -> const SpaceEntry& { return space.ops[random.Below(space.size)]; };
  switch (options.kind) {
    case AugmentPolicyKind::kTrivialAugmentWide: {
      const SpaceEntry& entry = pick_op();
      const int bin = entry.grid == Grid::kNone ? 0 : static_cast<int>(random.Below(space.bins));
      f(Draw(space, entry, bin, entry.is_signed && random.Below(2) == 1));
      break;
    }
    case AugmentPolicyKind::kRandAugment:
      for (int i = 0; i < options.ra_num_ops; ++i) {
        const SpaceEntry& entry = pick_op();
        f(Draw(space, entry, options.ra_magnitude, entry.is_signed && random.Below(2) == 1));
      }
      break;
    case AugmentPolicyKind::kAutoAugmentImageNet: {
      // get_params: the sub-policy, two probabilities, two signs; then its two ops.
      const PolicyStep* steps = kImageNetPolicy[random.Below(25)];
      const double probs[2] = {random.Uniform(), random.Uniform()};
      const bool negate[2] = {random.Below(2) == 0, random.Below(2) == 0};
      for (int i = 0; i < 2; ++i) {
        if (probs[i] > steps[i].probability) continue;
        f(Draw(space, FindEntry(space, steps[i].op), std::max(steps[i].bin, 0), negate[i]));
      }
      break;
    }
    case AugmentPolicyKind::kNone:
      break;
  }
}

// Throws InvalidArgument unless `rect` lies inside a height x width image.
void CheckRect(const EraseRect& rect, int height, int width, const char* what) {
  if (rect.top < 0 || rect.left < 0 || rect.height < 0 || rect.width < 0 ||
      rect.top + rect.height > height || rect.left + rect.width > width) {
    throw InvalidArgument(std::string(what) + ": rectangle " + std::to_string(rect.width) +
                          "x" + std::to_string(rect.height) + " at (" +
                          std::to_string(rect.left) + ", " + std::to_string(rect.top) +
                          ") is not inside the " + std::to_string(width) + "x" +
                          std::to_string(height) + " image");
  }
}

// Standard normal values from `random`, two per pair of uniforms (Box-Muller).
class NormalSource {
 public:
  explicit NormalSource(SplitMix64& random) : random_(random) {}
  float Next() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double radius = std::sqrt(-2.0 * std::log(1.0 - random_.Uniform()));  // u in (0, 1]
    const double angle = 2.0 * M_PI * random_.Uniform();
    spare_ = static_cast<float>(radius * std::sin(angle));
    has_spare_ = true;
    return static_cast<float>(radius * std::cos(angle));
  }

 private:
  SplitMix64& random_;
  float spare_ = 0;
  bool has_spare_ = false;
};

}  // namespace

const char* AugmentPolicyName(AugmentPolicyKind kind) {
  return kPolicyNames[static_cast<int>(kind)];
}

const std::vector<std::string>& AugmentPolicyNames() {
  static const std::vector<std::string> names(std::begin(kPolicyNames), std::end(kPolicyNames));
  return names;
}

AugmentPolicyKind ParseAugmentPolicy(const std::string& name) {
  const std::vector<std::string>& names = AugmentPolicyNames();
  std::string allowed;
  for (size_t i = 0; i < names.size(); ++i) {
    if (name == names[i]) return static_cast<AugmentPolicyKind>(i);
    allowed += (i == 0 ? "'" : ", '") + names[i] + "'";
  }
  throw InvalidArgument("auto_augment must be one of " + allowed + ", not '" + name + "'");
}

void CheckAugmentPolicyOptions(const AugmentPolicyOptions& o) {
  if (o.ra_num_ops < 0) {
    throw InvalidArgument("ra_num_ops must be >= 0, not " + std::to_string(o.ra_num_ops));
  }
  if (o.num_magnitude_bins < 2) {
    throw InvalidArgument("num_magnitude_bins must be >= 2, not " + std::to_string(o.num_magnitude_bins));
  }
  if (o.ra_magnitude < 0 || o.ra_magnitude >= o.num_magnitude_bins) {
    throw InvalidArgument("ra_magnitude must be in [0, " + std::to_string(o.num_magnitude_bins - 1) +
                          "], not " + std::to_string(o.ra_magnitude));
  }
}

std::vector<AugmentSpaceOp> AugmentationSpace(AugmentPolicyKind kind, int num_bins, int height,
                                              int width) {
  if (kind == AugmentPolicyKind::kNone || num_bins < 2 || height < 1 || width < 1) {
    throw InvalidArgument(std::string("AugmentationSpace: no space for policy ") +
                          AugmentPolicyName(kind) + " with " + std::to_string(num_bins) +
                          " bins on a " + std::to_string(width) + "x" +
                          std::to_string(height) + " image");
  }
  const Space space = PolicySpace(kind, num_bins, height, width);
  std::vector<AugmentSpaceOp> ops;
  for (int i = 0; i < space.size; ++i) {
    const SpaceEntry& entry = space.ops[i];
    AugmentSpaceOp op{entry.op, {}, entry.is_signed};
    for (int bin = 0; entry.grid != Grid::kNone && bin < space.bins; ++bin) {
      op.magnitudes.push_back(GridValue(entry, space.bins, bin));
    }
    ops.push_back(std::move(op));
  }
  return ops;
}

std::vector<AugmentDraw> DrawAugmentPolicy(const AugmentPolicyOptions& options, int height,
                                           int width, SplitMix64& random) {
  std::vector<AugmentDraw> draws;
  ForEachDraw(options, height, width, random, [&](const AugmentDraw& d) { draws.push_back(d); });
  return draws;
}

void ApplyAugmentPolicy(Image* image, const AugmentPolicyOptions& options, SplitMix64& random) {
  ForEachDraw(options, image->height, image->width, random, [&](const AugmentDraw& d) {
    ApplyAugmentOp(image, d.op, d.magnitude, options.fill);
  });
}

std::optional<EraseRect> SampleErasing(int height, int width, double p, SplitMix64& random,
                                       double scale_min, double scale_max, double ratio_min,
                                       double ratio_max) {
  if (height < 1 || width < 1 || !(p >= 0 && p <= 1) ||
      !(0 <= scale_min && scale_min <= scale_max && scale_max <= 1) ||
      !(0 < ratio_min && ratio_min <= ratio_max)) {
    throw InvalidArgument("SampleErasing: bad arguments: " + std::to_string(width) + "x" +
                          std::to_string(height) + ", p " + std::to_string(p) + ", scale [" +
                          std::to_string(scale_min) + ", " + std::to_string(scale_max) +
                          "], ratio [" + std::to_string(ratio_min) + ", " +
                          std::to_string(ratio_max) + "]");
  }
  // 1. forward's coin.
  if (!(random.Uniform() < p)) return std::nullopt;
  // 2. get_params: up to 10 tries of an area and a log-uniform height / width ratio,
  //    rounded as Python's round() (half to even).
  const double area = static_cast<double>(height) * width;
  const double log_min = std::log(ratio_min), log_max = std::log(ratio_max);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double erase_area = area * random.Uniform(scale_min, scale_max);
    const double aspect_ratio = std::exp(random.Uniform(log_min, log_max));
    const int h = static_cast<int>(std::nearbyint(std::sqrt(erase_area * aspect_ratio)));
    const int w = static_cast<int>(std::nearbyint(std::sqrt(erase_area / aspect_ratio)));
    if (!(h < height && w < width)) continue;
    // torchvision draws the top row first, then the left column.
    const int top = static_cast<int>(random.Below(static_cast<uint64_t>(height - h + 1)));
    const int left = static_cast<int>(random.Below(static_cast<uint64_t>(width - w + 1)));
    return EraseRect{top, left, h, w};
  }
  return std::nullopt;
}

void EraseChw(float* chw, int channels, int height, int width, const EraseRect& rect,
              const EraseValue& value, SplitMix64& random) {
  CheckRect(rect, height, width, "EraseChw");
  // torchvision fills a channels x h x w tensor of normals in that order.
  NormalSource normal(random);
  for (int c = 0; c < channels; ++c) {
    float* plane = chw + static_cast<size_t>(c) * height * width;
    for (int y = rect.top; y < rect.top + rect.height; ++y) {
      float* row = plane + static_cast<size_t>(y) * width + rect.left;
      for (int x = 0; x < rect.width; ++x) row[x] = value.random ? normal.Next() : value.constant;
    }
  }
}

void EraseHwc(Image* image, const EraseRect& rect, const std::array<float, 3>& mean) {
  CheckRect(rect, image->height, image->width, "EraseHwc");
  const int c = image->channels;
  if (c != 1 && c != 3) {
    throw InvalidArgument("EraseHwc: needs an image of 1 or 3 channels, not " +
                          std::to_string(c));
  }
  uint8_t fill[3];
  for (int k = 0; k < c; ++k) {
    fill[k] = static_cast<uint8_t>(std::clamp(std::nearbyint(mean[k] * 255.0), 0.0, 255.0));
  }
  for (int y = rect.top; y < rect.top + rect.height; ++y) {
    uint8_t* p = image->row(y) + static_cast<size_t>(rect.left) * c;
    for (int x = 0; x < rect.width; ++x, p += c) std::copy_n(fill, c, p);
  }
}

}  // namespace imgpipe
