// The TFRecord file format, as TensorFlow writes it (tensorflow/core/lib/io/record_writer.cc).
//
// A file is a sequence of records; each record is
//
//   uint64  length          little-endian byte count of `data`
//   uint32  length_crc      masked CRC32C of the 8 bytes of `length`
//   byte    data[length]
//   uint32  data_crc        masked CRC32C of `data`
//
// where mask(crc) = ((crc >> 15) | (crc << 17)) + 0xa282ead8 (see crc32c.h).
// A GZIP or ZLIB compressed file is that same byte sequence compressed as one whole
// gzip or zlib stream. Byte offsets that imgpipe reports (errors, index files) are
// offsets in the uncompressed sequence.
//
// An index file (`<file>.idx`, the format DALI's tfrecord2idx writes) has one text line
// per record, "OFFSET SIZE\n", where OFFSET is where the record's `length` field starts
// and SIZE = kHeaderSize + length + kFooterSize.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>

#include "record/crc32c.h"

namespace imgpipe::tfrecord {

inline constexpr size_t kLengthSize = 8;
inline constexpr size_t kCrcSize = 4;
inline constexpr size_t kHeaderSize = kLengthSize + kCrcSize;  // length + length_crc
inline constexpr size_t kFooterSize = kCrcSize;                // data_crc

// Upper bound on one record's data; a larger length field is treated as corruption.
inline constexpr uint64_t kMaxRecordLength = uint64_t{1} << 32;

// Writes the kHeaderSize bytes that precede a record of `length` data bytes.
inline void EncodeHeader(uint64_t length, char* header) {
  for (size_t i = 0; i < kLengthSize; ++i) header[i] = static_cast<char>(length >> (8 * i));
  uint32_t masked = crc32c::Mask(crc32c::Value(header, kLengthSize));
  for (size_t i = 0; i < kCrcSize; ++i) {
    header[kLengthSize + i] = static_cast<char>(masked >> (8 * i));
  }
}

// Writes the kFooterSize bytes that follow `data`.
inline void EncodeFooter(const char* data, size_t length, char* footer) {
  uint32_t masked = crc32c::Mask(crc32c::Value(data, length));
  for (size_t i = 0; i < kCrcSize; ++i) footer[i] = static_cast<char>(masked >> (8 * i));
}

inline uint32_t DecodeFixed32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return uint32_t{u[0]} | uint32_t{u[1]} << 8 | uint32_t{u[2]} << 16 | uint32_t{u[3]} << 24;
}

inline uint64_t DecodeFixed64(const char* p) {
  return uint64_t{DecodeFixed32(p)} | uint64_t{DecodeFixed32(p + 4)} << 32;
}

// The data length in a kHeaderSize-byte header, or nullopt when its length CRC does
// not match (the length is not checked against kMaxRecordLength).
inline std::optional<uint64_t> DecodeHeader(const char* header) {
  if (crc32c::Unmask(DecodeFixed32(header + kLengthSize)) != crc32c::Value(header, kLengthSize)) {
    return std::nullopt;
  }
  return DecodeFixed64(header);
}

// The CRC32C of the data that `footer` holds (unmasked); the data's CRC once
// FooterMatches has returned true.
inline uint32_t FooterCrc(const char* footer) { return crc32c::Unmask(DecodeFixed32(footer)); }

// Whether `footer` holds the masked CRC of data[0, length).
inline bool FooterMatches(const char* data, size_t length, const char* footer) {
  return FooterCrc(footer) == crc32c::Value(data, length);
}

}  // namespace imgpipe::tfrecord
