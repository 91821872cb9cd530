// Mixed precision scopes over ATen's autocast switches, as Python's torch.autocast:
// the 1.x names (set_cpu_enabled, set_autocast_cpu_dtype) and the 2.4+ per-device ones
// are chosen from torch/version.h, so the same code builds against both.
#pragma once

#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

namespace imgpipe::train {

// Runs the ops of its lifetime in `dtype` (bf16, or fp16 on CUDA) where autocast's
// tables allow, on `device`. Disabled (a no-op) when `enabled` is false. Restores the
// previous settings and, at the outermost exit, clears the cast cache.
class AutocastScope {
 public:
  AutocastScope(c10::DeviceType device, c10::ScalarType dtype, bool enabled = true);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool active_;
  c10::DeviceType device_;
  bool previous_enabled_ = false;
  c10::ScalarType previous_dtype_ = c10::ScalarType::Float;
};

// Turns autocast off on every device for its lifetime (a float32 island, such as the
// output layer and the loss), then restores it.
class AutocastDisabledScope {
 public:
  AutocastDisabledScope();
  ~AutocastDisabledScope();
  AutocastDisabledScope(const AutocastDisabledScope&) = delete;
  AutocastDisabledScope& operator=(const AutocastDisabledScope&) = delete;

 private:
  bool cpu_was_enabled_;
  bool cuda_was_enabled_;
};

}  // namespace imgpipe::train
