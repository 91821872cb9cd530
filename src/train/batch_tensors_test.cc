// Batches as tensors: normalised as (x / 255 - mean) / std per channel, the same images
// as the loader's C++ mixing of one draw, and the two-label loss equal to cross-entropy
// on torchvision's mixed one-hot targets.
#include "train/batch_tensors.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "image/presets.h"
#include "pipeline/buffer_pool.h"

namespace imgpipe::train {
namespace {

// A uint8 NHWC batch of n size x size images with pixel (i * 37 + 11) % 256 and labels 0..n-1.
pipeline::Batch PatternBatch(int n, int size) {
  pipeline::Batch batch;
  const size_t bytes = static_cast<size_t>(n) * size * size * 3;
  batch.data = pipeline::BufferPool::Create()->Get(bytes);
  for (size_t i = 0; i < bytes; ++i) batch.data.data()[i] = static_cast<uint8_t>((i * 37 + 11) % 256);
  batch.size = static_cast<size_t>(n);
  batch.sample_bytes = bytes / n;
  for (int i = 0; i < n; ++i) batch.labels.push_back(i);
  return batch;
}

TEST(BatchTensors, ToTensorsNormalisesWithThePresetsMeanAndStd) {
  const int n = 3, size = 5;
  pipeline::Batch batch = PatternBatch(n, size);
  const EvalPreset preset;
  TensorBatch t = ToTensors(batch, size, n, torch::kCPU, preset.mean, preset.std);
  ASSERT_EQ(t.images.sizes(), (std::vector<int64_t>{n, 3, size, size}));
  EXPECT_EQ(t.images.scalar_type(), torch::kFloat32);
  EXPECT_TRUE(torch::equal(t.labels, torch::tensor({0, 1, 2}, torch::kInt64)));
  auto images = t.images.accessor<float, 4>();
  double worst = 0;
  for (int i = 0; i < n; ++i) {
    for (int y = 0; y < size; ++y) {
      for (int x = 0; x < size; ++x) {
        for (int c = 0; c < 3; ++c) {
          const double pixel = batch.data.data()[((i * size + y) * size + x) * 3 + c];
          const double expected = (pixel / 255.0 - preset.mean[c]) / preset.std[c];
          worst = std::max(worst, std::abs(images[i][c][y][x] - expected));
        }
      }
    }
  }
  EXPECT_LT(worst, 1e-5);
  EXPECT_THROW(ToTensors(batch, size, 2, torch::kCPU, preset.mean, preset.std), std::runtime_error);
}

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
