// Batch mixing on tensors for `imgpipe train`: the loader's draw (loader/batch_mixing.h)
// applied to a normalised batch on its device, and the loss of a mixed batch under the
// label convention there (the labels stay int64; the partner labels are roll(labels, 1)).
#pragma once

#include <torch/types.h>  // tensors only: torch/torch.h would double the compile time

#include <optional>

#include "loader/batch_mixing.h"

namespace imgpipe::train {

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
