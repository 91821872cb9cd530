#include "train/loss_scaler.h"

#include <gtest/gtest.h>

namespace imgpipe::train {
namespace {

std::vector<torch::Tensor> ParamWithGrad(std::vector<float> grad) {
  torch::Tensor p = torch::zeros({static_cast<int64_t>(grad.size())}, torch::requires_grad());
  p.mutable_grad() = torch::tensor(grad);
  return {p};
}

TEST(LossScaler, UnscalesFiniteGradientsAndGrowsAfterTheInterval) {
  DynamicLossScaler scaler(true, /*initial_scale=*/1024, /*growth_interval=*/3);
  EXPECT_EQ(scaler.Scale(torch::tensor(2.0f)).item<float>(), 2048.0f);
  auto params = ParamWithGrad({1024.0f, -2048.0f});
  EXPECT_TRUE(scaler.UnscaleAndCheck(params));
  EXPECT_FLOAT_EQ(params[0].grad()[0].item<float>(), 1.0f);
  EXPECT_FLOAT_EQ(params[0].grad()[1].item<float>(), -2.0f);
  scaler.Update(true);
  scaler.Update(true);
  EXPECT_EQ(scaler.scale(), 1024);
  scaler.Update(true);  // the third good step in a row
  EXPECT_EQ(scaler.scale(), 2048);
}

TEST(LossScaler, InfOrNanSkipsTheStepAndHalvesTheScale) {
  DynamicLossScaler scaler(true, 1024, 2);
  for (float bad : {INFINITY, -INFINITY, NAN}) {
    auto params = ParamWithGrad({1.0f, bad});
    EXPECT_FALSE(scaler.UnscaleAndCheck(params)) << bad;
    scaler.Update(false);
  }
  EXPECT_EQ(scaler.scale(), 128);
  EXPECT_EQ(scaler.skipped_steps(), 3);
  // A failure resets the run of good steps.
  scaler.Update(true);
  scaler.Update(false);
  scaler.Update(true);
  EXPECT_EQ(scaler.scale(), 64);
}

TEST(LossScaler, DisabledIsTheIdentity) {
  DynamicLossScaler scaler(false);
  EXPECT_EQ(scaler.scale(), 1.0);
  auto params = ParamWithGrad({3.0f, INFINITY});
  EXPECT_TRUE(scaler.UnscaleAndCheck(params));
  EXPECT_FLOAT_EQ(params[0].grad()[0].item<float>(), 3.0f);
  scaler.Update(false);
  EXPECT_EQ(scaler.skipped_steps(), 0);
}

TEST(LearningRate, WarmsUpLinearlyThenDecaysToZero) {
  EXPECT_DOUBLE_EQ(LearningRateAt(0, 100, 10, 1.0), 0.1);
  EXPECT_DOUBLE_EQ(LearningRateAt(9, 100, 10, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(LearningRateAt(10, 100, 10, 1.0), 1.0);
  EXPECT_NEAR(LearningRateAt(55, 100, 10, 1.0), 0.5, 1e-12);
  EXPECT_NEAR(LearningRateAt(100, 100, 10, 1.0), 0.0, 1e-12);
  EXPECT_DOUBLE_EQ(LearningRateAt(0, 100, 0, 0.4), 0.4);
  double previous = 2;
  for (int s = 10; s <= 100; ++s) {
    double lr = LearningRateAt(s, 100, 10, 1.0);
    EXPECT_LE(lr, previous);
    previous = lr;
  }
}

}  // namespace
}  // namespace imgpipe::train
