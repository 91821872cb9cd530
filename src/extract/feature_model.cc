#include "extract/feature_model.h"

#include "extract/script_layer.h"
#include "train/checkpoint.h"
#include "util/error.h"

namespace imgpipe::extract {
namespace {

class CheckpointModel : public FeatureModel {
 public:
  CheckpointModel(ModelDescription description, train::ImageClassifier classifier)
      : FeatureModel(std::move(description)), classifier_(std::move(classifier)) {
    classifier_->eval();
  }

 protected:
  torch::Tensor RunLayer(const torch::Tensor& images) override {
    return description().layer == "logits" ? classifier_->forward(images)
                                           : classifier_->Features(images);
  }

 private:
  train::ImageClassifier classifier_;
};

class TorchScriptModel : public FeatureModel {
 public:
  TorchScriptModel(ModelDescription description, ScriptLayer layer)
      : FeatureModel(std::move(description)), layer_(std::move(layer)) {}

 protected:
  torch::Tensor RunLayer(const torch::Tensor& images) override { return layer_.Run(images); }

 private:
  ScriptLayer layer_;
};

// The first line of an exception's message (libtorch's carry a C++ backtrace).
std::string FirstLine(const std::string& message) { return message.substr(0, message.find('\n')); }

}  // namespace

torch::Tensor FeatureModel::Run(const torch::Tensor& images) {
  c10::InferenceMode inference;
  torch::Tensor out = RunLayer(images);
  if (out.dim() == 4) out = out.mean({2, 3});
  if (out.dim() != 2) out = out.reshape({out.size(0), -1});
  return out.to(torch::kFloat32).contiguous();
}

std::unique_ptr<FeatureModel> LoadFeatureModel(const std::string& path, const std::string& layer) {
  ModelDescription description;
  description.path = path;
  description.layer = layer;
  // 1. An imgpipe checkpoint?
  std::string checkpoint_error;
  try {
    train::CheckpointMeta meta;
    train::ImageClassifier classifier = train::LoadClassifierFromCheckpoint(path, &meta);
    if (layer != "penultimate" && layer != "logits") {
      throw Error(path + ": an imgpipe checkpoint has the layers penultimate and logits, not '" +
                  layer + "'");
    }
    description.kind = "checkpoint";
    description.name = meta.model;
    description.layer_resolved = layer == "logits" ? "forward (logits)" : "Features (penultimate)";
    description.image_size = meta.image_size;
    description.class_names = meta.class_names;
    return std::make_unique<CheckpointModel>(std::move(description), std::move(classifier));
  } catch (const DataError& e) {
    checkpoint_error = FirstLine(e.reason());
  } catch (const Error&) {
    throw;  // unreadable file, or a checkpoint asked for another layer
  } catch (const std::exception& e) {
    checkpoint_error = FirstLine(e.what());
  }
  // 2. A TorchScript module?
  torch::jit::Module module;
  try {
    module = torch::jit::load(path, torch::kCPU);
  } catch (const std::exception& e) {
    throw DataError(path, std::nullopt,
                    "neither an imgpipe checkpoint (" + checkpoint_error +
                        ") nor a TorchScript module (" + FirstLine(e.what()) + ")");
  }
  description.kind = "torchscript";
  ScriptLayer script_layer(std::move(module), layer);
  description.layer_resolved = script_layer.description();
  return std::make_unique<TorchScriptModel>(std::move(description), std::move(script_layer));
}

int64_t OutputDimension(FeatureModel& model, int image_size) {
  torch::Tensor probe = torch::zeros({1, 3, image_size, image_size}, torch::kFloat32);
  return model.Run(probe).size(1);
}

}  // namespace imgpipe::extract
