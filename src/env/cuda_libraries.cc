#include "env/cuda_libraries.h"

#include <algorithm>
#include <type_traits>

#include "env/nvidia_abi.h"

namespace imgpipe::env {
namespace {

// Calls `symbol`, an `int f(int* code)` returning 0 on success (cudaRuntimeGetVersion,
// ncclGetVersion), and decodes the code; false (with *error) when it fails.
bool ReadVersionCode(const LoadedLibrary& library, const char* symbol, Version (*decode)(int64_t),
                     Version* version, std::string* error) {
  auto get = library.Function<int (*)(int*)>(symbol);
  int code = 0;
  if (!get) {
    *error = std::string("the library has no ") + symbol;
    return false;
  }
  if (int status = get(&code); status != 0) {
    *error = std::string(symbol) + " failed with error " + std::to_string(status);
    return false;
  }
  *version = decode(code);
  return true;
}

// Reads the version of a loaded library of `kind`; false (with *error) when it has no
// version function or the call fails.
bool ReadVersion(const LoadedLibrary& library, CudaLibraryKind kind, Version* version,
                 std::string* error) {
  static_assert(std::is_same_v<abi::CudaRuntimeGetVersion, int (*)(int*)> &&
                std::is_same_v<abi::NcclGetVersion, int (*)(int*)>);
  switch (kind) {
    case CudaLibraryKind::kRuntime:
      return ReadVersionCode(library, "cudaRuntimeGetVersion", DecodeCudaVersion, version, error);
    case CudaLibraryKind::kNccl:
      return ReadVersionCode(library, "ncclGetVersion", DecodeNcclVersion, version, error);
    case CudaLibraryKind::kCudnn: {
      auto get = library.Function<abi::CudnnGetVersion>("cudnnGetVersion");
      if (!get) break;
      *version = DecodeCudnnVersion(static_cast<int64_t>(get()));
      return true;
    }
    case CudaLibraryKind::kCublas: {
      auto get = library.Function<abi::CublasGetProperty>("cublasGetProperty");
      if (!get) break;
      int* parts[] = {&version->major, &version->minor, &version->patch};
      int types[] = {abi::kLibraryPropertyMajor, abi::kLibraryPropertyMinor,
                     abi::kLibraryPropertyPatch};
      for (int i = 0; i < 3; ++i) {
        if (int status = get(types[i], parts[i]); status != 0) {
          *error = "cublasGetProperty failed with error " + std::to_string(status);
          return false;
        }
      }
      return true;
    }
  }
  *error = "the library has no version function";
  return false;
}

}  // namespace

const char* CudaLibraryName(CudaLibraryKind kind) {
  switch (kind) {
    case CudaLibraryKind::kRuntime:
      return "CUDA runtime";
    case CudaLibraryKind::kCudnn:
      return "cuDNN";
    case CudaLibraryKind::kCublas:
      return "cuBLAS";
    case CudaLibraryKind::kNccl:
      return "NCCL";
  }
  return "?";
}

std::vector<std::string> DefaultSonames(CudaLibraryKind kind) {
  switch (kind) {
    case CudaLibraryKind::kRuntime:
      return {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so"};
    case CudaLibraryKind::kCudnn:
      return {"libcudnn.so.9", "libcudnn.so.8"};
    case CudaLibraryKind::kCublas:
      return {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11"};
    case CudaLibraryKind::kNccl:
      return {"libnccl.so.2"};
  }
  return {};
}

std::string SonameForMajor(CudaLibraryKind kind, int major) {
  std::string number = std::to_string(major);
  switch (kind) {
    case CudaLibraryKind::kRuntime:
      return "libcudart.so." + number + (major <= 11 ? ".0" : "");
    case CudaLibraryKind::kCudnn:
      return "libcudnn.so." + number;
    case CudaLibraryKind::kCublas:
      return "libcublas.so." + number;
    case CudaLibraryKind::kNccl:
      return "libnccl.so." + number;
  }
  return "";
}

std::vector<std::string> PreferSoname(std::vector<std::string> sonames, const std::string& first) {
  sonames.erase(std::remove(sonames.begin(), sonames.end(), first), sonames.end());
  sonames.insert(sonames.begin(), first);
  return sonames;
}

CudaLibrary ProbeCudaLibrary(LibraryLoader& loader, CudaLibraryKind kind,
                             const std::vector<std::string>& sonames) {
  CudaLibrary result;
  result.kind = kind;
  FirstLoadedLibrary loaded = OpenFirstLibrary(loader, sonames);
  result.tried = loaded.tried;
  if (!loaded.library) {
    result.error = loaded.error;
    return result;
  }
  result.soname = loaded.soname;
  result.path = loaded.library->Path();
  result.version_known = ReadVersion(*loaded.library, kind, &result.version, &result.error);
  return result;
}

}  // namespace imgpipe::env
