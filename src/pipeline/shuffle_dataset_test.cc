#include "pipeline/shuffle_dataset.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "pipeline/pipeline_test_util.h"
#include "pipeline/repeat_take_dataset.h"
#include "util/error.h"

namespace imgpipe::pipeline {
namespace {


std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(ShuffleDataset, IsAPermutation) {
  for (size_t buffer : {1, 2, 7, 100, 1000}) {
    std::vector<std::string> out = Collect(Shuffle(Numbers(100), buffer, 5));
    EXPECT_EQ(Sorted(out), Sorted(NumberedStrings(100))) << "buffer " << buffer;
  }
}

TEST(ShuffleDataset, BufferOfOneIsTheIdentity) {
  EXPECT_EQ(Collect(Shuffle(Numbers(50), 1, 9)), NumberedStrings(50));
}

TEST(ShuffleDataset, ShufflesAndDependsOnTheSeed) {
  std::vector<std::string> a = Collect(Shuffle(Numbers(100), 100, 1));
  std::vector<std::string> a2 = Collect(Shuffle(Numbers(100), 100, 1));
  std::vector<std::string> b = Collect(Shuffle(Numbers(100), 100, 2));
  EXPECT_EQ(a, a2);
  EXPECT_NE(a, b);
  EXPECT_NE(a, NumberedStrings(100));
  // No seed: the pipeline's seed.
  PipelineOptions options;
  options.seed = 1;
  EXPECT_EQ(Collect(Shuffle(Numbers(100), 100), SIZE_MAX, options), a);
  options.seed = 2;
  EXPECT_EQ(Collect(Shuffle(Numbers(100), 100), SIZE_MAX, options), b);
}

TEST(ShuffleDataset, SmallBufferOnlyMovesElementsLocally) {
  // With a buffer of 10, element i cannot come out before position i - 9.
  std::vector<std::string> out = Collect(Shuffle(Numbers(200), 10, 3));
  for (size_t pos = 0; pos < out.size(); ++pos) {
    size_t i = std::stoul(out[pos].substr(1));
    EXPECT_LE(i, pos + 9) << out[pos] << " at " << pos;
  }
}

TEST(ShuffleDataset, ReshufflesAcrossEpochsOnlyWhenAsked) {
  auto epochs = [](bool reshuffle) {
    std::vector<std::string> all = Collect(Repeat(Shuffle(Numbers(30), 30, 7, reshuffle), 3));
    EXPECT_EQ(all.size(), 90u);
    return std::vector<std::vector<std::string>>{{all.begin(), all.begin() + 30},
                                                 {all.begin() + 30, all.begin() + 60},
                                                 {all.begin() + 60, all.end()}};
  };
  auto re = epochs(true);
  EXPECT_NE(re[0], re[1]);
  EXPECT_NE(re[1], re[2]);
  for (auto& e : re) EXPECT_EQ(Sorted(e), Sorted(NumberedStrings(30)));
  auto same = epochs(false);
  EXPECT_EQ(same[0], same[1]);
  EXPECT_EQ(same[1], same[2]);
  EXPECT_EQ(same[0], re[0]);  // epoch 0 is the same stream either way
}

TEST(ShuffleDataset, IsUniformEnough) {
  // Where element 0 lands over many seeds: every position of 10 is hit.
  std::set<size_t> positions;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    std::vector<std::string> out = Collect(Shuffle(Numbers(10), 10, seed));
    positions.insert(std::find(out.begin(), out.end(), "e0") - out.begin());
  }
  EXPECT_EQ(positions.size(), 10u);
}

TEST(ShuffleDataset, EmptyInputAndZeroBuffer) {
  EXPECT_TRUE(Collect(Shuffle(Numbers(0), 10, 1)).empty());
  EXPECT_THROW(Shuffle(Numbers(10), 0), Error);
}

TEST(ShuffleDataset, SaveRestoreAtEveryCut) {
  CheckSaveRestoreAtEveryCut([] { return Shuffle(Numbers(40), 8, 11); }, 100);
  CheckSaveRestoreAtEveryCut([] { return Shuffle(Numbers(20), 64, 11); }, 100);
}

TEST(ShuffleDataset, SaveRestoreMidEpochAfterRepeat) {
  CheckSaveRestoreAtEveryCut([] { return Repeat(Shuffle(Numbers(12), 5), 3); }, 100);
  // Repeat forever: the first 60 elements, cut anywhere.
  PipelineOptions options;
  options.seed = 99;
  CheckSaveRestoreAtEveryCut([] { return Repeat(Shuffle(Numbers(9), 4)); }, 60, options);
}

TEST(ShuffleDataset, RecordsAreSavedByReference) {
  std::string path = TestTempPath("shuffle.tfrecord");
  std::vector<std::string> payloads;
  for (int i = 0; i < 30; ++i) payloads.push_back(std::string(4000, static_cast<char>('a' + i % 26)) + std::to_string(i));
  std::vector<IndexEntry> entries = WriteTestTfRecords(path, payloads);
  auto make = [&] {
    std::vector<Record> records;
    for (size_t i = 0; i < payloads.size(); ++i) {
      records.push_back(Record{payloads[i], path, entries[i].offset, static_cast<int64_t>(i),
                               RecordOrigin::kTfRecord});
    }
    return Shuffle<Record>(MakeVectorDataset(records), 20, 4);
  };
  auto it = make()->MakeIterator(MakeTestContext());
  std::vector<Record> head = Drain(*it, 5);
  IteratorState state;
  it->Save(state);
  // 20 buffered records of 4 KB by value would be 80 KB.
  EXPECT_LT(state.Serialize().size(), 20u * 200u);
  CheckSaveRestoreAtEveryCut(make, 30);
  RemoveFile(path);
}

TEST(ShuffleDataset, Statistics) {
  auto ctx = MakeTestContext();
  auto it = Shuffle(Numbers(50), 16, 1)->MakeIterator(ctx);
  Drain(*it, 10);
  bool found = false;
  for (const StageSnapshot& s : ctx.stats->Snapshot()) {
    if (s.name != "shuffle") continue;
    found = true;
    EXPECT_EQ(s.elements, 10u);
    EXPECT_EQ(s.buffer_capacity, 16);
    EXPECT_EQ(s.buffer_fill, 16);
    EXPECT_EQ(s.depth, 0);
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace imgpipe::pipeline
