// For tests of the doctor: a fake machine's file tree (/proc, /sys, /dev ... below a
// temporary folder) and a library loader whose libraries are C functions defined here,
// answering from a FakeNvidiaStack the test fills in.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "env/library_loader.h"
#include "env/nvidia_abi.h"
#include "util/file.h"

namespace imgpipe::env {

// A fresh folder standing for "/", removed at the end of the test.
class FakeSystemTree {
 public:
  explicit FakeSystemTree(const std::string& name)
      : root_(
            JoinPath(::testing::TempDir(), "env_test_" + std::to_string(::getpid()) + "_" + name)) {
    std::filesystem::remove_all(root_);
    MakeDirectories(root_);
  }
  ~FakeSystemTree() { std::filesystem::remove_all(root_); }
  FakeSystemTree(const FakeSystemTree&) = delete;
  FakeSystemTree& operator=(const FakeSystemTree&) = delete;

  const std::string& root() const { return root_; }
  // Writes `text` to `absolute_path` below the root, making its folders.
  void Write(const std::string& absolute_path, const std::string& text) {
    std::string path = JoinPath(root_, absolute_path);
    MakeDirectories(DirName(path));
    WriteFileAtomic(path, text, /*sync=*/false);
  }
  void MakeDir(const std::string& absolute_path) {
    MakeDirectories(JoinPath(root_, absolute_path));
  }
  // A symbolic link at `absolute_path` to `target` (relative, as sysfs links are).
  void Link(const std::string& absolute_path, const std::string& target) {
    std::string path = JoinPath(root_, absolute_path);
    MakeDirectories(DirName(path));
    std::filesystem::create_symlink(target, path);
  }
  // A plain Linux machine: kernel, 32 CPUs, `available_kb` of free memory, cgroup v2
  // without limits, no GPU.
  void AddLinuxHost(uint64_t available_kb = 60'000'000) {
    Write("/proc/version",
          "Linux version 6.1.0-18-amd64 (debian-kernel@lists.debian.org) #1 SMP\n");
    Write("/proc/meminfo",
          "MemTotal:       65000000 kB\nMemFree:         1000000 kB\nMemAvailable:   " +
              std::to_string(available_kb) + " kB\n");
    Write("/proc/self/status",
          "Name:\timgpipe\nCpus_allowed:\tffffffff\nCpus_allowed_list:\t0-31\n");
    Write("/proc/self/cgroup", "0::/user.slice/session-1.scope\n");
    Write("/proc/1/cgroup", "0::/init.scope\n");
    Write("/sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
    Write("/sys/fs/cgroup/user.slice/cpu.max", "max 100000\n");
    Write("/sys/fs/cgroup/user.slice/memory.max", "max\n");
    Write("/sys/devices/system/cpu/online", "0-31\n");
  }
  // WSL2's kernel; with `gpu`, GPU paravirtualisation (/dev/dxg) and the Windows
  // driver's library folder (/usr/lib/wsl/lib).
  void AddWsl2(bool gpu) {
    Write("/proc/version",
          "Linux version 5.15.146.1-microsoft-standard-WSL2 (root@65c757a075e2) (gcc 11.2.0)\n");
    if (!gpu) return;
    Write("/dev/dxg", "");
    MakeDir("/usr/lib/wsl/lib");
  }
  // An NVIDIA controller on the PCI bus (class 0x030200: 3D controller).
  void AddPciGpu(const std::string& address) {
    Write("/sys/bus/pci/devices/" + address + "/vendor", "0x10de\n");
    Write("/sys/bus/pci/devices/" + address + "/class", "0x030200\n");
  }
  // The NVIDIA kernel module, version `version`.
  void AddKernelModule(const std::string& version) {
    Write("/proc/driver/nvidia/version",
          "NVRM version: NVIDIA UNIX x86_64 Kernel Module  " + version +
              "  Tue Mar  5 22:15:33 UTC 2024\nGCC version:  gcc version 12.2.0\n");
  }

 private:
  std::string root_;
};

// A loader of fake libraries: soname -> symbols.
class FakeLibraryLoader : public LibraryLoader {
 public:
  using Symbols = std::map<std::string, void*>;

  // Makes `soname` loadable from `path` with `symbols`.
  void Add(const std::string& soname, Symbols symbols, const std::string& path = "") {
    libraries_[soname] = {std::move(symbols),
                          path.empty() ? "/usr/lib/x86_64-linux-gnu/" + soname : path};
  }
  std::unique_ptr<LoadedLibrary> Open(const std::string& soname, std::string* error) override {
    opened.push_back(soname);
    auto it = libraries_.find(soname);
    if (it == libraries_.end()) {
      if (error) *error = soname + ": cannot open shared object file: No such file or directory";
      return nullptr;
    }
    return std::make_unique<Library>(it->second);
  }

  std::vector<std::string> opened;  // every soname asked for, in order

 private:
  struct Entry {
    Symbols symbols;
    std::string path;
  };
  class Library : public LoadedLibrary {
   public:
    explicit Library(Entry entry) : entry_(std::move(entry)) {}
    void* Symbol(const std::string& name) const override {
      auto it = entry_.symbols.find(name);
      return it == entry_.symbols.end() ? nullptr : it->second;
    }
    std::string Path() const override { return entry_.path; }

   private:
    Entry entry_;
  };
  std::map<std::string, Entry> libraries_;
};

// The function pointer `f` as a symbol address.
template <typename F>
void* SymbolOf(F f) {
  return reinterpret_cast<void*>(f);
}

struct FakeGpu {
  std::string name = "NVIDIA A100-SXM4-80GB";
  uint64_t memory_total = 85899345920ull;  // 80 GiB
  uint64_t memory_used = 536870912ull;     // 512 MiB
  int compute_major = 8, compute_minor = 0;
  unsigned utilization = 0;
};

// What the fake libraries answer. Set FakeNvidiaStack::current before loading them.
struct FakeNvidiaStack {
  int nvml_init_status = 0;
  int cuda_init_status = 0;  // cuInit's CUresult
  std::string driver_version = "550.54.15";
  int driver_cuda_version = 12040;
  std::vector<FakeGpu> gpus;
  int cudart_version = 12040;
  size_t cudnn_version = 90100;
  int cublas_version[3] = {12, 4, 5};
  int nccl_version = 21903;

  static inline FakeNvidiaStack* current = nullptr;
};

namespace fake {
inline FakeNvidiaStack& Stack() { return *FakeNvidiaStack::current; }
inline abi::NvmlReturn NvmlInit() { return Stack().nvml_init_status; }
inline abi::NvmlReturn NvmlShutdown() { return 0; }
inline const char* NvmlErrorString(abi::NvmlReturn code) {
  return code == abi::kNvmlErrorLibRmVersionMismatch ? "Driver/library version mismatch"
                                                     : "Unknown Error";
}
inline abi::NvmlReturn NvmlDriverVersion(char* out, unsigned int length) {
  std::strncpy(out, Stack().driver_version.c_str(), length - 1);
  return 0;
}
inline abi::NvmlReturn NvmlCudaVersion(int* version) {
  *version = Stack().driver_cuda_version;
  return 0;
}
inline abi::NvmlReturn NvmlCount(unsigned int* count) {
  *count = static_cast<unsigned int>(Stack().gpus.size());
  return 0;
}
inline abi::NvmlReturn NvmlHandle(unsigned int index, abi::NvmlDevice* device) {
  if (index >= Stack().gpus.size()) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  *device = reinterpret_cast<abi::NvmlDevice>(static_cast<uintptr_t>(index) + 1);
  return 0;
}
inline const FakeGpu& GpuOf(abi::NvmlDevice device) {
  return Stack().gpus.at(reinterpret_cast<uintptr_t>(device) - 1);
}
inline abi::NvmlReturn NvmlName(abi::NvmlDevice device, char* out, unsigned int length) {
  std::strncpy(out, GpuOf(device).name.c_str(), length - 1);
  return 0;
}
inline abi::NvmlReturn NvmlMemory(abi::NvmlDevice device, abi::NvmlMemory* memory) {
  memory->total = GpuOf(device).memory_total;
  memory->used = GpuOf(device).memory_used;
  memory->free = memory->total - memory->used;
  return 0;
}
inline abi::NvmlReturn NvmlCapability(abi::NvmlDevice device, int* major, int* minor) {
  *major = GpuOf(device).compute_major;
  *minor = GpuOf(device).compute_minor;
  return 0;
}
inline abi::NvmlReturn NvmlUtilization(abi::NvmlDevice device, abi::NvmlUtilization* rates) {
  rates->gpu = GpuOf(device).utilization;
  rates->memory = 0;
  return 0;
}
inline int CuDriverGetVersion(int* version) {
  *version = Stack().driver_cuda_version;
  return 0;
}
inline int CuInit(unsigned int) { return Stack().cuda_init_status; }
inline int CuGetErrorName(int error, const char** name) {
  *name = error == abi::kCudaErrorNoDevice ? "CUDA_ERROR_NO_DEVICE" : "CUDA_ERROR_UNKNOWN";
  return 0;
}
inline int CuDeviceGetCount(int* count) {
  *count = static_cast<int>(Stack().gpus.size());
  return 0;
}
inline int CuDeviceGet(int* device, int ordinal) {
  *device = ordinal;
  return 0;
}
inline int CuDeviceGetName(char* out, int length, int device) {
  std::strncpy(out, Stack().gpus.at(device).name.c_str(), length - 1);
  return 0;
}
inline int CuDeviceTotalMem(size_t* bytes, int device) {
  *bytes = Stack().gpus.at(device).memory_total;
  return 0;
}
inline int CuDeviceGetAttribute(int* value, int attribute, int device) {
  if (attribute == abi::kCuDeviceAttributeComputeCapabilityMajor)
    *value = Stack().gpus.at(device).compute_major;
  if (attribute == abi::kCuDeviceAttributeComputeCapabilityMinor)
    *value = Stack().gpus.at(device).compute_minor;
  return 0;
}
inline int CudaRuntimeGetVersion(int* version) {
  *version = Stack().cudart_version;
  return 0;
}
inline size_t CudnnGetVersion() { return Stack().cudnn_version; }
inline int CublasGetProperty(int type, int* value) {
  if (type < 0 || type > 2) return 7;  // CUBLAS_STATUS_INVALID_VALUE
  *value = Stack().cublas_version[type];
  return 0;
}
inline int NcclGetVersion(int* version) {
  *version = Stack().nccl_version;
  return 0;
}
}  // namespace fake

// Tests whose fake libraries answer from `stack_`, loaded through `loader_`.
class FakeNvidiaTest : public ::testing::Test {
 protected:
  void SetUp() override { FakeNvidiaStack::current = &stack_; }
  void TearDown() override { FakeNvidiaStack::current = nullptr; }
  FakeNvidiaStack stack_;
  FakeLibraryLoader loader_;
};

// The fake NVML, typed against the ABI declarations so a wrong signature fails to build.
inline FakeLibraryLoader::Symbols FakeNvmlSymbols() {
  return {{"nvmlInit_v2", SymbolOf<abi::NvmlInitV2>(fake::NvmlInit)},
          {"nvmlShutdown", SymbolOf<abi::NvmlShutdown>(fake::NvmlShutdown)},
          {"nvmlErrorString", SymbolOf<abi::NvmlErrorString>(fake::NvmlErrorString)},
          {"nvmlSystemGetDriverVersion",
           SymbolOf<abi::NvmlSystemGetDriverVersion>(fake::NvmlDriverVersion)},
          {"nvmlSystemGetCudaDriverVersion_v2",
           SymbolOf<abi::NvmlSystemGetCudaDriverVersionV2>(fake::NvmlCudaVersion)},
          {"nvmlDeviceGetCount_v2", SymbolOf<abi::NvmlDeviceGetCountV2>(fake::NvmlCount)},
          {"nvmlDeviceGetHandleByIndex_v2",
           SymbolOf<abi::NvmlDeviceGetHandleByIndexV2>(fake::NvmlHandle)},
          {"nvmlDeviceGetName", SymbolOf<abi::NvmlDeviceGetName>(fake::NvmlName)},
          {"nvmlDeviceGetMemoryInfo", SymbolOf<abi::NvmlDeviceGetMemoryInfo>(fake::NvmlMemory)},
          {"nvmlDeviceGetCudaComputeCapability",
           SymbolOf<abi::NvmlDeviceGetCudaComputeCapability>(fake::NvmlCapability)},
          {"nvmlDeviceGetUtilizationRates",
           SymbolOf<abi::NvmlDeviceGetUtilizationRates>(fake::NvmlUtilization)}};
}

// The driver's libcuda.so.1, loaded from `path`.
inline void AddFakeLibcuda(FakeLibraryLoader& loader, const std::string& path = "") {
  loader.Add(
      "libcuda.so.1",
      {{"cuDriverGetVersion", SymbolOf<abi::CuDriverGetVersion>(fake::CuDriverGetVersion)},
       {"cuInit", SymbolOf<abi::CuInit>(fake::CuInit)},
       {"cuGetErrorName", SymbolOf<abi::CuGetErrorName>(fake::CuGetErrorName)},
       {"cuDeviceGetCount", SymbolOf<abi::CuDeviceGetCount>(fake::CuDeviceGetCount)},
       {"cuDeviceGet", SymbolOf<abi::CuDeviceGet>(fake::CuDeviceGet)},
       {"cuDeviceGetName", SymbolOf<abi::CuDeviceGetName>(fake::CuDeviceGetName)},
       {"cuDeviceTotalMem_v2", SymbolOf<abi::CuDeviceTotalMemV2>(fake::CuDeviceTotalMem)},
       {"cuDeviceGetAttribute", SymbolOf<abi::CuDeviceGetAttribute>(fake::CuDeviceGetAttribute)}},
      path);
}
// Adds the driver's libraries: libnvidia-ml.so.1 and libcuda.so.1 (from `libcuda_path`).
inline void AddFakeDriver(FakeLibraryLoader& loader, const std::string& libcuda_path = "") {
  loader.Add("libnvidia-ml.so.1", FakeNvmlSymbols());
  AddFakeLibcuda(loader, libcuda_path);
}
inline void AddFakeCudart(FakeLibraryLoader& loader, const std::string& soname) {
  loader.Add(soname, {{"cudaRuntimeGetVersion",
                       SymbolOf<abi::CudaRuntimeGetVersion>(fake::CudaRuntimeGetVersion)}});
}
inline void AddFakeCudnn(FakeLibraryLoader& loader, const std::string& soname) {
  loader.Add(soname, {{"cudnnGetVersion", SymbolOf<abi::CudnnGetVersion>(fake::CudnnGetVersion)}});
}
inline void AddFakeCublas(FakeLibraryLoader& loader, const std::string& soname) {
  loader.Add(soname,
             {{"cublasGetProperty", SymbolOf<abi::CublasGetProperty>(fake::CublasGetProperty)}});
}
inline void AddFakeNccl(FakeLibraryLoader& loader) {
  loader.Add("libnccl.so.2",
             {{"ncclGetVersion", SymbolOf<abi::NcclGetVersion>(fake::NcclGetVersion)}});
}

}  // namespace imgpipe::env
