#include "env/nvidia_driver.h"

#include <algorithm>
#include <cctype>

#include "env/nvidia_abi.h"

namespace imgpipe::env {
namespace {

// A version-looking token: digits and dots, with at least one dot ("550.54.15").
bool IsVersionToken(std::string_view token) {
  return !token.empty() && std::isdigit(static_cast<unsigned char>(token[0])) &&
         token.find('.') != std::string_view::npos &&
         std::all_of(token.begin(), token.end(), [](char c) {
           return c == '.' || std::isdigit(static_cast<unsigned char>(c));
         });
}

// "Driver/library version mismatch (18)", from nvmlErrorString when there is one.
std::string NvmlErrorText(const LoadedLibrary& nvml, abi::NvmlReturn code) {
  auto error_string = nvml.Function<abi::NvmlErrorString>("nvmlErrorString");
  const char* text = error_string ? error_string(code) : nullptr;
  return std::string(text ? text : "NVML error") + " (" + std::to_string(code) + ")";
}

// Fills the NVML part of `info`: driver version, CUDA version, GPUs.
// The driver's version and the CUDA version it supports, from a started NVML.
void ReadNvmlDriver(const LoadedLibrary& nvml, NvidiaDriverInfo* info) {
  if (auto get = nvml.Function<abi::NvmlSystemGetDriverVersion>("nvmlSystemGetDriverVersion")) {
    char version[abi::kNvmlDriverVersionBufferSize] = {};
    if (get(version, sizeof(version)) == 0) info->driver_version = version;
  }
  if (auto get = nvml.Function<abi::NvmlSystemGetCudaDriverVersionV2>(
          "nvmlSystemGetCudaDriverVersion_v2")) {
    int cuda = 0;
    if (get(&cuda) == 0 && info->driver_cuda_version == 0) info->driver_cuda_version = cuda;
  }
}

// GPU `device` (index `index`) as NVML describes it; a query the GPU does not support
// leaves its field unknown.
GpuInfo ReadNvmlGpu(const LoadedLibrary& nvml, unsigned int index, abi::NvmlDevice device) {
  GpuInfo gpu;
  gpu.index = static_cast<int>(index);
  gpu.source = "NVML";
  char name[abi::kNvmlDeviceNameBufferSize] = {};
  auto name_of = nvml.Function<abi::NvmlDeviceGetName>("nvmlDeviceGetName");
  if (name_of && name_of(device, name, sizeof(name)) == 0) gpu.name = name;
  abi::NvmlMemory memory{};
  auto memory_of = nvml.Function<abi::NvmlDeviceGetMemoryInfo>("nvmlDeviceGetMemoryInfo");
  if (memory_of && memory_of(device, &memory) == 0) {
    gpu.memory_total_bytes = memory.total;
    gpu.memory_used_bytes = memory.used;
  }
  int major = 0, minor = 0;
  auto capability_of =
      nvml.Function<abi::NvmlDeviceGetCudaComputeCapability>("nvmlDeviceGetCudaComputeCapability");
  if (capability_of && capability_of(device, &major, &minor) == 0) {
    gpu.compute_capability_major = major;
    gpu.compute_capability_minor = minor;
  }
  abi::NvmlUtilization rates{};
  auto utilization_of =
      nvml.Function<abi::NvmlDeviceGetUtilizationRates>("nvmlDeviceGetUtilizationRates");
  if (utilization_of && utilization_of(device, &rates) == 0) {
    gpu.utilization_percent = static_cast<int>(rates.gpu);
  }
  return gpu;
}

// Every GPU a started NVML counts (one it cannot open: named unreadable); a failed
// count sets info->nvml_error.
void ReadNvmlGpus(const LoadedLibrary& nvml, NvidiaDriverInfo* info) {
  auto count = nvml.Function<abi::NvmlDeviceGetCountV2>("nvmlDeviceGetCount_v2");
  auto handle_of =
      nvml.Function<abi::NvmlDeviceGetHandleByIndexV2>("nvmlDeviceGetHandleByIndex_v2");
  unsigned int devices = 0;
  if (!count || !handle_of) {
    info->nvml_error = "libnvidia-ml.so.1 has no nvmlDeviceGetCount_v2";
    return;
  }
  if (abi::NvmlReturn status = count(&devices); status != 0) {
    info->nvml_error_code = status;
    info->nvml_error = "nvmlDeviceGetCount_v2: " + NvmlErrorText(nvml, status);
    return;
  }
  for (unsigned int i = 0; i < devices; ++i) {
    abi::NvmlDevice device = nullptr;
    if (abi::NvmlReturn status = handle_of(i, &device); status != 0) {
      GpuInfo gpu;
      gpu.index = static_cast<int>(i);
      gpu.source = "NVML";
      gpu.name = "(unreadable: " + NvmlErrorText(nvml, status) + ")";
      info->gpus.push_back(gpu);
      continue;
    }
    info->gpus.push_back(ReadNvmlGpu(nvml, i, device));
  }
}

void ProbeNvml(LibraryLoader& loader, NvidiaDriverInfo* info) {
  std::string load_error;
  std::unique_ptr<LoadedLibrary> nvml = loader.Open("libnvidia-ml.so.1", &load_error);
  if (!nvml) {
    info->nvml_error = load_error;
    return;
  }
  info->nvml_soname = "libnvidia-ml.so.1";
  info->nvml_path = nvml->Path();
  auto init = nvml->Function<abi::NvmlInitV2>("nvmlInit_v2");
  auto shutdown = nvml->Function<abi::NvmlShutdown>("nvmlShutdown");
  if (!init || !shutdown) {
    info->nvml_error = "libnvidia-ml.so.1 has no nvmlInit_v2 (a driver older than 325)";
    return;
  }
  // 1. Start NVML; a failure here (no driver, version mismatch) says the most.
  if (abi::NvmlReturn status = init(); status != 0) {
    info->nvml_error_code = status;
    info->nvml_error = "nvmlInit_v2: " + NvmlErrorText(*nvml, status);
    return;
  }
  // 2. The driver, then each GPU.
  ReadNvmlDriver(*nvml, info);
  ReadNvmlGpus(*nvml, info);
  shutdown();
}

// "CUDA_ERROR_NO_DEVICE (100)", from cuGetErrorName when there is one.
std::string CudaErrorText(const LoadedLibrary& cuda, int code) {
  auto error_name = cuda.Function<abi::CuGetErrorName>("cuGetErrorName");
  const char* name = nullptr;
  if (!error_name || error_name(code, &name) != 0 || name == nullptr) name = "CUDA error";
  return std::string(name) + " (" + std::to_string(code) + ")";
}

// Fills the libcuda part of `info`: the CUDA version (it wins over NVML's), cuInit, and
// the devices CUDA sees (kept in `cuda_gpus`).
void ProbeLibcuda(LibraryLoader& loader, NvidiaDriverInfo* info, std::vector<GpuInfo>* cuda_gpus) {
  std::unique_ptr<LoadedLibrary> cuda = loader.Open("libcuda.so.1", &info->libcuda_error);
  if (!cuda) return;
  info->libcuda_loaded = true;
  info->libcuda_path = cuda->Path();
  int version = 0;
  auto get_version = cuda->Function<abi::CuDriverGetVersion>("cuDriverGetVersion");
  if (get_version && get_version(&version) == 0 && version > 0) info->driver_cuda_version = version;
  auto init = cuda->Function<abi::CuInit>("cuInit");
  if (!init) {
    info->cuda_init_error = "libcuda.so.1 has no cuInit";
    return;
  }
  if (int status = init(0); status != 0) {
    info->cuda_init_code = status;
    info->cuda_init_error = "cuInit: " + CudaErrorText(*cuda, status);
    return;
  }
  info->cuda_init_ok = true;
  auto count = cuda->Function<abi::CuDeviceGetCount>("cuDeviceGetCount");
  auto device_of = cuda->Function<abi::CuDeviceGet>("cuDeviceGet");
  auto name_of = cuda->Function<abi::CuDeviceGetName>("cuDeviceGetName");
  auto memory_of = cuda->Function<abi::CuDeviceTotalMemV2>("cuDeviceTotalMem_v2");
  auto attribute_of = cuda->Function<abi::CuDeviceGetAttribute>("cuDeviceGetAttribute");
  int devices = 0;
  if (!count || !device_of || count(&devices) != 0) return;
  for (int i = 0; i < devices; ++i) {
    GpuInfo gpu;
    gpu.index = i;
    gpu.source = "libcuda";
    int device = 0;
    if (device_of(&device, i) == 0) {
      char name[256] = {};
      if (name_of && name_of(name, sizeof(name), device) == 0) gpu.name = name;
      size_t bytes = 0;
      if (memory_of && memory_of(&bytes, device) == 0) gpu.memory_total_bytes = bytes;
      int major = 0, minor = 0;
      if (attribute_of &&
          attribute_of(&major, abi::kCuDeviceAttributeComputeCapabilityMajor, device) == 0 &&
          attribute_of(&minor, abi::kCuDeviceAttributeComputeCapabilityMinor, device) == 0) {
        gpu.compute_capability_major = major;
        gpu.compute_capability_minor = minor;
      }
    }
    cuda_gpus->push_back(gpu);
  }
}

// GPUs as the kernel module lists them (/proc/driver/nvidia/gpus/BUS/information,
// "Model: \t NVIDIA A100-SXM4-80GB"), for when NVML gives no answer.
std::vector<GpuInfo> ProcGpus(const SystemRoot& root) {
  std::vector<GpuInfo> gpus;
  for (const std::string& bus : root.List("/proc/driver/nvidia/gpus")) {
    GpuInfo gpu;
    gpu.index = static_cast<int>(gpus.size());
    gpu.source = "/proc/driver/nvidia";
    gpu.name = "GPU at " + bus;
    std::string text =
        root.ReadText("/proc/driver/nvidia/gpus/" + bus + "/information").value_or("");
    for (const std::string& line : SplitAndTrim(text, '\n')) {
      if (line.rfind("Model:", 0) == 0) gpu.name = std::string(TrimWhitespace(line.substr(6)));
    }
    gpus.push_back(gpu);
  }
  return gpus;
}

// NVIDIA (vendor 0x10de) VGA (class 0x0300xx) and 3D (0x0302xx) controllers.
int CountPciGpus(const SystemRoot& root) {
  int count = 0;
  for (const std::string& device : root.List("/sys/bus/pci/devices")) {
    std::string base = "/sys/bus/pci/devices/" + device;
    std::string vendor(TrimWhitespace(root.ReadText(base + "/vendor").value_or("")));
    std::string device_class(TrimWhitespace(root.ReadText(base + "/class").value_or("")));
    if (vendor == "0x10de" &&
        (device_class.rfind("0x0300", 0) == 0 || device_class.rfind("0x0302", 0) == 0)) {
      ++count;
    }
  }
  return count;
}

}  // namespace

int NvidiaDriverInfo::GpuCount() const {
  bool visible_only = nvml_ok() || (!gpus.empty() && gpus.front().source == "libcuda");
  if (visible_only) return static_cast<int>(gpus.size());
  return std::max(static_cast<int>(gpus.size()), pci_gpu_count);
}

std::string ParseKernelModuleVersion(std::string_view text) {
  std::string_view line = text.substr(0, text.find('\n'));
  size_t at = 0;
  while (at < line.size()) {
    size_t begin = line.find_first_not_of(" \t", at);
    if (begin == std::string_view::npos) break;
    size_t end = line.find_first_of(" \t", begin);
    std::string_view token = line.substr(begin, end == std::string_view::npos ? end : end - begin);
    if (IsVersionToken(token)) return std::string(token);
    at = end;
  }
  return "";
}

NvidiaDriverInfo ProbeNvidiaDriver(const SystemRoot& root, LibraryLoader& loader) {
  NvidiaDriverInfo info;
  if (std::optional<std::string> text = root.ReadText("/proc/driver/nvidia/version")) {
    info.kernel_module_version = ParseKernelModuleVersion(*text);
    if (info.kernel_module_version.empty()) info.kernel_module_version = "unknown version";
  }
  std::vector<GpuInfo> cuda_gpus;
  ProbeLibcuda(loader, &info, &cuda_gpus);
  ProbeNvml(loader, &info);
  if (info.driver_version.empty() && info.kernel_module_version != "unknown version") {
    info.driver_version = info.kernel_module_version;
  }
  if (info.gpus.empty()) info.gpus = std::move(cuda_gpus);
  if (info.gpus.empty()) info.gpus = ProcGpus(root);
  info.pci_gpu_count = CountPciGpus(root);
  return info;
}

}  // namespace imgpipe::env
