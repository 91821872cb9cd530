// Index files beside TFRecord files (format in tfrecord_format.h): one "OFFSET SIZE"
// line per record, for record-level sharding and random access.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/error_policy.h"

namespace imgpipe {

struct IndexEntry {
  uint64_t offset = 0;  // where the record's length field starts
  uint64_t size = 0;    // header + data + footer bytes
  bool operator==(const IndexEntry&) const = default;
};

// The index file that belongs to `tfrecord_path`: "<tfrecord_path>.idx".
std::string IndexPathFor(const std::string& tfrecord_path);

// Text of an index file for `entries`.
std::string FormatIndex(const std::vector<IndexEntry>& entries);

// Parses index text. Entries must be well-formed, contiguous (each offset equals the
// previous offset + size) and start at 0; otherwise throws DataError naming `path` and
// the byte offset of the bad line.
std::vector<IndexEntry> ParseIndex(std::string_view text, const std::string& path);

std::vector<IndexEntry> ReadIndexFile(const std::string& path);
// Writes atomically (temporary name, then rename); returns the CRC-32C (unmasked) of
// the bytes written.
uint32_t WriteIndexFile(const std::string& path, const std::vector<IndexEntry>& entries);

// Scans an uncompressed TFRecord file and returns one entry per record, checking the
// length CRC (not the data CRC); throws DataError on corruption.
std::vector<IndexEntry> BuildIndex(const std::string& tfrecord_path);

// Records in `tfrecord_path` (any compression): its index file's entry count when there
// is one, else a read of the whole file under `policy`.
int64_t CountRecords(const std::string& tfrecord_path, ErrorPolicy policy = ErrorPolicy::kFail);

}  // namespace imgpipe
