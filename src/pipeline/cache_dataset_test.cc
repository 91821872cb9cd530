#include "pipeline/cache_dataset.h"

#include <gtest/gtest.h>

#include <cstring>

#include "pipeline/pipeline_test_util.h"
#include "pipeline/repeat_take_dataset.h"
#include "pipeline/shuffle_dataset.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe::pipeline {
namespace {

// Elements that name their epoch, so that a replay of epoch 0 is visible.
std::shared_ptr<GeneratorDataset<std::string>> EpochNumbers(int64_t n) {
  return std::make_shared<GeneratorDataset<std::string>>(
      n, [](uint64_t epoch, size_t i) { return std::to_string(epoch) + ":" + std::to_string(i); });
}

std::vector<std::string> Epoch0(size_t n) {
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) out.push_back("0:" + std::to_string(i));
  return out;
}

TEST(CacheDataset, MemoryReplaysWithoutReadingTheInput) {
  auto source = EpochNumbers(20);
  DatasetPtr<std::string> cached = Cache<std::string>(source);
  EXPECT_EQ(Collect(cached), Epoch0(20));
  int64_t calls = source->next_calls();
  EXPECT_EQ(calls, 21);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(Collect(cached), Epoch0(20));
  EXPECT_EQ(source->next_calls(), calls);
  EXPECT_EQ(source->iterators_made(), 1);
}

TEST(CacheDataset, RepeatReplaysTheFirstEpoch) {
  auto source = EpochNumbers(5);
  std::vector<std::string> out = Collect(Repeat(Cache<std::string>(source), 4));
  std::vector<std::string> want;
  for (int e = 0; e < 4; ++e) for (const std::string& s : Epoch0(5)) want.push_back(s);
  EXPECT_EQ(out, want);
  EXPECT_EQ(source->next_calls(), 6);
}

TEST(CacheDataset, IncompletePassIsNotCached) {
  auto source = EpochNumbers(10);
  DatasetPtr<std::string> cached = Cache<std::string>(source);
  EXPECT_EQ(Collect(cached, 4).size(), 4u);  // stopped early
  EXPECT_EQ(Collect(cached), Epoch0(10));     // read again, completely
  EXPECT_EQ(source->next_calls(), 4 + 11);
  EXPECT_EQ(Collect(cached), Epoch0(10));
  EXPECT_EQ(source->next_calls(), 15);
}

TEST(CacheDataset, ShuffleAfterCacheReshufflesTheCachedElements) {
  auto source = EpochNumbers(30);
  std::vector<std::string> out =
      Collect(Repeat(Shuffle(Cache<std::string>(source), 30, 3), 2));
  ASSERT_EQ(out.size(), 60u);
  std::vector<std::string> a(out.begin(), out.begin() + 30), b(out.begin() + 30, out.end());
  EXPECT_NE(a, b);
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  EXPECT_EQ(a, b);
  EXPECT_EQ(source->next_calls(), 31);
}

TEST(CacheDataset, FileCacheSurvivesANewDataset) {
  std::string path = TestTempPath("cache.bin");
  auto source = EpochNumbers(25);
  EXPECT_EQ(Collect(Cache<std::string>(source, path)), Epoch0(25));
  ASSERT_TRUE(PathExists(path));
  // 1. As in a new process: a new Cache dataset over a source that must not be read.
  auto untouched = EpochNumbers(25);
  DatasetPtr<std::string> again = Cache<std::string>(untouched, path);
  EXPECT_EQ(Collect(again), Epoch0(25));
  EXPECT_EQ(Collect(Repeat(again, 2)).size(), 50u);
  EXPECT_EQ(untouched->next_calls(), 0);
  // 2. No temporary file is left beside it.
  for (const std::string& name : ListDirectory(DirName(path))) {
    EXPECT_FALSE(name.rfind(BaseName(path) + ".", 0) == 0) << "left over: " << name;
  }
  RemoveFile(path);
}

TEST(CacheDataset, FileCacheOfAnIncompletePassIsNotWritten) {
  std::string path = TestTempPath("partial-cache.bin");
  auto source = EpochNumbers(10);
  EXPECT_EQ(Collect(Cache<std::string>(source, path), 3).size(), 3u);
  EXPECT_FALSE(PathExists(path));
  for (const std::string& name : ListDirectory(DirName(path))) {
    EXPECT_FALSE(name.rfind(BaseName(path) + ".", 0) == 0) << "left over: " << name;
  }
}

TEST(CacheDataset, FileCacheKeepsRecordsByValueWithTheirOrigin) {
  std::string path = TestTempPath("records-cache.bin");
  std::vector<Record> records = {
      Record{"one", "/gone/a.tfrecord", 0, 1, RecordOrigin::kTfRecord},
      Record{"two", "/gone/b.jpg", 0, 2, RecordOrigin::kFile},
      Record{"three", "", 0, -1, RecordOrigin::kValue}};
  EXPECT_EQ(ElementViews(Collect(Cache<Record>(MakeVectorDataset(records), path))),
            ElementViews(records));
  // The replay does not read the (missing) sources.
  EXPECT_EQ(ElementViews(Collect(Cache<Record>(MakeVectorDataset<Record>({}), path))),
            ElementViews(records));
  RemoveFile(path);
}

TEST(CacheDataset, FileCacheOfSamples) {
  std::string path = TestTempPath("samples-cache.bin");
  auto samples = std::make_shared<GeneratorDataset<Sample>>(6, [](uint64_t, size_t i) {
    Sample s;
    s.pixels = BufferPool::Default()->Get(4);
    std::memset(s.pixels.data(), '0' + static_cast<int>(i), 4);
    s.label = static_cast<int64_t>(i);
    return s;
  });
  std::vector<std::string> first = ElementViews(Collect(Cache<Sample>(samples, path)));
  EXPECT_EQ(first.size(), 6u);
  EXPECT_EQ(ElementViews(Collect(Cache<Sample>(samples, path))), first);
  EXPECT_EQ(samples->iterators_made(), 1);
  EXPECT_THROW(Cache<Sample>(samples), Error);  // in memory needs copyable elements
  RemoveFile(path);
}

TEST(CacheDataset, CorruptCacheFileIsADataError) {
  std::string path = TestTempPath("corrupt-cache.bin");
  Collect(Cache<std::string>(EpochNumbers(10), path));
  std::string bytes = ReadFile(path);
  std::string flipped = bytes;
  flipped[flipped.size() - 2] ^= 0x20;
  WriteFileAtomic(path, flipped);
  EXPECT_THROW(Collect(Cache<std::string>(EpochNumbers(10), path)), DataError);
  WriteFileAtomic(path, bytes.substr(0, bytes.size() - 3));
  EXPECT_THROW(Collect(Cache<std::string>(EpochNumbers(10), path)), DataError);
  WriteFileAtomic(path, "not a cache file at all");
  EXPECT_THROW(Collect(Cache<std::string>(EpochNumbers(10), path)), DataError);
  RemoveFile(path);
}

TEST(CacheDataset, SaveRestoreInMemory) {
  // Fresh datasets each time: a restore of a replay refills the cache first.
  CheckSaveRestoreAtEveryCut([] { return Repeat(Cache<std::string>(EpochNumbers(6)), 3); }, 30);
  // One dataset shared by all iterators: fills once, then replays.
  auto shared = Repeat(Cache<std::string>(EpochNumbers(6)), 3);
  CheckSaveRestoreAtEveryCut([&] { return shared; }, 30);
}

TEST(CacheDataset, SaveRestoreWithAFile) {
  std::string path = TestTempPath("restore-cache.bin");
  // 1. Every cut while filling (no file yet when each pipeline is made).
  CheckSaveRestoreAtEveryCut(
      [&] {
        RemoveFile(path);
        return Cache<std::string>(EpochNumbers(8), path);
      },
      20);
  // 2. Every cut while replaying the file, across epochs.
  Collect(Cache<std::string>(EpochNumbers(8), path));
  ASSERT_TRUE(PathExists(path));
  std::vector<std::string> ref = CheckSaveRestoreAtEveryCut(
      [&] { return Repeat(Cache<std::string>(EpochNumbers(0), path), 2); }, 20);
  EXPECT_EQ(ref.size(), 16u);
  RemoveFile(path);
}

TEST(CacheDataset, RestoringAFileReplayNeedsTheFile) {
  std::string path = TestTempPath("vanishing-cache.bin");
  Collect(Cache<std::string>(EpochNumbers(5), path));
  auto it = Cache<std::string>(EpochNumbers(5), path)->MakeIterator(MakeTestContext());
  Drain(*it, 2);
  IteratorState state;
  it->Save(state);
  RemoveFile(path);
  auto restored = Cache<std::string>(EpochNumbers(5), path)->MakeIterator(MakeTestContext());
  EXPECT_THROW(restored->Restore(state), Error);
}

}  // namespace
}  // namespace imgpipe::pipeline
