#include "env/gpu_sampler.h"

#include "env/nvidia_abi.h"

namespace imgpipe::env {

GpuSampler::GpuSampler(LibraryLoader& loader) {
  std::string error;
  nvml_ = loader.Open("libnvidia-ml.so.1", &error);
  if (!nvml_) return;
  auto init = nvml_->Function<abi::NvmlInitV2>("nvmlInit_v2");
  initialised_ = init != nullptr && init() == 0;
}

GpuSampler::~GpuSampler() {
  if (!initialised_) return;
  if (auto shutdown = nvml_->Function<abi::NvmlShutdown>("nvmlShutdown")) shutdown();
}

std::optional<GpuSample> GpuSampler::Sample(int index) const {
  if (!initialised_ || index < 0) return std::nullopt;
  auto handle_of = nvml_->Function<abi::NvmlDeviceGetHandleByIndexV2>("nvmlDeviceGetHandleByIndex_v2");
  auto utilization_of = nvml_->Function<abi::NvmlDeviceGetUtilizationRates>("nvmlDeviceGetUtilizationRates");
  auto memory_of = nvml_->Function<abi::NvmlDeviceGetMemoryInfo>("nvmlDeviceGetMemoryInfo");
  if (!handle_of || !utilization_of || !memory_of) return std::nullopt;
  abi::NvmlDevice device = nullptr;
  abi::NvmlUtilization rates{};
  abi::NvmlMemory memory{};
  if (handle_of(static_cast<unsigned>(index), &device) != 0 || utilization_of(device, &rates) != 0 ||
      memory_of(device, &memory) != 0) {
    return std::nullopt;
  }
  return GpuSample{static_cast<int>(rates.gpu), memory.used, memory.total};
}

}  // namespace imgpipe::env
