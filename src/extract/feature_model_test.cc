#include "extract/feature_model.h"

#include <gtest/gtest.h>

#include "extract/checkpoint_test_util.h"
#include "extract/extract_test_util.h"
#include "train/checkpoint.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe::extract {
namespace {

TEST(FeatureModel, CheckpointPenultimateIsFeaturesAndLogitsIsForward) {
  std::string dir = FreshTestDir("model_checkpoint");
  std::string path = JoinPath(dir, "small.ckpt");
  const int64_t feature_dim = WriteTestCheckpoint(path, "small-resnet", {"cat", "dog", "eel"}, 48);

  std::unique_ptr<FeatureModel> features = LoadFeatureModel(path, "penultimate");
  const ModelDescription& d = features->description();
  EXPECT_EQ(d.kind, "checkpoint");
  EXPECT_EQ(d.name, "small-resnet");
  EXPECT_EQ(d.image_size, 48);
  EXPECT_EQ(d.class_names, (std::vector<std::string>{"cat", "dog", "eel"}));
  EXPECT_EQ(OutputDimension(*features, 48), feature_dim);
  std::unique_ptr<FeatureModel> logits = LoadFeatureModel(path, "logits");
  EXPECT_EQ(OutputDimension(*logits, 48), 3);

  // The same numbers as the classifier the checkpoint holds.
  train::CheckpointMeta meta;
  train::ImageClassifier reference = train::LoadClassifierFromCheckpoint(path, &meta);
  torch::manual_seed(5);
  torch::Tensor x = torch::randn({3, 3, 48, 48});
  torch::NoGradGuard no_grad;
  torch::Tensor expected_features = reference->Features(x);
  EXPECT_TRUE(torch::allclose(features->Run(x), expected_features, 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(logits->Run(x), reference->Classify(expected_features), 1e-5, 1e-6));
  EXPECT_THROW(LoadFeatureModel(path, "layer4"), Error);
}

TEST(FeatureModel, TorchScriptLayersAreRowsPerImage) {
  if (!PythonHasTorch()) GTEST_SKIP() << "/usr/bin/python3 has no torch/torchvision";
  std::unique_ptr<FeatureModel> model = LoadFeatureModel(TorchScriptResnet18(true), "penultimate");
  EXPECT_EQ(model->description().kind, "torchscript");
  EXPECT_EQ(model->description().image_size, 224);
  EXPECT_EQ(model->description().layer_resolved, "input of fc (Linear)");
  EXPECT_EQ(OutputDimension(*model, 64), 512);
  // A 4-D layer is averaged over its spatial dimensions into one row per image.
  std::unique_ptr<FeatureModel> layer3 = LoadFeatureModel(TorchScriptResnet18(true), "layer3");
  EXPECT_EQ(OutputDimension(*layer3, 64), 256);
  EXPECT_EQ(OutputDimension(*LoadFeatureModel(TorchScriptResnet18(false), "logits"), 64), 10);
}

TEST(FeatureModel, NeitherCheckpointNorTorchScriptIsAClearError) {
  std::string dir = FreshTestDir("model_bad");
  std::string path = JoinPath(dir, "weights.bin");
  WriteFileAtomic(path, "this is not a model");
  try {
    LoadFeatureModel(path, "penultimate");
    FAIL() << "garbage loaded as a model";
  } catch (const DataError& e) {
    EXPECT_EQ(e.path(), path);
    EXPECT_NE(e.reason().find("neither an imgpipe checkpoint"), std::string::npos);
    EXPECT_NE(e.reason().find("TorchScript"), std::string::npos);
    EXPECT_EQ(e.reason().find('\n'), std::string::npos);
  }
  EXPECT_THROW(LoadFeatureModel(JoinPath(dir, "missing.pt"), "penultimate"), IoError);
}

}  // namespace
}  // namespace imgpipe::extract
