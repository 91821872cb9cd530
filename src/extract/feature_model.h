// The models imgpipe extract and classify run: an imgpipe checkpoint or a TorchScript
// file, cut at one layer, mapping preprocessed images to one row per image.
#pragma once

#include <torch/types.h>  // tensors only: torch/torch.h would double the compile time

#include <memory>
#include <string>
#include <vector>

namespace imgpipe::extract {

struct ModelDescription {
  std::string path;
  std::string kind;            // "checkpoint" or "torchscript"
  std::string name;            // checkpoint: the architecture (e.g. "small-resnet"); else ""
  std::string layer;           // as asked: "penultimate", "logits" or a submodule name
  std::string layer_resolved;  // what it computes, e.g. "input of fc (Linear)"
  int image_size = 224;        // checkpoint: its training crop; TorchScript: 224
  std::vector<std::string> class_names;  // checkpoint: its class names (may be empty)
};

// A model cut at one layer. Not thread-safe: one caller at a time.
class FeatureModel {
 public:
  virtual ~FeatureModel() = default;
  // images: N x 3 x S x S float32, the eval preset's output -> N x D float32, contiguous:
  // a 4-D layer output (N x C x H x W) is averaged over H and W, others are flattened.
  torch::Tensor Run(const torch::Tensor& images);
  const ModelDescription& description() const { return description_; }

 protected:
  explicit FeatureModel(ModelDescription description) : description_(std::move(description)) {}
  // The layer's raw output.
  virtual torch::Tensor RunLayer(const torch::Tensor& images) = 0;

 private:
  ModelDescription description_;
};

// Loads `path` cut at `layer`: as an imgpipe checkpoint (train/checkpoint.h; layers
// "penultimate" = Features, "logits" = forward) when it is one, else as a TorchScript
// module (script_layer.h). The model is in eval mode on the CPU. Throws DataError
// naming the path when the file is neither, Error for an unknown layer.
std::unique_ptr<FeatureModel> LoadFeatureModel(const std::string& path, const std::string& layer);

// Columns of Run's output for images of image_size x image_size (runs one zero image).
int64_t OutputDimension(FeatureModel& model, int image_size);

}  // namespace imgpipe::extract
