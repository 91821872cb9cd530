// Unchecked reads of big- and little-endian integers from a byte string; callers check
// that `offset + size` is within the bytes first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace imgpipe {

inline uint32_t LoadU8(std::string_view bytes, size_t offset) {
  return static_cast<uint8_t>(bytes[offset]);
}

inline uint32_t LoadU16(std::string_view bytes, size_t offset, bool big_endian) {
  uint32_t a = LoadU8(bytes, offset), b = LoadU8(bytes, offset + 1);
  return big_endian ? (a << 8 | b) : (b << 8 | a);
}

inline uint32_t LoadU32(std::string_view bytes, size_t offset, bool big_endian) {
  uint32_t a = LoadU16(bytes, offset, big_endian), b = LoadU16(bytes, offset + 2, big_endian);
  return big_endian ? (a << 16 | b) : (b << 16 | a);
}

// True when [offset, offset + size) lies within the bytes.
inline bool HasBytes(std::string_view bytes, uint64_t offset, uint64_t size) {
  return offset <= bytes.size() && size <= bytes.size() - offset;
}

}  // namespace imgpipe
