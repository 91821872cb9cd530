// A loader batch as tensors for `imgpipe train`, the one place the trainer normalises
// and mixes: uint8 NHWC pixels normalised on the training device with the preset's
// mean and std (image/presets.h), the loader's draw (loader/batch_mixing.h) applied to
// the normalised batch there, and the loss of a mixed batch under the label convention
// of batch_mixing.h (the labels stay int64; the partner labels are roll(labels, 1)).
// The host-side twins are image/transforms.h NormalizeToChw and loader::ApplyMixNchw
// (the float32 layout): the loader has no libtorch, and these run on the GPU; the tests
// pin the two mixings to the same floats.
#pragma once

#include <torch/types.h>  // tensors only: torch/torch.h would double the compile time

#include <array>
#include <optional>

#include "loader/batch_mixing.h"
#include "pipeline/element.h"

namespace imgpipe::train {

struct TensorBatch {
  torch::Tensor images;  // N x 3 x H x W float, normalised (channels-last strides)
  torch::Tensor labels;  // N int64
  std::optional<loader::MixDraw> mix;  // the loader's draw, applied to `images` already
};

// A uint8 NHWC batch of `size` x `size` images -> float NCHW on `device`, channels-last
// in memory, (x - 255 mean) / (255 std) per channel; on a GPU the uint8 pixels go
// through pinned memory (4x fewer bytes than float) and are converted there. Throws
// std::runtime_error when a label is outside [0, num_classes).
TensorBatch ToTensors(const pipeline::Batch& batch, int size, int64_t num_classes, torch::Device device,
                      const std::array<float, 3>& mean, const std::array<float, 3>& std);

// Applies `draw` in place to N x C x H x W float `images` (any device or memory
// format) with torchvision's arithmetic: mixup: images * lambda + roll(images) * (1 -
// lambda); cutmix: the box from roll(images). kNone: unchanged.
void MixImages(torch::Tensor& images, const loader::MixDraw& draw);

// Cross-entropy of `logits` against int64 `labels` (label smoothing `smoothing`); for a
// mixed batch lambda * CE(labels) + (1 - lambda) * CE(roll(labels, 1)), which equals
// cross-entropy on torchvision's mixed one-hot targets.
torch::Tensor MixedCrossEntropy(const torch::Tensor& logits, const torch::Tensor& labels,
                                const std::optional<loader::MixDraw>& draw, double smoothing);

}  // namespace imgpipe::train
