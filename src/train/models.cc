#include "train/models.h"

#include <stdexcept>

#include "train/autocast.h"

namespace imgpipe::train {
namespace {

namespace nn = torch::nn;

nn::Conv2d Conv(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t padding) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, kernel).stride(stride).padding(padding).bias(false));
}

// torchvision's BasicBlock (expansion 1) and Bottleneck (expansion 4), with its names:
// conv1/bn1, conv2/bn2[, conv3/bn3], downsample.{0,1}.
class ResidualBlockImpl : public nn::Module {
 public:
  ResidualBlockImpl(bool bottleneck, int64_t in, int64_t width, int64_t stride)
      : bottleneck_(bottleneck) {
    int64_t out = width * (bottleneck ? 4 : 1);
    if (bottleneck) {
      conv1_ = register_module("conv1", Conv(in, width, 1, 1, 0));
      bn1_ = register_module("bn1", nn::BatchNorm2d(width));
      conv2_ = register_module("conv2", Conv(width, width, 3, stride, 1));
      bn2_ = register_module("bn2", nn::BatchNorm2d(width));
      conv3_ = register_module("conv3", Conv(width, out, 1, 1, 0));
      bn3_ = register_module("bn3", nn::BatchNorm2d(out));
    } else {
      conv1_ = register_module("conv1", Conv(in, width, 3, stride, 1));
      bn1_ = register_module("bn1", nn::BatchNorm2d(width));
      conv2_ = register_module("conv2", Conv(width, width, 3, 1, 1));
      bn2_ = register_module("bn2", nn::BatchNorm2d(width));
    }
    if (stride != 1 || in != out) {
      downsample_ = register_module(
          "downsample", nn::Sequential(Conv(in, out, 1, stride, 0), nn::BatchNorm2d(out)));
    }
  }

  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor y = torch::relu(bn1_(conv1_(x)));
    y = bn2_(conv2_(y));
    if (bottleneck_) y = bn3_(conv3_(torch::relu(y)));
    torch::Tensor identity = downsample_ ? downsample_->forward(x) : x;
    return torch::relu(y + identity);
  }

 private:
  bool bottleneck_;
  nn::Conv2d conv1_{nullptr}, conv2_{nullptr}, conv3_{nullptr};
  nn::BatchNorm2d bn1_{nullptr}, bn2_{nullptr}, bn3_{nullptr};
  nn::Sequential downsample_{nullptr};
};
TORCH_MODULE(ResidualBlock);

// torchvision's ResNet: conv1/bn1/maxpool stem, layer1..layer4, avgpool, fc.
class ResNet : public ImageClassifierImpl {
 public:
  ResNet(bool bottleneck, std::array<int, 4> blocks, int64_t base_width, int64_t num_classes) {
    conv1_ = register_module("conv1", Conv(3, base_width, 7, 2, 3));
    bn1_ = register_module("bn1", nn::BatchNorm2d(base_width));
    int64_t in = base_width;
    for (int stage = 0; stage < 4; ++stage) {
      int64_t width = base_width << stage;
      nn::Sequential layer;
      for (int b = 0; b < blocks[stage]; ++b) {
        int64_t stride = (b == 0 && stage > 0) ? 2 : 1;
        layer->push_back(ResidualBlock(bottleneck, in, width, stride));
        in = width * (bottleneck ? 4 : 1);
      }
      layers_[stage] = register_module("layer" + std::to_string(stage + 1), layer);
    }
    feature_dim_ = in;
    fc_ = register_module("fc", nn::Linear(in, num_classes));
    // torchvision's initialisation: Kaiming normal (fan_out, ReLU) for convolutions,
    // BatchNorm weight 1 and bias 0; the Linear keeps its default.
    for (auto& m : modules(/*include_self=*/false)) {
      if (auto* conv = m->as<nn::Conv2d>()) {
        nn::init::kaiming_normal_(conv->weight, 0.0, torch::kFanOut, torch::kReLU);
      } else if (auto* bn = m->as<nn::BatchNorm2d>()) {
        nn::init::ones_(bn->weight);
        nn::init::zeros_(bn->bias);
      }
    }
  }

  torch::Tensor Features(const torch::Tensor& x) override {
    torch::Tensor y = torch::relu(bn1_(conv1_(x)));
    y = torch::max_pool2d(y, 3, 2, 1);
    for (auto& layer : layers_) y = layer->forward(y);
    return torch::adaptive_avg_pool2d(y, {1, 1}).flatten(1);
  }
  torch::Tensor Classify(const torch::Tensor& features) override {
    AutocastDisabledScope float32;
    return fc_(features.to(torch::kFloat32));
  }
  int64_t feature_dim() const override { return feature_dim_; }

 private:
  nn::Conv2d conv1_{nullptr};
  nn::BatchNorm2d bn1_{nullptr};
  std::array<nn::Sequential, 4> layers_{nullptr, nullptr, nullptr, nullptr};
  nn::Linear fc_{nullptr};
  int64_t feature_dim_ = 0;
};

// The classic small CNN: conv 64 3x3 + ReLU, max-pool (to an 8x8 grid, so any input
// size works), dense 1024 + ReLU, dense classes.
class SimpleCnn : public ImageClassifierImpl {
 public:
  explicit SimpleCnn(int64_t num_classes) {
    conv_ = register_module("conv", nn::Conv2d(nn::Conv2dOptions(3, 64, 3).padding(1)));
    dense_ = register_module("dense", nn::Linear(64 * 8 * 8, 1024));
    fc_ = register_module("fc", nn::Linear(1024, num_classes));
  }
  torch::Tensor Features(const torch::Tensor& x) override {
    torch::Tensor y = torch::relu(conv_(x));
    y = std::get<0>(torch::adaptive_max_pool2d(y, {8, 8}));
    return torch::relu(dense_(y.flatten(1)));
  }
  torch::Tensor Classify(const torch::Tensor& features) override {
    AutocastDisabledScope float32;
    return fc_(features.to(torch::kFloat32));
  }
  int64_t feature_dim() const override { return 1024; }

 private:
  nn::Conv2d conv_{nullptr};
  nn::Linear dense_{nullptr}, fc_{nullptr};
};

}  // namespace

const std::vector<std::string>& ImageClassifierNames() {
  static const std::vector<std::string> names = {"simple-cnn", "small-resnet", "resnet18",
                                                 "resnet50"};
  return names;
}

ImageClassifier MakeImageClassifier(const std::string& name, int64_t num_classes) {
  if (num_classes < 2) {
    throw std::invalid_argument("a classifier needs at least 2 classes, not " +
                                std::to_string(num_classes));
  }
  if (name == "simple-cnn") return std::make_shared<SimpleCnn>(num_classes);
  // small-resnet: ResNet-18's structure at a quarter of the width with one block per
  // stage (feature dimension 128), for CPU demos.
  if (name == "small-resnet") return std::make_shared<ResNet>(false, std::array{1, 1, 1, 1}, 16, num_classes);
  if (name == "resnet18") return std::make_shared<ResNet>(false, std::array{2, 2, 2, 2}, 64, num_classes);
  if (name == "resnet50") return std::make_shared<ResNet>(true, std::array{3, 4, 6, 3}, 64, num_classes);
  std::string known;
  for (const std::string& n : ImageClassifierNames()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown model '" + name + "' (known: " + known + ")");
}

}  // namespace imgpipe::train
