#include "io/byte_source.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
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
    for (std::future<std::string>& piece : ahead_) piece.wait();  // errors are dropped with them
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

  // Reads from the current piece; at its end, takes the next from the pieces being
  // fetched and tops them up. Had it to wait for one (after the first), the fetches are
  // behind the reader: one more is kept in flight, up to kMaxPiecesAhead.
  size_t ReadAhead(char* buffer, size_t n) {
    size_t total = 0;
    while (total < n) {
      if (piece_pos_ == piece_.size()) {
        FetchAhead();
        if (ahead_.empty()) break;  // the end
        const bool waited = ahead_.front().wait_for(std::chrono::seconds(0)) != std::future_status::ready;
        if (waited && started_ && pieces_ahead_ < kMaxPiecesAhead) ++pieces_ahead_;
        started_ = true;
        piece_ = ahead_.front().get();  // rethrows the fetch's error
        ahead_.pop_front();
        piece_pos_ = 0;
        if (piece_.empty()) break;
        FetchAhead();
      }
      const size_t take = std::min(n - total, piece_.size() - piece_pos_);
      std::memcpy(buffer + total, piece_.data() + piece_pos_, take);
      piece_pos_ += take;
      total += take;
    }
    return total;
  }

  // Starts fetching pieces until pieces_ahead_ are in flight or the end is reached.
  void FetchAhead() {
    while (ahead_.size() < pieces_ahead_ && fetch_offset_ < source_->size()) {
      const uint64_t offset = fetch_offset_;
      const size_t bytes = static_cast<size_t>(std::min<uint64_t>(piece_bytes_, source_->size() - offset));
      fetch_offset_ += bytes;
      ahead_.push_back(std::async(std::launch::async, [this, offset, bytes] {
        std::string piece(bytes, '\0');
        piece.resize(ReadFully(offset, piece.data(), piece.size()));
        return piece;
      }));
    }
  }

  // Pieces in flight at most (beside the one being read): 4 of 8 MiB (HttpByteSource's)
  // keep a reader of 120 MB/s fed over a 100 ms round trip.
  static constexpr size_t kMaxPiecesAhead = kMaxPiecesHeld - 1;

  std::unique_ptr<ByteSource> source_;
  const size_t piece_bytes_;
  uint64_t offset_ = 0;        // of the next byte not yet read (direct)
  uint64_t fetch_offset_ = 0;  // of the next piece not yet asked for (read-ahead)
  std::string piece_;          // the piece being consumed
  size_t piece_pos_ = 0;
  std::deque<std::future<std::string>> ahead_;  // the next pieces, being fetched, in order
  size_t pieces_ahead_ = 2;                     // kept in flight; grows when the reader waits
  bool started_ = false;                        // the first piece was taken
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
