// Helpers shared by the record layer's tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "record/compression.h"
#include "record/index.h"
#include "record/tfrecord_reader.h"

namespace imgpipe::testing {

// A fresh temporary folder, removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A file of the shared test data, e.g. TestdataPath("tfrecord/tfx/mnist.tfrecord").
std::string TestdataPath(const std::string& relative);

// Writes `records` to `path` with TfRecordWriter; returns their index entries.
std::vector<IndexEntry> WriteRecords(const std::string& path,
                                     const std::vector<std::string>& records,
                                     Compression compression = Compression::kNone);

// Reads every record of `path`; fills *stats and *offsets when given.
std::vector<std::string> ReadRecords(const std::string& path, TfRecordReaderOptions options = {},
                                     TfRecordReaderStats* stats = nullptr,
                                     std::vector<uint64_t>* offsets = nullptr);

// `size` pseudo-random bytes from `seed`.
std::string RandomBytes(size_t size, uint32_t seed);

// Overwrites `path` with `data` (no atomic rename: tests damage files on purpose).
void WriteRaw(const std::string& path, const std::string& data);

}  // namespace imgpipe::testing
