#include "train/batch_mix.h"

#include <torch/nn/functional/loss.h>

namespace imgpipe::train {

void MixImages(torch::Tensor& images, const loader::MixDraw& draw) {
  using torch::indexing::Slice;
  if (draw.kind == loader::MixKind::kNone) return;
  torch::NoGradGuard no_grad;
  torch::Tensor rolled = images.roll(1, 0);
  if (draw.kind == loader::MixKind::kMixup) {
    rolled.mul_(1.0 - draw.lambda);
    images.mul_(draw.lambda).add_(rolled);
    return;
  }
  const auto rows = Slice(draw.y0, draw.y1), columns = Slice(draw.x0, draw.x1);
  images.index({Slice(), Slice(), rows, columns}).copy_(rolled.index({Slice(), Slice(), rows, columns}));
}

torch::Tensor MixedCrossEntropy(const torch::Tensor& logits, const torch::Tensor& labels,
                                const std::optional<loader::MixDraw>& draw, double smoothing) {
  namespace F = torch::nn::functional;
  const auto options = F::CrossEntropyFuncOptions().label_smoothing(smoothing);
  torch::Tensor own = F::cross_entropy(logits, labels, options);
  if (!draw || draw->kind == loader::MixKind::kNone) return own;
  torch::Tensor partner = F::cross_entropy(logits, labels.roll(1, 0), options);
  return own * draw->lambda + partner * (1.0 - draw->lambda);
}

}  // namespace imgpipe::train
