#include "train/loss_scaler.h"

#include <cmath>

namespace imgpipe::train {

DynamicLossScaler::DynamicLossScaler(bool enabled, double initial_scale, int growth_interval,
                                     double growth_factor, double backoff_factor)
    : enabled_(enabled),
      scale_(enabled ? initial_scale : 1.0),
      growth_interval_(growth_interval),
      growth_factor_(growth_factor),
      backoff_factor_(backoff_factor) {}

torch::Tensor DynamicLossScaler::Scale(const torch::Tensor& loss) const {
  return enabled_ ? loss * scale_ : loss;
}

bool DynamicLossScaler::UnscaleAndCheck(const std::vector<torch::Tensor>& parameters) const {
  if (!enabled_) return true;
  torch::NoGradGuard no_grad;
  bool finite = true;
  for (const torch::Tensor& p : parameters) {
    torch::Tensor g = p.grad();
    if (!g.defined()) continue;
    g.mul_(1.0 / scale_);
    if (finite && !torch::isfinite(g).all().item<bool>()) finite = false;
  }
  return finite;
}

void DynamicLossScaler::Update(bool finite) {
  if (!enabled_) return;
  if (!finite) {
    scale_ *= backoff_factor_;
    good_steps_ = 0;
    ++skipped_;
    return;
  }
  if (++good_steps_ >= growth_interval_) {
    scale_ *= growth_factor_;
    good_steps_ = 0;
  }
}

double LearningRateAt(int64_t step, int64_t total_steps, int64_t warmup_steps, double lr) {
  if (warmup_steps > 0 && step < warmup_steps) {
    return lr * static_cast<double>(step + 1) / static_cast<double>(warmup_steps);
  }
  int64_t decay_steps = std::max<int64_t>(1, total_steps - warmup_steps);
  double progress = std::min(1.0, static_cast<double>(step - warmup_steps) / decay_steps);
  return lr * 0.5 * (1.0 + std::cos(M_PI * progress));
}

}  // namespace imgpipe::train
