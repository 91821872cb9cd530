// Reading and writing NumPy .npy arrays (npy_format.h): little endian, C order,
// version 1.0, written atomically.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace imgpipe::npy {

// What an .npy header says.
struct ArrayInfo {
  std::string descr;            // dtype, e.g. "<f4", "<i8", "<U12"
  std::vector<uint64_t> shape;  // () for a scalar
  uint64_t data_offset = 0;     // bytes before the first element
  bool operator==(const ArrayInfo&) const = default;
};

// Bytes per element of `descr`: '<f2' 2, '<f4' 4, '<i8' 8, '<UW' 4 x W. Throws Error for
// any other dtype.
size_t ItemBytes(std::string_view descr);

// The preamble and header of a C-order array of `descr` and `shape`, padded so that
// the data starts at a multiple of 64 bytes.
std::string EncodeHeader(std::string_view descr, const std::vector<uint64_t>& shape);

// Parses the preamble and header at the start of `bytes` (at least the whole header);
// throws DataError(path, offset) when they are not a version 1.0 C-order header.
ArrayInfo ParseHeader(std::string_view bytes, const std::string& path);

// The header of the .npy file at `path`; also checks that the file holds exactly the
// data the header describes. Throws IoError or DataError naming the path.
ArrayInfo ReadHeader(const std::string& path);

// Writes an array to `path` atomically (temporary name, fsync, rename). `data` holds
// its elements in C order, little endian: product(shape) x ItemBytes(descr) bytes.
// Returns the CRC-32C (unmasked) of the file's bytes.
uint32_t WriteArray(const std::string& path, std::string_view descr,
                    const std::vector<uint64_t>& shape, std::string_view data);

// A column of strings as a fixed-width unicode array ('<UW', W = the longest string's
// code points, at least 1): UTF-32LE code units, zero-padded. Bytes that are not
// valid UTF-8 become U+FFFD.
struct UnicodeColumn {
  std::string descr;
  std::string data;  // strings.size() x 4W bytes
};
UnicodeColumn EncodeUnicodeColumn(const std::vector<std::string>& utf8_strings);
// The strings of a '<UW' array's data, as UTF-8 (trailing zero code units dropped).
std::vector<std::string> DecodeUnicodeColumn(std::string_view descr, std::string_view data);

}  // namespace imgpipe::npy
