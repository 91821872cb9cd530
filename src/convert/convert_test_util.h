// Helpers shared by the converter's tests: where the test data is, a shard file that
// fails like a full disk.
#pragma once

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "util/error.h"
#include "util/file.h"

namespace imgpipe {

// ../shared/testdata (IMGPIPE_TESTDATA_DIR).
inline const std::string kTestData = IMGPIPE_TESTDATA_DIR;

// The bytes the DiskFullFiles may still write, shared by every shard.
inline std::atomic<int64_t> disk_bytes_left{0};

// A shard file that fails like a full disk: it writes through to the real file until
// the bytes left in `disk_bytes_left` run out, then throws
// IoError(path, "write", ENOSPC).
class DiskFullFile : public WritableFile {
 public:
  explicit DiskFullFile(std::unique_ptr<WritableFile> file) : file_(std::move(file)) {}
  void Append(std::string_view data) override {
    if (disk_bytes_left.fetch_sub(static_cast<int64_t>(data.size())) < static_cast<int64_t>(data.size())) {
      disk_bytes_left = 0;
      throw IoError(path(), "write", ENOSPC);
    }
    file_->Append(data);
  }
  void Flush() override { file_->Flush(); }
  void Sync() override { file_->Sync(); }
  void Close() override { file_->Close(); }
  const std::string& path() const override { return file_->path(); }

 private:
  std::unique_ptr<WritableFile> file_;
};

// ConvertOptions::shard_opener for DiskFullFiles.
inline std::unique_ptr<WritableFile> OpenDiskFullFile(const std::string& path) {
  return std::make_unique<DiskFullFile>(OpenWritableFile(path));
}

}  // namespace imgpipe
