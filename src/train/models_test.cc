#include "train/models.h"

#include <gtest/gtest.h>

#include "train/autocast.h"

namespace imgpipe::train {
namespace {

int64_t ParameterCount(torch::nn::Module& m) {
  int64_t n = 0;
  for (const auto& p : m.parameters()) n += p.numel();
  return n;
}

TEST(Models, ResNetsHaveTorchvisionParameterCountsAndNames) {
  // torchvision.models.resnet18() / resnet50() with 1000 classes.
  auto r18 = MakeImageClassifier("resnet18", 1000);
  EXPECT_EQ(ParameterCount(*r18), 11689512);
  auto r50 = MakeImageClassifier("resnet50", 1000);
  EXPECT_EQ(ParameterCount(*r50), 25557032);
  auto params = r50->named_parameters();
  for (const char* name : {"conv1.weight", "bn1.bias", "layer1.0.conv3.weight",
                           "layer1.0.downsample.0.weight", "layer4.2.bn3.weight", "fc.bias"}) {
    EXPECT_TRUE(params.contains(name)) << name;
  }
  auto buffers = r18->named_buffers();
  EXPECT_TRUE(buffers.contains("layer2.0.downsample.1.running_var"));
  EXPECT_TRUE(buffers.contains("bn1.num_batches_tracked"));
  EXPECT_FALSE(r18->named_parameters().contains("layer1.0.downsample.0.weight"));
}

TEST(Models, EveryModelClassifiesAnyImageSize) {
  for (const std::string& name : ImageClassifierNames()) {
    if (name == "resnet50") continue;  // covered by the parameter test; slow on CPU
    auto model = MakeImageClassifier(name, 7);
    model->eval();
    torch::NoGradGuard no_grad;
    for (int size : {64, 96}) {
      torch::Tensor x = torch::randn({2, 3, size, size});
      torch::Tensor features = model->Features(x);
      EXPECT_EQ(features.sizes(), (std::vector<int64_t>{2, model->feature_dim()})) << name;
      torch::Tensor logits = model->forward(x);
      EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{2, 7})) << name;
    }
  }
}

TEST(Models, ChannelsLastInputGivesTheSameLogits) {
  auto model = MakeImageClassifier("small-resnet", 5);
  model->eval();
  torch::NoGradGuard no_grad;
  torch::Tensor x = torch::randn({2, 3, 64, 64});
  torch::Tensor a = model->forward(x);
  torch::Tensor b = model->forward(x.contiguous(torch::MemoryFormat::ChannelsLast));
  EXPECT_TRUE(torch::allclose(a, b, 1e-4, 1e-5));
}

TEST(Models, OutputLayerStaysFloat32UnderBf16Autocast) {
  auto model = MakeImageClassifier("small-resnet", 5);
  torch::Tensor x = torch::randn({2, 3, 64, 64});
  AutocastScope bf16(c10::DeviceType::CPU, torch::kBFloat16);
  torch::Tensor features = model->Features(x);
  EXPECT_EQ(features.scalar_type(), torch::kBFloat16);  // the trunk ran in bf16
  EXPECT_EQ(model->Classify(features).scalar_type(), torch::kFloat32);
}

TEST(Models, AutocastScopeRestoresTheOuterSetting) {
  torch::Tensor a = torch::randn({4, 4});
  {
    AutocastScope bf16(c10::DeviceType::CPU, torch::kBFloat16);
    EXPECT_EQ(torch::mm(a, a).scalar_type(), torch::kBFloat16);
    {
      AutocastDisabledScope fp32;
      EXPECT_EQ(torch::mm(a, a).scalar_type(), torch::kFloat32);
    }
    EXPECT_EQ(torch::mm(a, a).scalar_type(), torch::kBFloat16);
  }
  EXPECT_EQ(torch::mm(a, a).scalar_type(), torch::kFloat32);
  AutocastScope off(c10::DeviceType::CPU, torch::kBFloat16, /*enabled=*/false);
  EXPECT_EQ(torch::mm(a, a).scalar_type(), torch::kFloat32);
}

TEST(Models, UnknownNameAndTooFewClassesAreErrors) {
  EXPECT_THROW(MakeImageClassifier("vgg16", 10), std::invalid_argument);
  EXPECT_THROW(MakeImageClassifier("resnet18", 1), std::invalid_argument);
}

}  // namespace
}  // namespace imgpipe::train
