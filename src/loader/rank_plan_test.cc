// Rank plans over real shards (the 153 photos in 4 TFRecord files): every rank's
// pipeline yields the plan's batches, the same count on every rank, and the ranks'
// shards cover every record once, under last_batch drop, partial (a split batch) and pad;
// ranks that would get no batch are refused.
#include "loader/rank_plan.h"

#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "loader/loader_test_util.h"
#include "util/error.h"

namespace imgpipe::loader {
namespace {

// Eval batches (no shuffle) of small uint8 images, rank `rank` of `world`.
LoaderOptions RankOptions(size_t batch_size, int rank, int world, const std::string& last_batch) {
  LoaderOptions o = SmallOptions();
  o.preset = "eval";
  o.batch_size = batch_size;
  o.rank = rank;
  o.world_size = world;
  o.last_batch = last_batch;
  o.split = "";
  return o;
}

// The sizes of the batches rank o.rank's pipeline yields in one epoch, with `plan`.
std::vector<size_t> BatchSizes(const LoaderOptions& o, const RankPlan& plan) {
  pipeline::PipelineIterator<pipeline::Batch> it =
      BuildBatches(PhotoShards(), o, plan).MakeIterator(PipelineOptionsOf(o));
  std::vector<size_t> sizes;
  while (std::optional<pipeline::Batch> batch = it.Next()) sizes.push_back(batch->size);
  return sizes;
}

TEST(RankPlan, EveryRankYieldsThePlansBatches) {
  ASSERT_EQ(PhotoShards().samples, 153);
  for (const char* policy : {"drop", "partial", "pad"}) {
    for (auto [world, b] : {std::pair{2, 4}, std::pair{4, 13}, std::pair{3, 16}}) {
      SCOPED_TRACE(std::string(policy) + " world " + std::to_string(world) + " batch " + std::to_string(b));
      int64_t covered = 0;
      std::optional<int64_t> batches;
      for (int rank = 0; rank < world; ++rank) {
        const LoaderOptions o = RankOptions(b, rank, world, policy);
        const RankPlan plan = PlanRank(PhotoShards(), o);
        covered += plan.samples;
        if (batches) {
          EXPECT_EQ(plan.batches, *batches) << "rank " << rank;  // equal on every rank
        }
        batches = plan.batches;
        const std::vector<size_t> sizes = BatchSizes(o, plan);
        const size_t yielded = std::accumulate(sizes.begin(), sizes.end(), size_t{0});
        if (std::string(policy) == "drop") {  // whole batches; a larger shard's extra one is cut by the pass
          ASSERT_GE(static_cast<int64_t>(sizes.size()), plan.batches);
          for (int64_t i = 0; i < plan.batches; ++i) EXPECT_EQ(sizes[i], static_cast<size_t>(b));
        } else if (std::string(policy) == "partial") {  // every record, in the plan's count
          EXPECT_EQ(static_cast<int64_t>(sizes.size()), plan.batches);
          EXPECT_EQ(static_cast<int64_t>(yielded), plan.samples);
        } else {  // every batch full: the shard padded to pad_to
          EXPECT_EQ(static_cast<int64_t>(sizes.size()), plan.batches);
          EXPECT_EQ(static_cast<int64_t>(yielded), plan.pad_to);
          EXPECT_EQ(plan.pad_to, plan.batches * b);
        }
      }
      EXPECT_EQ(covered, 153);  // the ranks' shards cover every record once
    }
  }
}

TEST(RankPlan, PartialSplitsTheLastFullBatchOfTheSmallerShard) {
  // 153 over 2 ranks: 76 (19 whole batches of 4) and 77 (19 and one of 1).
  const RankPlan smaller = PlanRank(PhotoShards(), RankOptions(4, 0, 2, "partial"));
  const RankPlan larger = PlanRank(PhotoShards(), RankOptions(4, 1, 2, "partial"));
  EXPECT_EQ(smaller.samples + larger.samples, 153);
  ASSERT_EQ(smaller.samples, 76);
  EXPECT_EQ(smaller.batches, 20);
  EXPECT_EQ(smaller.split_batch, 18);
  EXPECT_EQ(larger.split_batch, -1);
  std::vector<size_t> want(18, 4);
  want.insert(want.end(), {2, 2});
  EXPECT_EQ(BatchSizes(RankOptions(4, 0, 2, "partial"), smaller), want);
  want.assign(19, 4);
  want.push_back(1);
  EXPECT_EQ(BatchSizes(RankOptions(4, 1, 2, "partial"), larger), want);
}

TEST(RankPlan, RanksWithoutABatchOrAnUnevenSplitAreRefused) {
  try {
    PlanRank(PhotoShards(), RankOptions(100, 1, 2, "drop"));
    ADD_FAILURE() << "a batch larger than the rank's shard was planned";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("larger than the 76 samples rank 1 gets"), std::string::npos) << e.what();
  }
  // batch_size 1 has nothing to split: uneven shards cannot get equal counts.
  EXPECT_THROW(PlanRank(PhotoShards(), RankOptions(1, 0, 2, "partial")), InvalidArgument);
  EXPECT_EQ(PlanRank(PhotoShards(), RankOptions(1, 0, 3, "partial")).batches, 51);  // 51 each: even
}

}  // namespace
}  // namespace imgpipe::loader
