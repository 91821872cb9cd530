#include "io/byte_source.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace imgpipe {
namespace {

class LocalByteSource : public ByteSource {
 public:
  explicit LocalByteSource(const std::string& path) : file_(path) {}
  uint64_t size() const override { return file_.size(); }
  size_t Read(uint64_t offset, char* out, size_t n) const override { return file_.Read(offset, out, n); }
  const std::string& name() const override { return file_.path(); }
  void AdviseSequential() const override { file_.AdviseSequential(); }

 private:
  RandomAccessFile file_;
};

class MemoryByteSource : public ByteSource {
 public:
  MemoryByteSource(std::string name, std::string bytes) : name_(std::move(name)), bytes_(std::move(bytes)) {}
  uint64_t size() const override { return bytes_.size(); }
  size_t Read(uint64_t offset, char* out, size_t n) const override {
    if (offset >= bytes_.size()) return 0;
    const size_t count = std::min<uint64_t>(n, bytes_.size() - offset);
    std::memcpy(out, bytes_.data() + offset, count);
    return count;
  }
  const std::string& name() const override { return name_; }

 private:
  const std::string name_;
  const std::string bytes_;
};

class FrontToBackFile : public SequentialFile {
 public:
  explicit FrontToBackFile(std::unique_ptr<ByteSource> source) : source_(std::move(source)) {
    source_->AdviseSequential();
  }
  size_t Read(char* buffer, size_t n) override {
    // A source may return less than asked before its end (it never should, but a short
    // read here would end the stream early): read until n bytes or the end.
    size_t total = 0;
    while (total < n) {
      const size_t got = source_->Read(offset_, buffer + total, n - total);
      if (got == 0) break;
      total += got;
      offset_ += got;
    }
    return total;
  }
  const std::string& path() const override { return source_->name(); }

 private:
  std::unique_ptr<ByteSource> source_;
  uint64_t offset_ = 0;
};

}  // namespace

std::unique_ptr<ByteSource> OpenLocalByteSource(const std::string& path) {
  return std::make_unique<LocalByteSource>(path);
}

std::unique_ptr<ByteSource> MakeMemoryByteSource(std::string name, std::string bytes) {
  return std::make_unique<MemoryByteSource>(std::move(name), std::move(bytes));
}

std::unique_ptr<SequentialFile> ReadFrontToBack(std::unique_ptr<ByteSource> source) {
  return std::make_unique<FrontToBackFile>(std::move(source));
}

}  // namespace imgpipe
