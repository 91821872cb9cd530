// The CUDA user-space libraries training needs (runtime, cuDNN, cuBLAS, NCCL): which
// soname loads, from where, and its version, asked from the library itself.
#pragma once

#include <string>
#include <vector>

#include "env/cuda_versions.h"
#include "env/library_loader.h"

namespace imgpipe::env {

enum class CudaLibraryKind { kRuntime, kCudnn, kCublas, kNccl };

struct CudaLibrary {
  CudaLibraryKind kind = CudaLibraryKind::kRuntime;
  std::vector<std::string> tried;  // sonames tried, in order
  std::string soname;              // the one that loaded; "" when none did
  std::string path;                // the file it was loaded from ("" when unknown)
  Version version;                 // meaningful when version_known
  bool version_known = false;
  std::string error;  // why none loaded, or why the version is unknown

  bool found() const { return !soname.empty(); }
};

// "CUDA runtime", "cuDNN", "cuBLAS", "NCCL".
const char* CudaLibraryName(CudaLibraryKind kind);
// The sonames tried by default, newest first (libcudart.so.13, .12, .11.0, libcudart.so).
std::vector<std::string> DefaultSonames(CudaLibraryKind kind);
// The soname of the `major` release, as a program built against it loads it
// (libcudart.so.11.0 for CUDA 11, libcudnn.so.9, libcublas.so.12, libnccl.so.2).
std::string SonameForMajor(CudaLibraryKind kind, int major);
// `sonames` with `first` moved (or added) to the front.
std::vector<std::string> PreferSoname(std::vector<std::string> sonames, const std::string& first);

// Loads the first of `sonames` that loads and reads its version (cudaRuntimeGetVersion,
// cudnnGetVersion, cublasGetProperty, ncclGetVersion).
CudaLibrary ProbeCudaLibrary(LibraryLoader& loader, CudaLibraryKind kind,
                             const std::vector<std::string>& sonames);

}  // namespace imgpipe::env
