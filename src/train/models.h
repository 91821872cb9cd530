// Image classifiers for training and feature extraction: simple-cnn, small-resnet,
// resnet18 and resnet50 (the ResNets with torchvision's layer structure and parameter
// names, so a state dict moves between imgpipe and torchvision unchanged).
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "train/model_names.h"

namespace imgpipe::train {

// A classifier split at its penultimate layer: Features (the trunk, any precision) then
// Classify (the output layer, always float32).
class ImageClassifierImpl : public torch::nn::Module {
 public:
  // x: N x 3 x H x W float (contiguous or channels-last) -> N x feature_dim().
  virtual torch::Tensor Features(const torch::Tensor& x) = 0;
  // N x feature_dim() -> N x num_classes logits, in float32 whatever autocast is on.
  virtual torch::Tensor Classify(const torch::Tensor& features) = 0;
  virtual int64_t feature_dim() const = 0;
  torch::Tensor forward(const torch::Tensor& x) { return Classify(Features(x)); }
};
using ImageClassifier = std::shared_ptr<ImageClassifierImpl>;

// A new model with random weights (torchvision's initialisation for the ResNets).
// Throws std::invalid_argument for an unknown name or num_classes < 2.
ImageClassifier MakeImageClassifier(const std::string& name, int64_t num_classes);

}  // namespace imgpipe::train
