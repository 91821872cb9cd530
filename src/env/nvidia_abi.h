// The few C functions of NVML, the CUDA driver and runtime, cuDNN, cuBLAS and NCCL that
// the doctor calls, declared here from their stable C ABI so the build needs no CUDA
// headers. Every function returns 0 on success (NVML_SUCCESS, CUDA_SUCCESS, ...).
#pragma once

#include <cstddef>

namespace imgpipe::env::abi {

// NVML (libnvidia-ml.so.1, nvml.h).
using NvmlReturn = int;
struct NvmlDeviceOpaque;
using NvmlDevice = NvmlDeviceOpaque*;
struct NvmlMemory {  // nvmlMemory_t
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
struct NvmlUtilization {  // nvmlUtilization_t, percent of the last sample period
  unsigned int gpu;
  unsigned int memory;
};
inline constexpr NvmlReturn kNvmlErrorDriverNotLoaded = 9;
inline constexpr NvmlReturn kNvmlErrorNoPermission = 4;
inline constexpr NvmlReturn kNvmlErrorLibRmVersionMismatch = 18;
inline constexpr unsigned int kNvmlDriverVersionBufferSize = 80;
inline constexpr unsigned int kNvmlDeviceNameBufferSize = 96;

using NvmlInitV2 = NvmlReturn (*)();
using NvmlShutdown = NvmlReturn (*)();
using NvmlErrorString = const char* (*)(NvmlReturn);
using NvmlSystemGetDriverVersion = NvmlReturn (*)(char* version, unsigned int length);
using NvmlSystemGetCudaDriverVersionV2 = NvmlReturn (*)(int* cuda_version);
using NvmlDeviceGetCountV2 = NvmlReturn (*)(unsigned int* count);
using NvmlDeviceGetHandleByIndexV2 = NvmlReturn (*)(unsigned int index, NvmlDevice* device);
using NvmlDeviceGetName = NvmlReturn (*)(NvmlDevice device, char* name, unsigned int length);
using NvmlDeviceGetMemoryInfo = NvmlReturn (*)(NvmlDevice device, NvmlMemory* memory);
using NvmlDeviceGetCudaComputeCapability = NvmlReturn (*)(NvmlDevice device, int* major,
                                                          int* minor);
using NvmlDeviceGetUtilizationRates = NvmlReturn (*)(NvmlDevice device, NvmlUtilization* rates);

// CUDA driver API (libcuda.so.1). cuDriverGetVersion: the newest CUDA version the
// driver supports, as 1000 * major + 10 * minor (12040 is 12.4); needs no cuInit. The
// others enumerate devices after cuInit (a CUdevice is an int), creating no context.
using CuDriverGetVersion = int (*)(int* version);
using CuInit = int (*)(unsigned int flags);
using CuGetErrorName = int (*)(int error, const char** name);
using CuDeviceGetCount = int (*)(int* count);
using CuDeviceGet = int (*)(int* device, int ordinal);
using CuDeviceGetName = int (*)(char* name, int length, int device);
using CuDeviceTotalMemV2 = int (*)(size_t* bytes, int device);
using CuDeviceGetAttribute = int (*)(int* value, int attribute, int device);
inline constexpr int kCuDeviceAttributeComputeCapabilityMajor = 75;
inline constexpr int kCuDeviceAttributeComputeCapabilityMinor = 76;
inline constexpr int kCudaErrorNoDevice = 100;
inline constexpr int kCudaErrorSystemDriverMismatch = 803;
inline constexpr int kCudaErrorCompatNotSupportedOnDevice = 804;
// CUDA runtime (libcudart.so.N): its own version, encoded the same way.
using CudaRuntimeGetVersion = int (*)(int* version);
// cuDNN (libcudnn.so.N): CUDNN_VERSION of the library (see cuda_versions.h).
using CudnnGetVersion = size_t (*)();
// cuBLAS (libcublas.so.N): one part of its version per libraryPropertyType.
using CublasGetProperty = int (*)(int type, int* value);
inline constexpr int kLibraryPropertyMajor = 0;
inline constexpr int kLibraryPropertyMinor = 1;
inline constexpr int kLibraryPropertyPatch = 2;
// NCCL (libnccl.so.2): NCCL_VERSION_CODE of the library.
using NcclGetVersion = int (*)(int* version);

}  // namespace imgpipe::env::abi
