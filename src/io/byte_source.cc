#include "io/byte_source.h"

#include <algorithm>
#include <cstring>
#include <future>
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
  explicit FrontToBackFile(std::unique_ptr<ByteSource> source)
      : source_(std::move(source)), piece_bytes_(source_->read_ahead_bytes()) {
    source_->AdviseSequential();
  }
  ~FrontToBackFile() override {
    if (next_.valid()) next_.wait();  // its exception, if any, is dropped with it
  }
  size_t Read(char* buffer, size_t n) override {
    return piece_bytes_ > 0 ? ReadAhead(buffer, n) : ReadDirect(buffer, n);
  }
  const std::string& path() const override { return source_->name(); }

 private:
  // Reads n bytes at `offset` (fewer only at the end). A source may return less than
  // asked before its end (it never should, but a short read here would end the stream
  // early): read until n bytes or the end.
  size_t ReadFully(uint64_t offset, char* buffer, size_t n) const {
    size_t total = 0;
    while (total < n) {
      const size_t got = source_->Read(offset + total, buffer + total, n - total);
      if (got == 0) break;
      total += got;
    }
    return total;
  }

  // Reads straight from the source.
  size_t ReadDirect(char* buffer, size_t n) {
    const size_t got = ReadFully(offset_, buffer, n);
    offset_ += got;
    return got;
  }

  // Reads from the current piece; at its end, waits for the next (fetched since) and
  // starts fetching the one after.
  size_t ReadAhead(char* buffer, size_t n) {
    size_t total = 0;
    while (total < n) {
      if (piece_pos_ == piece_.size()) {
        if (!next_.valid()) next_ = Fetch(offset_);
        piece_ = next_.get();  // rethrows the fetch's error
        piece_pos_ = 0;
        offset_ += piece_.size();
        if (piece_.empty()) break;
        next_ = Fetch(offset_);
      }
      const size_t take = std::min(n - total, piece_.size() - piece_pos_);
      std::memcpy(buffer + total, piece_.data() + piece_pos_, take);
      piece_pos_ += take;
      total += take;
    }
    return total;
  }

  // The piece at `offset` (empty at the end), read on another thread.
  std::future<std::string> Fetch(uint64_t offset) {
    if (offset >= source_->size()) return std::async(std::launch::deferred, [] { return std::string(); });
    return std::async(std::launch::async, [this, offset] {
      std::string piece(static_cast<size_t>(std::min<uint64_t>(piece_bytes_, source_->size() - offset)), '\0');
      piece.resize(ReadFully(offset, piece.data(), piece.size()));
      return piece;
    });
  }

  std::unique_ptr<ByteSource> source_;
  const size_t piece_bytes_;
  uint64_t offset_ = 0;  // of the next byte not yet read (direct) or fetched (read-ahead)
  std::string piece_;    // the piece being consumed
  size_t piece_pos_ = 0;
  std::future<std::string> next_;  // the piece at offset_, being fetched
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
