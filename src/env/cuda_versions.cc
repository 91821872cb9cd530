#include "env/cuda_versions.h"

namespace imgpipe::env {

std::string Version::ToString(int parts) const {
  std::string text = std::to_string(major) + "." + std::to_string(minor);
  if (parts >= 3) text += "." + std::to_string(patch);
  return text;
}

Version DecodeCudaVersion(int64_t code) {
  return {static_cast<int>(code / 1000), static_cast<int>(code % 1000 / 10), 0};
}

// Versions that put the major at 10000 (from `new_scheme_from` on) or at 1000 (before).
static Version DecodeMajorMinorPatch(int64_t code, int64_t new_scheme_from) {
  int64_t major_unit = code >= new_scheme_from ? 10000 : 1000;
  return {static_cast<int>(code / major_unit), static_cast<int>(code % major_unit / 100),
          static_cast<int>(code % 100)};
}

Version DecodeCudnnVersion(int64_t code) { return DecodeMajorMinorPatch(code, 90000); }

Version DecodeNcclVersion(int64_t code) { return DecodeMajorMinorPatch(code, 20900); }

std::string MinimumDriverForCudaMajor(int cuda_major) {
  // CUDA release notes, "CUDA Toolkit and Minimum Required Driver Version for CUDA Minor
  // Version Compatibility" (Linux x86_64).
  switch (cuda_major) {
    case 11:
      return "450.80.02";
    case 12:
      return "525.60.13";
    case 13:
      return "580.65.06";
    default:
      return "";
  }
}

}  // namespace imgpipe::env
