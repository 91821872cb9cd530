// The options of a model's exponential moving average (--model-ema, model_ema.h), without
// libtorch: the CLI includes them.
#pragma once

#include <cstdint>

namespace imgpipe::train {

struct ModelEmaOptions {
  bool enabled = false;    // --model-ema
  double decay = 0.99998;  // --model-ema-decay (torchvision's default)
  int64_t steps = 32;      // --model-ema-steps: update every that many steps
};

// Throws std::invalid_argument naming the flag: decay outside [0, 1], steps < 1.
void CheckModelEmaOptions(const ModelEmaOptions& o);

// The decay of one update, torchvision's train.py: adjust = global_batch * steps / epochs,
// alpha = min(1, (1 - decay) * adjust), decay = 1 - alpha.
double EmaDecayPerUpdate(const ModelEmaOptions& o, int64_t global_batch, int epochs);

}  // namespace imgpipe::train
