#include "train/checkpoint.h"

#include <gtest/gtest.h>
#include <torch/serialize.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "util/error.h"
#include "util/file.h"

namespace imgpipe::train {
namespace {

std::string TempPath(const std::string& name) {
  return JoinPath(::testing::TempDir(), "checkpoint_test_" + std::to_string(::getpid()) + "_" + name);
}

Checkpoint ExampleCheckpoint(ImageClassifier& model) {
  Checkpoint c;
  c.meta.model = "small-resnet";
  c.meta.num_classes = 4;
  c.meta.image_size = 64;
  c.meta.class_names = {"cat", "dog", "émeu", "yak"};
  c.meta.epoch = 2;
  c.meta.step = 77;
  c.meta.step_in_epoch = 5;
  c.meta.config_json = R"({"lr":0.1})";
  c.model = ModelState(*model);
  c.optimizer = std::string("\x00\xff\x80 binary", 10);
  c.loss_scale = 32768.0;
  c.pipeline_states = {std::string("\xc3\x28 state", 8), "rank 1"};
  return c;
}

TEST(Checkpoint, RoundTripsEveryField) {
  ImageClassifier model = MakeImageClassifier("small-resnet", 4);
  Checkpoint saved = ExampleCheckpoint(model);
  std::string path = TempPath("round_trip.pt");
  SaveCheckpoint(path, saved);
  Checkpoint loaded = LoadCheckpoint(path);
  EXPECT_EQ(loaded.meta.model, "small-resnet");
  EXPECT_EQ(loaded.meta.num_classes, 4);
  EXPECT_EQ(loaded.meta.image_size, 64);
  EXPECT_EQ(loaded.meta.class_names, saved.meta.class_names);
  EXPECT_EQ(loaded.meta.epoch, 2);
  EXPECT_EQ(loaded.meta.step, 77);
  EXPECT_EQ(loaded.meta.step_in_epoch, 5);
  EXPECT_EQ(loaded.meta.config_json, saved.meta.config_json);
  EXPECT_EQ(loaded.optimizer, saved.optimizer);
  EXPECT_EQ(loaded.loss_scale, 32768.0);
  EXPECT_EQ(loaded.pipeline_states, saved.pipeline_states);
  ASSERT_EQ(loaded.model.size(), saved.model.size());

  // A fresh model loaded from the file computes exactly what the saved one did.
  CheckpointMeta meta;
  ImageClassifier restored = LoadClassifierFromCheckpoint(path, &meta);
  model->eval();
  torch::NoGradGuard no_grad;
  torch::Tensor x = torch::randn({2, 3, 64, 64});
  EXPECT_TRUE(torch::equal(model->forward(x), restored->forward(x)));
  EXPECT_EQ(meta.class_names[2], "émeu");
  EXPECT_FALSE(PathExists(path + std::string(kTemporarySuffix)));
}

TEST(Checkpoint, NotACheckpointIsADataErrorNamingTheFile) {
  std::string path = TempPath("garbage.pt");
  WriteFileAtomic(path, "this is not a pickle");
  try {
    LoadCheckpoint(path);
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    EXPECT_EQ(e.path(), path);
  }
  // A pickled dict that is not ours.
  c10::Dict<std::string, int64_t> other;
  other.insert("epoch", 3);
  std::vector<char> bytes = torch::pickle_save(c10::IValue(other));
  WriteFileAtomic(path, std::string_view(bytes.data(), bytes.size()));
  EXPECT_THROW(LoadCheckpoint(path), DataError);
}

TEST(Checkpoint, WrongShapesAreNamed) {
  ImageClassifier four = MakeImageClassifier("small-resnet", 4);
  ImageClassifier five = MakeImageClassifier("small-resnet", 5);
  try {
    LoadModelState(*five, ModelState(*four), "x.pt");
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("fc."), std::string::npos) << e.what();
  }
}

// Python's torch.load reads our file and torchvision's resnet18 takes the weights
// unchanged (strict names and shapes) and computes the same logits.
TEST(Checkpoint, TorchvisionLoadsTheWeightsAndAgrees) {
  if (std::system("/usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null") != 0) {
    GTEST_SKIP() << "/usr/bin/python3 has no torch/torchvision (scripts/install-deps.sh installs them)";
  }
  torch::manual_seed(3);
  ImageClassifier model = MakeImageClassifier("resnet18", 6);
  // Non-trivial BatchNorm statistics, as after training.
  model->train();
  {
    torch::NoGradGuard no_grad;
    model->forward(torch::randn({4, 3, 64, 64}) * 2 + 0.5);
  }
  model->eval();
  Checkpoint c;
  c.meta.model = "resnet18";
  c.meta.num_classes = 6;
  c.meta.step = 12;
  c.meta.class_names = {"a", "b", "c", "d", "e", "f"};
  c.model = ModelState(*model);
  std::string path = TempPath("resnet18.pt");
  SaveCheckpoint(path, c);

  torch::NoGradGuard no_grad;
  torch::Tensor x = torch::randn({3, 3, 96, 96});
  c10::Dict<std::string, torch::Tensor> probe;
  probe.insert("input", x);
  probe.insert("logits", model->forward(x));
  std::vector<char> bytes = torch::pickle_save(c10::IValue(probe));
  std::string probe_path = TempPath("probe.pt");
  WriteFileAtomic(probe_path, std::string_view(bytes.data(), bytes.size()));

  std::string out = TempPath("check.json");
  std::string command = "/usr/bin/python3 " + IMGPIPE_SOURCE_DIR + "/src/train/check_checkpoint.py '" +
                        path + "' '" + probe_path + "' > '" + out + "'";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  nlohmann::json result = nlohmann::json::parse(ReadFile(out));
  EXPECT_EQ(result["format"], "imgpipe.checkpoint.v1");
  EXPECT_EQ(result["step"], 12);
  EXPECT_EQ(result["class_names"].size(), 6u);
  EXPECT_LT(result["max_abs_diff"].get<double>(), 1e-4);
}

}  // namespace
}  // namespace imgpipe::train
