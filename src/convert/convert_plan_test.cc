#include "convert/convert_plan.h"

#include <gtest/gtest.h>

#include <set>

#include "util/error.h"

namespace imgpipe {
namespace {

InputList MakeInputs(size_t n) {
  InputList list;
  list.class_names = {"a", "b"};
  for (size_t i = 0; i < n; ++i) {
    list.Add("/x/" + std::to_string(i), static_cast<int>(i % 2));
  }
  return list;
}

TEST(ParseSplits, Valid) {
  auto splits = ParseSplits("train=0.9,validation=0.1");
  ASSERT_EQ(splits.size(), 2u);
  EXPECT_EQ(splits[1].name, "validation");
  EXPECT_DOUBLE_EQ(splits[0].fraction, 0.9);
}

TEST(ParseSplits, Invalid) {
  EXPECT_THROW(ParseSplits("train=0.9"), Error);
  EXPECT_THROW(ParseSplits("train"), Error);
  EXPECT_THROW(ParseSplits("train=x"), Error);
  EXPECT_THROW(ParseSplits("a=0.5,a=0.5"), Error);
  EXPECT_THROW(ParseSplits("a/b=1"), Error);
}

TEST(ParseByteSize, Units) {
  EXPECT_EQ(ParseByteSize("256MB"), 256'000'000u);
  EXPECT_EQ(ParseByteSize("1GiB"), 1ull << 30);
  EXPECT_EQ(ParseByteSize("64k"), 64'000u);
  EXPECT_EQ(ParseByteSize("4096"), 4096u);
  EXPECT_EQ(ParseByteSize("1.5KiB"), 1536u);
  EXPECT_THROW(ParseByteSize("12XB"), Error);
  EXPECT_THROW(ParseByteSize("-1"), Error);
  EXPECT_THROW(ParseByteSize("MB"), Error);
}

TEST(MakeConvertPlan, EveryInputInExactlyOneShard) {
  InputList inputs = MakeInputs(1003);
  std::vector<uint64_t> sizes(1003, 1000);
  PlanOptions options;
  options.splits = ParseSplits("train=0.8,validation=0.2");
  options.shard_bytes = 100'000;
  options.seed = 5;
  ConvertPlan plan = MakeConvertPlan(inputs, sizes, options);
  std::multiset<size_t> seen;
  size_t train = 0;
  for (const PlannedShard& shard : plan.shards) {
    for (size_t i : shard.inputs) seen.insert(i);
    if (shard.split == "train") train += shard.inputs.size();
    EXPECT_EQ(shard.file_name, ShardFileName(shard.split, shard.index, shard.count));
  }
  EXPECT_EQ(seen.size(), 1003u);
  EXPECT_EQ(std::set<size_t>(seen.begin(), seen.end()).size(), 1003u);
  EXPECT_EQ(train, 802u);  // round(0.8 * 1003)
  // 802 KB at 100 KB per shard -> 9 train shards; 201 KB -> 3 validation shards.
  EXPECT_EQ(plan.shards.front().count, 9);
  EXPECT_EQ(plan.shards.back().count, 3);
  EXPECT_EQ(plan.shards.back().file_name, "validation-00002-of-00003.tfrecord");
}

TEST(MakeConvertPlan, DeterministicAndSeedDependent) {
  InputList inputs = MakeInputs(200);
  std::vector<uint64_t> sizes(200, 10);
  PlanOptions options;
  options.min_shards = 4;
  ConvertPlan a = MakeConvertPlan(inputs, sizes, options);
  ConvertPlan b = MakeConvertPlan(inputs, sizes, options);
  options.seed = 1;
  ConvertPlan c = MakeConvertPlan(inputs, sizes, options);
  ASSERT_EQ(a.shards.size(), 4u);
  EXPECT_EQ(a.shards[0].inputs, b.shards[0].inputs);
  EXPECT_NE(a.shards[0].inputs, c.shards[0].inputs);
  // Shuffled: the first shard mixes both classes and is not the first 50 inputs.
  std::set<int> labels;
  for (size_t i : a.shards[0].inputs) labels.insert(inputs.label(i));
  EXPECT_EQ(labels.size(), 2u);
  EXPECT_NE(a.shards[0].inputs[0] + 1, a.shards[0].inputs[1]);
  for (const PlannedShard& s : a.shards) EXPECT_EQ(s.inputs.size(), 50u);
}

TEST(MakeConvertPlan, MinShardsHonouredEvenWithFewInputs) {
  InputList inputs = MakeInputs(3);
  PlanOptions options;
  options.min_shards = 5;
  ConvertPlan plan = MakeConvertPlan(inputs, {1, 1, 1}, options);
  ASSERT_EQ(plan.shards.size(), 5u);
  size_t total = 0;
  for (const PlannedShard& s : plan.shards) total += s.inputs.size();
  EXPECT_EQ(total, 3u);
}

TEST(ShardBelongsToWorker, RoundRobin) {
  int owners[10] = {};
  for (size_t i = 0; i < 10; ++i) {
    for (int w = 0; w < 3; ++w) owners[i] += ShardBelongsToWorker(i, w, 3);
  }
  for (int n : owners) EXPECT_EQ(n, 1);
}

}  // namespace
}  // namespace imgpipe
