// The NVIDIA driver and the GPUs it drives: the kernel module (/proc/driver/nvidia),
// NVML (libnvidia-ml.so.1), the CUDA driver library (libcuda.so.1) and NVIDIA
// controllers on the PCI bus (/sys/bus/pci), each read only when present.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "env/library_loader.h"
#include "env/system_root.h"

namespace imgpipe::env {

struct GpuInfo {
  int index = 0;
  std::string name;
  std::string source;               // "NVML", "libcuda" or "/proc/driver/nvidia"
  uint64_t memory_total_bytes = 0;  // 0: unknown
  uint64_t memory_used_bytes = 0;
  int compute_capability_major = -1;  // -1: unknown
  int compute_capability_minor = -1;
  int utilization_percent = -1;  // GPU busy time over the last sample; -1: unknown
};

struct NvidiaDriverInfo {
  std::string kernel_module_version;  // from /proc/driver/nvidia/version; "": not loaded
  // NVML.
  std::string nvml_soname;  // "" when libnvidia-ml could not be loaded
  std::string nvml_path;
  int nvml_error_code = 0;  // the failing NVML call's return code (0: none failed)
  std::string nvml_error;   // why NVML gave no answer ("" when it did)
  // The driver: version (NVML, else the kernel module) and the newest CUDA it
  // supports (cuDriverGetVersion, else NVML; 1000 * major + 10 * minor; 0: unknown).
  std::string driver_version;
  int driver_cuda_version = 0;
  // libcuda.so.1, the CUDA driver library, and cuInit(0) through it.
  bool libcuda_loaded = false;
  std::string libcuda_path;
  std::string libcuda_error;  // why it did not load
  bool cuda_init_ok = false;
  int cuda_init_code = 0;       // cuInit's CUresult when it failed
  std::string cuda_init_error;  // "cuInit: CUDA_ERROR_NO_DEVICE (100)"
  // From NVML, else from libcuda (cuDeviceGet*), else from /proc/driver/nvidia/gpus.
  std::vector<GpuInfo> gpus;
  int pci_gpu_count = 0;  // NVIDIA VGA / 3D controllers on the PCI bus (sysfs)

  // NVML answered every question.
  bool nvml_ok() const { return !nvml_soname.empty() && nvml_error.empty(); }
  // The GPUs present: NVML's or libcuda's (in a container, those given to it; sysfs
  // shows the host's), else the most that /proc or the PCI bus show.
  int GpuCount() const;
};

// Reads everything above. Never throws for a missing part: each is left empty.
NvidiaDriverInfo ProbeNvidiaDriver(const SystemRoot& root, LibraryLoader& loader);

// The driver version in the text of /proc/driver/nvidia/version ("NVRM version: NVIDIA
// UNIX x86_64 Kernel Module  550.54.15  Tue Mar 5 ..."); "" when there is none.
std::string ParseKernelModuleVersion(std::string_view text);

}  // namespace imgpipe::env
