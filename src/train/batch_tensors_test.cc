// Batch mixing on tensors: the same images as the loader's C++ mixing of one draw, and
// the two-label loss equal to cross-entropy on torchvision's mixed one-hot targets.
#include "train/batch_mix.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace imgpipe::train {
namespace {

TEST(BatchMix, TensorMixingIsTheLoadersMixing) {
  const loader::BatchMixOptions both{0.2, 1.0};
  for (int64_t batch = 0; batch < 8; ++batch) {
    const loader::MixDraw draw = loader::DrawMix(both, 3, 0, batch, 0, 12, 10);
    torch::Tensor images = torch::randn({5, 3, 12, 10});
    torch::Tensor expected = images.clone();
    loader::ApplyMixNchw(draw, expected.data_ptr<float>(), 5, 3, 12, 10);
    torch::Tensor mixed = images.contiguous(torch::MemoryFormat::ChannelsLast);
    MixImages(mixed, draw);
    EXPECT_TRUE(torch::equal(mixed.contiguous(), expected)) << loader::MixKindName(draw.kind) << " " << batch;
  }
}

TEST(BatchMix, LossEqualsCrossEntropyOnMixedOneHotTargets) {
  torch::Tensor logits = torch::randn({6, 4});
  torch::Tensor labels = torch::tensor({0, 3, 1, 1, 2, 0}, torch::kInt64);
  loader::MixDraw draw;
  draw.kind = loader::MixKind::kMixup;
  draw.lambda = 0.35;
  namespace F = torch::nn::functional;
  for (double smoothing : {0.0, 0.1}) {
    torch::Tensor one_hot = F::one_hot(labels, 4).to(torch::kFloat32);
    torch::Tensor targets = one_hot * draw.lambda + one_hot.roll(1, 0) * (1 - draw.lambda);
    torch::Tensor expected =
        F::cross_entropy(logits, targets, F::CrossEntropyFuncOptions().label_smoothing(smoothing));
    EXPECT_NEAR(MixedCrossEntropy(logits, labels, draw, smoothing).item<double>(), expected.item<double>(), 1e-6);
  }
  EXPECT_NEAR(MixedCrossEntropy(logits, labels, std::nullopt, 0).item<double>(),
              F::cross_entropy(logits, labels).item<double>(), 1e-7);
}

}  // namespace
}  // namespace imgpipe::train
