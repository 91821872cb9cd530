#include "pipeline/shard_rule.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "pipeline/pipeline_test_util.h"
#include "pipeline/shard_dataset.h"
#include "pipeline/source_test_util.h"
#include "util/error.h"

namespace imgpipe::pipeline {
namespace {

TEST(ShardRuleTest, StridedSizeCountsTheElementsOfTheShard) {
  for (uint64_t n = 0; n <= 30; ++n) {
    for (int w = 1; w <= 7; ++w) {
      uint64_t total = 0;
      for (int r = 0; r < w; ++r) {
        uint64_t members = 0;
        for (uint64_t i = 0; i < n; ++i) members += StridedShardOf(i, w) == static_cast<uint64_t>(r);
        EXPECT_EQ(StridedShardSize(n, w, r), members) << n << " elements, shard " << r << " of " << w;
        total += members;
      }
      EXPECT_EQ(total, n);
    }
  }
  EXPECT_EQ(StridedShardSize(10, 3, 0), 4u);  // 0, 3, 6, 9
  EXPECT_EQ(StridedShardSize(10, 3, 2), 3u);  // 2, 5, 8
  EXPECT_EQ(StridedShardSize(2, 4, 3), 0u);   // more shards than elements
}

TEST(ShardRuleTest, StridedSizeIsWhatShardDatasetYields) {
  auto input = MakeVectorDataset(NumberedStrings(23));
  for (int w = 1; w <= 6; ++w) {
    for (int r = 0; r < w; ++r) {
      EXPECT_EQ(Collect(Shard<std::string>(input, w, r)).size(), StridedShardSize(23, w, r));
    }
  }
}

TEST(ShardRuleTest, ContiguousRangesTileTheSamplesEvenly) {
  for (uint64_t n = 0; n <= 30; ++n) {
    for (int w = 1; w <= 7; ++w) {
      uint64_t next = 0;
      for (int r = 0; r < w; ++r) {
        SampleRange range = ContiguousShardRange(n, w, r);
        EXPECT_EQ(range.begin, next) << n << " samples, shard " << r << " of " << w;
        EXPECT_EQ(range.begin, r * n / w);
        EXPECT_GE(range.size(), n / w);
        EXPECT_LE(range.size(), n / w + 1);
        next = range.end;
      }
      EXPECT_EQ(next, n);
    }
  }
  EXPECT_EQ(ContiguousShardRange(10, 3, 0).end, 3u);  // [0, 3), [3, 6), [6, 10)
  EXPECT_EQ(ContiguousShardRange(10, 3, 2).begin, 6u);
}

TEST(ShardRuleTest, HugeCountsDoNotOverflow) {
  const uint64_t n = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(ContiguousShardRange(n, 3, 2).end, n);
  EXPECT_EQ(ContiguousShardRange(n, 2, 1).begin, n / 2);
  EXPECT_EQ(StridedShardSize(n, 2, 0), n / 2 + 1);  // 0, 2, ..., n - 1 (n is odd)
  EXPECT_EQ(StridedShardSize(n, 2, 1), n / 2);
}

TEST(ShardRuleTest, BadShardsThrow) {
  EXPECT_THROW(StridedShardSize(10, 0, 0), Error);
  EXPECT_THROW(StridedShardSize(10, 3, 3), Error);
  EXPECT_THROW(ContiguousShardRange(10, 3, -1), Error);
  EXPECT_THROW(CheckShardIndex("test", 2, 2), Error);
  EXPECT_NO_THROW(CheckShardIndex("test", 2, 1));
}

}  // namespace
}  // namespace imgpipe::pipeline
