// GPU utilisation and memory sampled through NVML (libnvidia-ml.so.1, loaded at run
// time), for training logs: on a machine without the NVIDIA driver it is simply absent.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "env/library_loader.h"

namespace imgpipe::env {

struct GpuSample {
  int utilization_percent = 0;  // GPU busy time over NVML's last sample period
  uint64_t memory_used = 0;     // bytes
  uint64_t memory_total = 0;
};

class GpuSampler {
 public:
  // Loads NVML through `loader` and initialises it; available() is false when there is
  // no driver (or no NVML) here.
  explicit GpuSampler(LibraryLoader& loader);
  ~GpuSampler();
  GpuSampler(const GpuSampler&) = delete;
  GpuSampler& operator=(const GpuSampler&) = delete;

  bool available() const { return initialised_; }
  // The current reading of GPU `index` (CUDA's device order by default), or nullopt
  // when NVML is unavailable or the call fails.
  std::optional<GpuSample> Sample(int index) const;

 private:
  std::unique_ptr<LoadedLibrary> nvml_;
  bool initialised_ = false;
};

}  // namespace imgpipe::env
