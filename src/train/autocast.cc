#include "train/autocast.h"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

namespace imgpipe::train {
namespace {

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
bool IsEnabled(c10::DeviceType d) { return at::autocast::is_autocast_enabled(d); }
void SetEnabled(c10::DeviceType d, bool on) { at::autocast::set_autocast_enabled(d, on); }
c10::ScalarType GetDtype(c10::DeviceType d) { return at::autocast::get_autocast_dtype(d); }
void SetDtype(c10::DeviceType d, c10::ScalarType t) { at::autocast::set_autocast_dtype(d, t); }
#else
bool IsEnabled(c10::DeviceType d) {
  return d == c10::DeviceType::CUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
}
void SetEnabled(c10::DeviceType d, bool on) {
  if (d == c10::DeviceType::CUDA) {
    at::autocast::set_enabled(on);
  } else {
    at::autocast::set_cpu_enabled(on);
  }
}
c10::ScalarType GetDtype(c10::DeviceType d) {
  return d == c10::DeviceType::CUDA ? at::autocast::get_autocast_gpu_dtype()
                                    : at::autocast::get_autocast_cpu_dtype();
}
void SetDtype(c10::DeviceType d, c10::ScalarType t) {
  if (d == c10::DeviceType::CUDA) {
    at::autocast::set_autocast_gpu_dtype(t);
  } else {
    at::autocast::set_autocast_cpu_dtype(t);
  }
}
#endif

}  // namespace

AutocastScope::AutocastScope(c10::DeviceType device, c10::ScalarType dtype, bool enabled)
    : active_(enabled), device_(device) {
  if (!active_) return;
  previous_enabled_ = IsEnabled(device_);
  previous_dtype_ = GetDtype(device_);
  SetEnabled(device_, true);
  SetDtype(device_, dtype);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  SetEnabled(device_, previous_enabled_);
  SetDtype(device_, previous_dtype_);
}

AutocastDisabledScope::AutocastDisabledScope()
    : cpu_was_enabled_(IsEnabled(c10::DeviceType::CPU)),
      cuda_was_enabled_(IsEnabled(c10::DeviceType::CUDA)) {
  SetEnabled(c10::DeviceType::CPU, false);
  SetEnabled(c10::DeviceType::CUDA, false);
}

AutocastDisabledScope::~AutocastDisabledScope() {
  SetEnabled(c10::DeviceType::CPU, cpu_was_enabled_);
  SetEnabled(c10::DeviceType::CUDA, cuda_was_enabled_);
}

}  // namespace imgpipe::train
