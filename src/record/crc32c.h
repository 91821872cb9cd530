// CRC-32C (Castagnoli), as TFRecord uses it. The SSE4.2 crc32 instruction is used
// where the CPU has it, a portable table-driven version elsewhere; both give the same
// values.
#pragma once

#include <cstddef>
#include <cstdint>

namespace imgpipe::crc32c {

// Returns the crc32c of concat(A, data[0,n-1]) where init_crc is the crc32c of A.
uint32_t Extend(uint32_t init_crc, const void* data, size_t n);

// Returns the crc32c of data[0,n-1].
inline uint32_t Value(const void* data, size_t n) { return Extend(0, data, n); }

// The two implementations, exposed for tests and benchmarks.
uint32_t ExtendPortable(uint32_t init_crc, const void* data, size_t n);
// Requires HardwareAvailable().
uint32_t ExtendHardware(uint32_t init_crc, const void* data, size_t n);
bool HardwareAvailable();

inline constexpr uint32_t kMaskDelta = 0xa282ead8u;

// The masked form stored in TFRecord files: rotate right by 15 bits, add a constant.
inline uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }

// Inverse of Mask.
inline uint32_t Unmask(uint32_t masked) {
  uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace imgpipe::crc32c
