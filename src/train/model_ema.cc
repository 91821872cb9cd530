#include "train/model_ema.h"

#include <algorithm>
#include <stdexcept>

#include "train/checkpoint.h"

namespace imgpipe::train {
namespace {

// The model's parameters then buffers, in registration order (AveragedModel's order).
std::vector<torch::Tensor> Tensors(torch::nn::Module& model) {
  std::vector<torch::Tensor> all = model.parameters();
  for (const torch::Tensor& b : model.buffers()) all.push_back(b);
  return all;
}

}  // namespace

void CheckModelEmaOptions(const ModelEmaOptions& o) {
  if (!(o.decay >= 0 && o.decay <= 1)) {
    throw std::invalid_argument("--model-ema-decay must be in [0, 1], not " + std::to_string(o.decay));
  }
  if (o.steps < 1) throw std::invalid_argument("--model-ema-steps must be at least 1");
}

double EmaDecayPerUpdate(const ModelEmaOptions& o, int64_t global_batch, int epochs) {
  const double adjust = static_cast<double>(global_batch) * static_cast<double>(o.steps) / epochs;
  const double alpha = std::min(1.0, (1.0 - o.decay) * adjust);
  return 1.0 - alpha;
}

ModelEma::ModelEma(const std::string& name, int64_t num_classes, torch::nn::Module& model, double decay,
                   int64_t steps)
    : average_(MakeImageClassifier(name, num_classes)), decay_(decay), steps_(steps) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> from = Tensors(model), to = Tensors(*average_);
  if (from.size() != to.size()) throw std::invalid_argument("ModelEma: the model is not a " + name);
  for (size_t i = 0; i < to.size(); ++i) to[i].set_data(from[i].detach().clone());  // device, format kept
  average_->eval();
  for (torch::Tensor& p : average_->parameters()) p.set_requires_grad(false);
}

void ModelEma::AfterStep(torch::nn::Module& model, int64_t step_in_epoch, int64_t epoch, double warmup_epochs) {
  if (step_in_epoch % steps_ != 0) return;
  Update(model);
  if (static_cast<double>(epoch) < warmup_epochs) updates_ = 0;  // keep copying during warm-up
}

void ModelEma::Update(torch::nn::Module& model) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> from = Tensors(model), to = Tensors(*average_);
  for (size_t i = 0; i < to.size(); ++i) {
    const torch::Tensor p = from[i].detach();
    if (updates_ == 0) {
      to[i].copy_(p);
    } else {  // torch's arithmetic: integer buffers promote to float and truncate back
      to[i].copy_(decay_ * to[i] + (1 - decay_) * p);
    }
  }
  ++updates_;
}

std::vector<std::pair<std::string, torch::Tensor>> ModelEma::State() { return ModelState(*average_); }

void ModelEma::Load(const std::vector<std::pair<std::string, torch::Tensor>>& state, int64_t updates,
                    const std::string& path) {
  LoadModelState(*average_, state, path);
  updates_ = updates;
}

}  // namespace imgpipe::train
