// CRC-32C of whole files: computed while a file is written (Crc32cWritableFile) or by
// reading one (FileCrc32c), so that a file can be checked against the value recorded
// when it was written (imgpipe convert's part files and --finalize).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "util/file.h"

namespace imgpipe {

// Passes every byte on to `sink` (not owned; must outlive this) and extends the
// CRC-32C of the bytes appended so far.
class Crc32cWritableFile : public WritableFile {
 public:
  explicit Crc32cWritableFile(WritableFile& sink) : sink_(&sink) {}

  void Append(std::string_view data) override;
  void Flush() override { sink_->Flush(); }
  void Sync() override { sink_->Sync(); }
  void Close() override { sink_->Close(); }
  const std::string& path() const override { return sink_->path(); }

  // CRC-32C (unmasked) of all bytes appended so far.
  uint32_t crc32c() const { return crc_; }

 private:
  WritableFile* sink_;
  uint32_t crc_ = 0;
};

// CRC-32C (unmasked) of the whole file or object at `path` (a local path or a URL:
// io/storage.h); throws IoError (or HttpError) when it cannot be read.
uint32_t FileCrc32c(const std::string& path);

// "" when `crc` is `recorded`, else "CRC-32C xxxxxxxx, recorded yyyyyyyy": what
// --finalize reports of a file changed since it was written.
std::string Crc32cMismatch(uint32_t crc, uint32_t recorded);

}  // namespace imgpipe
