// Dynamic loss scaling for fp16 training, as torch.cuda.amp.GradScaler: the loss is
// multiplied by `scale` before backward; the gradients are divided by it before the
// step; a step whose gradients hold inf or nan is skipped and the scale halved; after
// `growth_interval` good steps in a row the scale doubles.
#pragma once

#include <torch/types.h>  // tensors only: torch/torch.h would double the compile time

#include <vector>

namespace imgpipe::train {

class DynamicLossScaler {
 public:
  // Disabled (scale 1, never skips) unless `enabled`.
  explicit DynamicLossScaler(bool enabled, double initial_scale = 65536.0,
                             int growth_interval = 2000, double growth_factor = 2.0,
                             double backoff_factor = 0.5);

  bool enabled() const { return enabled_; }
  double scale() const { return scale_; }
  void set_scale(double scale) { scale_ = scale; }

  // loss * scale (the loss itself when disabled).
  torch::Tensor Scale(const torch::Tensor& loss) const;
  // Divides every gradient by the scale, and returns whether all of them are finite
  // (true when disabled). Gradients must be the same on every rank (after all-reduce)
  // so that every rank decides alike.
  bool UnscaleAndCheck(const std::vector<torch::Tensor>& parameters) const;
  // After a step: `finite` false halves the scale and resets the run of good steps;
  // true counts one good step, doubling the scale after growth_interval of them.
  void Update(bool finite);
  int64_t skipped_steps() const { return skipped_; }

 private:
  bool enabled_;
  double scale_;
  int growth_interval_;
  double growth_factor_;
  double backoff_factor_;
  int good_steps_ = 0;
  int64_t skipped_ = 0;
};

// Learning rate at `step` (0-based) of `total_steps`: linear warm-up from lr/warmup_steps
// over the first `warmup_steps`, then cosine decay to zero.
double LearningRateAt(int64_t step, int64_t total_steps, int64_t warmup_steps, double lr);

}  // namespace imgpipe::train
