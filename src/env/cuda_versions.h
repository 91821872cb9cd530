// Version numbers of the NVIDIA stack: how each library encodes its version as one
// integer, and which driver a CUDA runtime needs.
#pragma once

#include <compare>
#include <cstdint>
#include <string>

namespace imgpipe::env {

struct Version {
  int major = 0;
  int minor = 0;
  int patch = 0;

  auto operator<=>(const Version&) const = default;
  // "12.4" (parts = 2) or "9.1.0" (parts = 3).
  std::string ToString(int parts = 3) const;
};

// CUDA driver and runtime versions (cuDriverGetVersion, cudaRuntimeGetVersion,
// CUDART_VERSION): 1000 * major + 10 * minor, so 12040 is 12.4 and 11080 is 11.8.
Version DecodeCudaVersion(int64_t code);
// cuDNN's CUDNN_VERSION: 10000 * major + 100 * minor + patch from cuDNN 9 on (90100 is
// 9.1.0), 1000 * major + 100 * minor + patch before (8902 is 8.9.2).
Version DecodeCudnnVersion(int64_t code);
// NCCL's NCCL_VERSION_CODE: 10000 * major + 100 * minor + patch from 2.9 on (21803 is
// 2.18.3), 1000 * major + 100 * minor + patch before (2708 is 2.7.8).
Version DecodeNcclVersion(int64_t code);

// The oldest Linux driver that runs CUDA `cuda_major`.x runtimes through CUDA's
// minor-version compatibility (e.g. "525.60.13" for 12); "" for a major it does not know.
std::string MinimumDriverForCudaMajor(int cuda_major);

}  // namespace imgpipe::env
