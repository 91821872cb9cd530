#include "pipeline/shard_dataset.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "pipeline/pipeline_test_util.h"
#include "pipeline/source_test_util.h"
#include "util/error.h"

namespace imgpipe::pipeline {
namespace {

TEST(ShardDatasetTest, KeepsEveryNumShardsthElementFromIndex) {
  auto input = MakeVectorDataset(NumberedStrings(10));
  EXPECT_EQ(Collect(Shard<std::string>(input, 3, 0)),
            (std::vector<std::string>{"e0", "e3", "e6", "e9"}));
  EXPECT_EQ(Collect(Shard<std::string>(input, 3, 1)), (std::vector<std::string>{"e1", "e4", "e7"}));
  EXPECT_EQ(Collect(Shard<std::string>(input, 3, 2)), (std::vector<std::string>{"e2", "e5", "e8"}));
  EXPECT_EQ(Collect(Shard<std::string>(input, 1, 0)), NumberedStrings(10));
  // More shards than elements: the last shards are empty.
  EXPECT_EQ(Collect(Shard<std::string>(input, 12, 9)), (std::vector<std::string>{"e9"}));
  EXPECT_TRUE(Collect(Shard<std::string>(input, 12, 11)).empty());
}

TEST(ShardDatasetTest, ShardsPartitionTheInput) {
  auto input = MakeVectorDataset(NumberedStrings(23));
  for (int num_shards = 1; num_shards <= 6; ++num_shards) {
    std::vector<std::string> all;
    for (int index = 0; index < num_shards; ++index) {
      std::vector<std::string> shard = Collect(Shard<std::string>(input, num_shards, index));
      EXPECT_LE(shard.size(), 23u / num_shards + 1);
      EXPECT_GE(shard.size(), 23u / num_shards);
      all.insert(all.end(), shard.begin(), shard.end());
    }
    std::sort(all.begin(), all.end());
    std::vector<std::string> want = NumberedStrings(23);
    std::sort(want.begin(), want.end());
    EXPECT_EQ(all, want) << num_shards << " shards";
  }
}

TEST(ShardDatasetTest, BadArgumentsThrow) {
  auto input = MakeVectorDataset(NumberedStrings(3));
  EXPECT_THROW(Shard<std::string>(input, 0, 0), Error);
  EXPECT_THROW(Shard<std::string>(input, -2, 0), Error);
  EXPECT_THROW(Shard<std::string>(input, 2, 2), Error);
  EXPECT_THROW(Shard<std::string>(input, 2, -1), Error);
  EXPECT_THROW(Shard<std::string>(nullptr, 2, 0), Error);
}

TEST(ShardDatasetTest, SaveRestoreAtEveryCut) {
  auto reference = CheckSaveRestoreAtEveryCut(
      [] { return Shard<std::string>(MakeVectorDataset(NumberedStrings(17)), 4, 2); }, 100);
  EXPECT_EQ(reference, (std::vector<std::string>{"e2", "e6", "e10", "e14"}));
}

TEST(ShardDatasetTest, CountsItsElementsAndPullsOnlyWhatItNeeds) {
  auto input = MakeVectorDataset(NumberedStrings(10));
  IteratorContext ctx = MakeTestContext();
  auto it = Shard<std::string>(input, 4, 1)->MakeIterator(ctx);
  EXPECT_EQ(*it->Next(), "e1");
  EXPECT_EQ(input->next_calls(), 2);
  EXPECT_EQ(Drain(it), (std::vector<std::string>{"e5", "e9"}));
  EXPECT_EQ(StatsOf(ctx, "shard").elements, 3u);
}

}  // namespace
}  // namespace imgpipe::pipeline
