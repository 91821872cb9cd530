#include "io/byte_source.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <future>
#include <mutex>
#include <optional>
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

// Reads n bytes of `source` at `offset` (fewer only at the end). A source may return less
// than asked before its end (it never should, but a short read would end a stream early):
// read until n bytes or the end.
size_t ReadFully(const ByteSource& source, uint64_t offset, char* buffer, size_t n) {
  size_t total = 0;
  while (total < n) {
    const size_t got = source.Read(offset + total, buffer + total, n - total);
    if (got == 0) break;
    total += got;
  }
  return total;
}

// Fetches a source's pieces, in order, on other threads ahead of the one taken: two in
// flight, one more each time the taker had to wait for one, up to kMaxPiecesAhead or the
// limit.
class PieceFetcher {
 public:
  PieceFetcher(const ByteSource* source, std::vector<ByteRange> pieces, const PiecesAheadLimit* limit)
      : source_(source), pieces_(std::move(pieces)), limit_(limit) {}
  ~PieceFetcher() {
    for (Fetch& fetch : ahead_) fetch.bytes.wait();  // errors are dropped with them
  }

  // The next piece into *range and *bytes (shorter than range->size only where the
  // source ended first); false after the last. Rethrows the fetch's error.
  bool Next(ByteRange* range, PieceBuffer* bytes) {
    FetchAhead();
    if (ahead_.empty()) return false;
    const bool waited = ahead_.front().bytes.wait_for(std::chrono::seconds(0)) != std::future_status::ready;
    if (waited && started_ && pieces_ahead_ < kMaxPiecesAhead) ++pieces_ahead_;
    started_ = true;
    Fetch fetch = std::move(ahead_.front());
    ahead_.pop_front();
    *range = fetch.range;
    *bytes = fetch.bytes.get();
    FetchAhead();
    return true;
  }

 private:
  struct Fetch {
    ByteRange range;
    std::future<PieceBuffer> bytes;
  };

  // Starts fetching pieces until as many as allowed are in flight or none is left.
  void FetchAhead() {
    const int64_t limit = limit_ ? std::clamp<int64_t>(limit_->load(), 1, kMaxPiecesAhead) : kMaxPiecesAhead;
    const size_t in_flight = std::min<size_t>(pieces_ahead_, static_cast<size_t>(limit));
    while (ahead_.size() < in_flight && next_ < pieces_.size()) {
      const ByteRange range = pieces_[next_++];
      const ByteSource* source = source_;
      ahead_.push_back({range, std::async(std::launch::async, [source, range] {
                          PieceBuffer piece;
                          if (source->TakeHeldPiece(range, &piece)) return piece;
                          piece = PieceBuffer(range.size);
                          piece.resize(ReadFully(*source, range.offset, piece.data(), range.size));
                          return piece;
                        })});
    }
  }

  // Pieces in flight at most (beside the one being read): 4 of 8 MiB (HttpByteSource's)
  // keep a reader of 120 MB/s fed over a 100 ms round trip.
  static constexpr size_t kMaxPiecesAhead = kMaxPiecesHeld - 1;

  const ByteSource* const source_;
  const std::vector<ByteRange> pieces_;
  const PiecesAheadLimit* const limit_;
  size_t next_ = 0;          // pieces_[next_] is the next one to fetch
  std::deque<Fetch> ahead_;  // the next pieces, being fetched, in order
  size_t pieces_ahead_ = 2;  // kept in flight; grows when the taker waits
  bool started_ = false;     // the first piece was taken
};

class FrontToBackFile : public SequentialFile {
 public:
  FrontToBackFile(std::unique_ptr<ByteSource> source, const PiecesAheadLimit* limit)
      : source_(std::move(source)) {
    source_->AdviseSequential();
    if (const size_t piece_bytes = source_->read_ahead_bytes(); piece_bytes > 0) {
      fetcher_.emplace(source_.get(), SplitIntoPieces({0, source_->size()}, piece_bytes), limit);
    }
  }
  size_t Read(char* buffer, size_t n) override { return fetcher_ ? ReadAhead(buffer, n) : ReadDirect(buffer, n); }
  const std::string& path() const override { return source_->name(); }

 private:
  // Reads straight from the source.
  size_t ReadDirect(char* buffer, size_t n) {
    const size_t got = ReadFully(*source_, offset_, buffer, n);
    offset_ += got;
    return got;
  }

  // Reads from the current piece; at its end, takes the next from the fetcher.
  size_t ReadAhead(char* buffer, size_t n) {
    size_t total = 0;
    while (total < n) {
      if (piece_pos_ == piece_.size()) {
        ByteRange range;
        if (!fetcher_->Next(&range, &piece_)) break;  // the end
        piece_pos_ = 0;
        if (piece_.empty()) break;
      }
      const size_t take = std::min(n - total, piece_.size() - piece_pos_);
      std::memcpy(buffer + total, piece_.data() + piece_pos_, take);
      piece_pos_ += take;
      total += take;
    }
    return total;
  }

  std::unique_ptr<ByteSource> source_;
  std::optional<PieceFetcher> fetcher_;  // for a source read ahead in pieces (declared after source_)
  uint64_t offset_ = 0;                  // of the next byte not yet read (direct)
  PieceBuffer piece_;                    // the piece being consumed
  size_t piece_pos_ = 0;
};

class RangesAheadSource : public ByteSource {
 public:
  RangesAheadSource(std::unique_ptr<ByteSource> source, std::vector<ByteRange> pieces, const PiecesAheadLimit* limit)
      : source_(std::move(source)), fetcher_(source_.get(), std::move(pieces), limit) {}

  uint64_t size() const override { return source_->size(); }
  const std::string& name() const override { return source_->name(); }
  size_t Read(uint64_t offset, char* out, size_t n) const override {
    std::lock_guard<std::mutex> lock(mu_);
    size_t total = 0;
    while (total < n) {
      const uint64_t at = offset + total;
      // 1. Pieces that end at or before `at` are done with: take the next.
      while (!ended_ && at >= piece_range_.end()) {
        piece_range_ = {};
        piece_.reset();
        if (!fetcher_.Next(&piece_range_, &piece_)) ended_ = true;
      }
      // 2. Bytes the current piece holds.
      if (!ended_ && at >= piece_range_.offset && at < piece_range_.offset + piece_.size()) {
        const size_t pos = static_cast<size_t>(at - piece_range_.offset);
        const size_t take = std::min(n - total, piece_.size() - pos);
        std::memcpy(out + total, piece_.data() + pos, take);
        total += take;
        continue;
      }
      // 3. Anything else from the source: up to the current piece when before it.
      size_t want = n - total;
      if (!ended_ && at < piece_range_.offset) want = std::min<uint64_t>(want, piece_range_.offset - at);
      const size_t got = ReadFully(*source_, at, out + total, want);
      total += got;
      if (got < want) break;  // the end
    }
    return total;
  }

 private:
  const std::unique_ptr<ByteSource> source_;
  mutable std::mutex mu_;
  mutable PieceFetcher fetcher_;        // guarded by mu_
  mutable ByteRange piece_range_;       // guarded by mu_; the piece being read
  mutable PieceBuffer piece_;           // guarded by mu_; its bytes
  mutable bool ended_ = false;          // guarded by mu_; the fetcher gave every piece
};

}  // namespace

std::unique_ptr<ByteSource> OpenLocalByteSource(const std::string& path) {
  return std::make_unique<LocalByteSource>(path);
}

std::unique_ptr<ByteSource> MakeMemoryByteSource(std::string name, std::string bytes) {
  return std::make_unique<MemoryByteSource>(std::move(name), std::move(bytes));
}

std::unique_ptr<SequentialFile> ReadFrontToBack(std::unique_ptr<ByteSource> source, const PiecesAheadLimit* limit) {
  return std::make_unique<FrontToBackFile>(std::move(source), limit);
}

std::unique_ptr<ByteSource> ReadRangesAhead(std::unique_ptr<ByteSource> source, std::vector<ByteRange> pieces,
                                            const PiecesAheadLimit* limit) {
  return std::make_unique<RangesAheadSource>(std::move(source), std::move(pieces), limit);
}

std::vector<ByteRange> PiecesAlong(const std::vector<ByteRange>& extents, uint64_t piece_bytes, uint64_t max_gap) {
  std::vector<ByteRange> pieces;
  for (const ByteRange& extent : extents) {
    if (!pieces.empty()) {
      ByteRange& last = pieces.back();
      if (extent.offset >= last.end() && extent.offset - last.end() <= max_gap &&
          extent.end() - last.offset <= piece_bytes) {
        last.size = extent.end() - last.offset;
        continue;
      }
    }
    pieces.push_back(extent);
  }
  return pieces;
}

std::vector<ByteRange> SplitIntoPieces(ByteRange range, uint64_t piece_bytes) {
  std::vector<ByteRange> pieces;
  if (piece_bytes == 0) piece_bytes = std::max<uint64_t>(range.size, 1);
  for (uint64_t at = range.offset; at < range.end(); at += piece_bytes) {
    pieces.push_back({at, std::min(piece_bytes, range.end() - at)});
  }
  return pieces;
}

}  // namespace imgpipe
