#include "io/byte_source.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

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

}  // namespace
}  // namespace imgpipe
