// The exponential moving average of a model's weights, as torchvision's classification
// reference keeps it (--model-ema; utils.ExponentialMovingAverage, an AveragedModel with
// use_buffers=True): parameters and buffers averaged every `steps` optimizer steps, with
// the decay adjusted to the global batch and the epochs as train.py does, and reset to
// the model during warm-up epochs. Throws std::invalid_argument for bad options and
// DataError for a checkpoint whose average does not fit the model.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "train/model_ema_options.h"
#include "train/models.h"

namespace imgpipe::train {

class ModelEma {
 public:
  // An average of `model` (of architecture `name` with `num_classes` outputs), updated
  // every `steps` steps with `decay` (EmaDecayPerUpdate), starting as a copy of it on its
  // device (memory formats kept), with no update counted yet.
  ModelEma(const std::string& name, int64_t num_classes, torch::nn::Module& model, double decay, int64_t steps);

  // Called after step `step_in_epoch` of `epoch` (both from 0): every `steps`-th step
  // of the epoch (0, steps, 2 steps, ...) averages `model` in: a copy at the first
  // update, else avg = decay * avg + (1 - decay) * model, over parameters and buffers.
  // During warm-up (epoch < warmup_epochs) the count is reset after the update, so the
  // average follows the model until warm-up ends.
  void AfterStep(torch::nn::Module& model, int64_t step_in_epoch, int64_t epoch, double warmup_epochs);
  // One update (AveragedModel.update_parameters).
  void Update(torch::nn::Module& model);

  // The averaged model, in eval mode.
  ImageClassifierImpl& model() { return *average_; }
  int64_t updates() const { return updates_; }
  double decay() const { return decay_; }
  // The averaged parameters and buffers (CPU copies), for a checkpoint, and back; Load
  // throws DataError naming `path` when a tensor is missing or mis-shaped.
  std::vector<std::pair<std::string, torch::Tensor>> State();
  void Load(const std::vector<std::pair<std::string, torch::Tensor>>& state, int64_t updates,
            const std::string& path);

 private:
  ImageClassifier average_;
  const double decay_;
  const int64_t steps_;
  int64_t updates_ = 0;  // torchvision's n_averaged
};

}  // namespace imgpipe::train
