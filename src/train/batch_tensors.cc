#include "train/batch_tensors.h"

#include <torch/nn/functional/loss.h>
#include <torch/torch.h>

#include <stdexcept>
#include <string>

namespace imgpipe::train {

TensorBatch ToTensors(const pipeline::Batch& batch, int size, int64_t num_classes, torch::Device device,
                      const std::array<float, 3>& mean, const std::array<float, 3>& std) {
  const int64_t n = static_cast<int64_t>(batch.size);
  torch::Tensor pixels =
      torch::from_blob(const_cast<uint8_t*>(batch.data.data()), {n, size, size, 3}, torch::kUInt8);
  // On a GPU: through pinned memory, copied while the host goes on, then converted and
  // normalised on the device.
  if (device.is_cuda()) pixels = pixels.pin_memory();
  torch::Tensor images = pixels.to(device, /*non_blocking=*/device.is_cuda()).permute({0, 3, 1, 2}).to(torch::kFloat32);
  const torch::Tensor shift = torch::tensor({mean[0] * 255, mean[1] * 255, mean[2] * 255}).view({1, 3, 1, 1});
  const torch::Tensor scale =
      torch::tensor({1 / (std[0] * 255), 1 / (std[1] * 255), 1 / (std[2] * 255)}).view({1, 3, 1, 1});
  images = (images - shift.to(device)) * scale.to(device);
  torch::Tensor labels = torch::tensor(batch.labels, torch::kInt64);
  if (n > 0) {
    int64_t lo = labels.min().item<int64_t>(), hi = labels.max().item<int64_t>();
    if (lo < 0 || hi >= num_classes) {
      throw std::runtime_error("a record's label " + std::to_string(lo < 0 ? lo : hi) +
                               " is outside [0, " + std::to_string(num_classes) +
                               "): records need image/class/label (0-based)");
    }
  }
  return {images, labels.to(device), std::nullopt};
}

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
