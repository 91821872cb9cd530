#include "io/byte_source.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "io/io_test_util.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe {
namespace {

// The local file and the memory source give the same bytes at every offset, short reads
// only at the end, and name themselves in errors.
TEST(ByteSourceTest, LocalAndMemoryReadAlike) {
  std::string bytes;
  for (int i = 0; i < 10000; ++i) bytes += static_cast<char>(i * 7 + i / 251);
  const std::string path = ScratchDir("byte_source") + "/bytes";
  WriteFileAtomic(path, bytes, false);
  const auto local = OpenLocalByteSource(path);
  const auto memory = MakeMemoryByteSource("mem://x", bytes);
  EXPECT_EQ(local->name(), path);
  EXPECT_EQ(memory->name(), "mem://x");
  for (const ByteSource* source : {local.get(), memory.get()}) {
    EXPECT_EQ(source->size(), bytes.size());
    EXPECT_EQ(ReadRange(*source, 0, 10), bytes.substr(0, 10));
    EXPECT_EQ(ReadRange(*source, 4097, 3000), bytes.substr(4097, 3000));
    EXPECT_EQ(ReadRange(*source, 9990, 100), bytes.substr(9990));  // short at the end
    EXPECT_EQ(ReadRange(*source, 10000, 5), "");
    EXPECT_EQ(ReadRange(*source, 123456, 5), "");
  }
  RemoveFile(path);
  EXPECT_THROW(OpenLocalByteSource(path), IoError);
  EXPECT_THROW(OpenLocalByteSource(::testing::TempDir()), IoError);
}

TEST(ByteSourceTest, FrontToBackReadsEverythingInPieces) {
  std::string bytes(5000, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i % 253);
  const auto file = ReadFrontToBack(MakeMemoryByteSource("mem://y", bytes));
  EXPECT_EQ(file->path(), "mem://y");
  std::string got;
  char buffer[777];
  while (size_t n = file->Read(buffer, sizeof buffer)) got.append(buffer, n);
  EXPECT_EQ(got, bytes);
  EXPECT_EQ(file->Read(buffer, sizeof buffer), 0u);
}

// A source whose reads take `read_ms` each, read ahead in pieces of 1,000 bytes; it
// counts the reads in flight at once.
class SlowSource : public ByteSource {
 public:
  SlowSource(std::string bytes, int read_ms) : bytes_(std::move(bytes)), read_ms_(read_ms) {}
  uint64_t size() const override { return bytes_.size(); }
  size_t Read(uint64_t offset, char* out, size_t n) const override {
    const int now = ++in_flight_;
    int seen = most_in_flight_.load();
    while (now > seen && !most_in_flight_.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(read_ms_));
    --in_flight_;
    return MakeMemoryByteSource("", bytes_)->Read(offset, out, n);
  }
  const std::string& name() const override { return name_; }
  size_t read_ahead_bytes() const override { return 1000; }
  int most_in_flight() const { return most_in_flight_.load(); }

 private:
  const std::string bytes_, name_ = "slow";
  const int read_ms_;
  mutable std::atomic<int> in_flight_{0}, most_in_flight_{0};
};

// Two pieces are fetched ahead; a reader that waits for them gets more in flight, up to
// four; one that is slower than the fetches never does.
TEST(ByteSourceTest, FrontToBackFetchesMoreAheadOnlyWhenTheReaderWaits) {
  for (const bool fast_reader : {true, false}) {
    SCOPED_TRACE(fast_reader ? "fast reader" : "slow reader");
    std::string bytes(fast_reader ? 30000 : 10000, '\0');
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i % 251);
    auto source = std::make_unique<SlowSource>(bytes, 20);
    const SlowSource* slow = source.get();
    const auto file = ReadFrontToBack(std::move(source));
    std::string got;
    char buffer[1000];
    while (size_t n = file->Read(buffer, sizeof buffer)) {
      got.append(buffer, n);
      if (!fast_reader) std::this_thread::sleep_for(std::chrono::milliseconds(150));
    }
    EXPECT_EQ(got, bytes);
    if (fast_reader) {
      EXPECT_GE(slow->most_in_flight(), 3);
      EXPECT_LE(slow->most_in_flight(), 4);
    } else {
      EXPECT_EQ(slow->most_in_flight(), 2);
    }
  }
}

// With a limit, no more pieces are in flight than it says, even for a reader that waits.
TEST(ByteSourceTest, FrontToBackKeepsWithinTheLimit) {
  const std::string bytes = Pattern(12000, 3);
  for (const int64_t limit_value : {1, 3}) {
    SCOPED_TRACE(limit_value);
    auto source = std::make_unique<SlowSource>(bytes, 20);
    const SlowSource* slow = source.get();
    PiecesAheadLimit limit{limit_value};
    const auto file = ReadFrontToBack(std::move(source), &limit);
    std::string got;
    char buffer[1000];
    while (size_t n = file->Read(buffer, sizeof buffer)) got.append(buffer, n);
    EXPECT_EQ(got, bytes);
    EXPECT_LE(slow->most_in_flight(), limit_value);
  }
}

// A memory source that logs the reads asked of it.
class LoggingSource : public ByteSource {
 public:
  explicit LoggingSource(std::string bytes) : memory_(MakeMemoryByteSource("logged", std::move(bytes))) {}
  uint64_t size() const override { return memory_->size(); }
  size_t Read(uint64_t offset, char* out, size_t n) const override {
    std::lock_guard<std::mutex> lock(mu_);
    reads_.push_back({offset, n});
    return memory_->Read(offset, out, n);
  }
  const std::string& name() const override { return memory_->name(); }
  std::vector<ByteRange> reads() const {
    std::lock_guard<std::mutex> lock(mu_);
    return reads_;
  }

 private:
  const std::unique_ptr<ByteSource> memory_;
  mutable std::mutex mu_;
  mutable std::vector<ByteRange> reads_;  // guarded by mu_
};

// A source that holds its first piece in memory (as HttpByteSource does once opened)
// hands it over to the front-to-back reader instead of being read for it.
class HoldingSource : public LoggingSource {
 public:
  explicit HoldingSource(std::string bytes) : LoggingSource(std::move(bytes)) {}
  size_t read_ahead_bytes() const override { return 1000; }
  bool TakeHeldPiece(ByteRange range, PieceBuffer* out) const override {
    if (range != ByteRange{0, 1000} || taken_) return false;
    taken_ = true;
    *out = PieceBuffer(1000);
    std::memset(out->data(), 'H', 1000);  // marks the bytes handed over
    out->resize(1000);
    return true;
  }

 private:
  mutable bool taken_ = false;
};

TEST(ByteSourceTest, FrontToBackTakesAPieceTheSourceHolds) {
  const std::string bytes = Pattern(3500, 6);
  auto source = std::make_unique<HoldingSource>(bytes);
  const HoldingSource* holding = source.get();
  const auto file = ReadFrontToBack(std::move(source));
  std::string got;
  char buffer[300];
  while (size_t n = file->Read(buffer, sizeof buffer)) got.append(buffer, n);
  EXPECT_EQ(got, std::string(1000, 'H') + bytes.substr(1000));
  std::vector<ByteRange> reads = holding->reads();
  std::sort(reads.begin(), reads.end(), [](const ByteRange& a, const ByteRange& b) { return a.offset < b.offset; });
  EXPECT_EQ(reads, (std::vector<ByteRange>{{1000, 1000}, {2000, 1000}, {3000, 500}}));
}

// Reads that go forward through the planned pieces cost one read of the source per piece;
// any other read (backwards, between pieces, after them) still gives the source's bytes.
TEST(ByteSourceTest, RangesAheadServesThePiecesAndEveryOtherReadFromTheSource) {
  const std::string bytes = Pattern(10000, 5);
  auto logging = std::make_unique<LoggingSource>(bytes);
  const LoggingSource* log = logging.get();
  const std::vector<ByteRange> pieces = {{100, 900}, {1000, 1000}, {5000, 500}};
  const auto source = ReadRangesAhead(std::move(logging), pieces);
  EXPECT_EQ(source->size(), bytes.size());
  EXPECT_EQ(source->name(), "logged");
  EXPECT_EQ(source->read_ahead_bytes(), 0u);
  // 1. Forward through the first two pieces, across their boundary: the pieces only.
  EXPECT_EQ(ReadRange(*source, 100, 12), bytes.substr(100, 12));
  EXPECT_EQ(ReadRange(*source, 112, 1500), bytes.substr(112, 1500));
  EXPECT_EQ(ReadRange(*source, 1612, 388), bytes.substr(1612, 388));
  // 2. Backwards, between pieces and past them: from the source, the same bytes.
  EXPECT_EQ(ReadRange(*source, 0, 300), bytes.substr(0, 300));
  EXPECT_EQ(ReadRange(*source, 3000, 2200), bytes.substr(3000, 2200));  // a gap, then the third piece
  EXPECT_EQ(ReadRange(*source, 9990, 100), bytes.substr(9990));
  EXPECT_EQ(ReadRange(*source, 20000, 5), "");
  // 3. The source was asked for each piece once (fetched on other threads, so sorted
  //    here), and for the rest only what no piece held.
  std::vector<ByteRange> reads = log->reads();
  std::sort(reads.begin(), reads.end(), [](const ByteRange& a, const ByteRange& b) { return a.offset < b.offset; });
  const std::vector<ByteRange> expected = {{0, 300},    {100, 900},  {1000, 1000},  {3000, 2000},
                                           {5000, 500}, {9990, 100}, {10000, 90}, {20000, 5}};
  EXPECT_EQ(reads, expected);
}

TEST(ByteSourceTest, PiecesAlongCutAtExtentBoundaries) {
  // Records of 300 bytes back to back, pieces of at most 1000: three records a piece.
  std::vector<ByteRange> records;
  for (uint64_t i = 0; i < 7; ++i) records.push_back({i * 300, 300});
  EXPECT_EQ(PiecesAlong(records, 1000), (std::vector<ByteRange>{{0, 900}, {900, 900}, {1800, 300}}));
  // A gap wider than allowed starts a new piece; a record over the piece size is its own.
  const std::vector<ByteRange> spread = {{0, 100}, {150, 100}, {1000, 100}, {1100, 5000}, {6100, 10}};
  EXPECT_EQ(PiecesAlong(spread, 1000, 50), (std::vector<ByteRange>{{0, 250}, {1000, 100}, {1100, 5000}, {6100, 10}}));
  EXPECT_TRUE(PiecesAlong({}, 1000).empty());
  EXPECT_EQ(SplitIntoPieces({10, 2500}, 1000), (std::vector<ByteRange>{{10, 1000}, {1010, 1000}, {2010, 500}}));
  EXPECT_TRUE(SplitIntoPieces({10, 0}, 1000).empty());
}

}  // namespace
}  // namespace imgpipe
