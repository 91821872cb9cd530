// The memory estimate over real shards (the 153 photos in 4 TFRecord files): a batch is
// what the pipeline really yields, the shuffle buffer holds the rank's records at their
// mean size on disk, URLs add their read-ahead, start_ahead doubles it all; the refusal
// names the figures and the limit that was passed, and nothing that fits is refused.
#include "loader/memory_estimate.h"

#include <gtest/gtest.h>

#include <string>

#include "io/storage.h"
#include "loader/loader_test_util.h"
#include "loader/rank_plan.h"
#include "util/byte_size.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe::loader {
namespace {

// Float32 batches of 16 at 64 px over every file, rank 0 of `world`.
LoaderOptions EstimateOptions(int world = 1) {
  LoaderOptions o = SmallOptions();
  o.layout = "float32";
  o.image_size = 64;
  o.world_size = world;
  o.split = "";
  return o;
}

// The bytes of one batch the pipeline yields for `o`: samples and int64 labels.
uint64_t YieldedBatchBytes(const LoaderOptions& o) {
  const RankPlan plan = PlanRank(PhotoShards(), o);
  pipeline::PipelineIterator<pipeline::Batch> it =
      BuildBatches(PhotoShards(), o, plan).MakeIterator(PipelineOptionsOf(o));
  const std::optional<pipeline::Batch> batch = it.Next();
  return batch ? batch->size * batch->sample_bytes + batch->labels.size() * sizeof(int64_t) : 0;
}

// The shards' mean record size: their bytes on disk over their records.
uint64_t MeanRecordBytes() {
  uint64_t bytes = 0;
  for (const std::string& path : PhotoShards().paths) bytes += FileSize(path);
  return bytes / static_cast<uint64_t>(PhotoShards().samples);
}

TEST(MemoryEstimate, TheFiguresOfRealShards) {
  const LoaderOptions o = EstimateOptions();
  const MemoryNeed need = EstimateMemory(PhotoShards(), o);
  EXPECT_EQ(need.batch_bytes, YieldedBatchBytes(o));
  EXPECT_EQ(need.batches_per_pass, 3u);
  // 153 records, fewer than the shuffle buffer of 1024: the rank's all, and one.
  EXPECT_EQ(need.shuffle_bytes, 154 * MeanRecordBytes());
  EXPECT_EQ(need.read_ahead_bytes, 0u);  // local files
  EXPECT_EQ(need.passes, 2u);            // start_ahead
  EXPECT_EQ(need.minimum_bytes, 2 * (3 * need.batch_bytes + need.shuffle_bytes));
  // Four ranks share the records; uint8 batches are a quarter; no start_ahead, one pass.
  EXPECT_EQ(EstimateMemory(PhotoShards(), EstimateOptions(4)).shuffle_bytes, (153 / 4 + 1) * MeanRecordBytes());
  LoaderOptions small = EstimateOptions();
  small.layout = "uint8";
  small.start_ahead = false;
  const MemoryNeed one_pass = EstimateMemory(PhotoShards(), small);
  EXPECT_EQ(one_pass.batch_bytes, YieldedBatchBytes(small));
  EXPECT_EQ(one_pass.minimum_bytes, 3 * one_pass.batch_bytes + one_pass.shuffle_bytes);
  // The eval preset does not shuffle: no shuffle buffer.
  small.preset = "eval";
  EXPECT_EQ(EstimateMemory(PhotoShards(), small).shuffle_bytes, 0u);
}

TEST(MemoryEstimate, ShardsAtUrlsAddTheirReadAhead) {
  LoaderData remote = PhotoShards();
  remote.paths.clear();
  for (int i = 0; i < 6; ++i) remote.paths.push_back("https://example.com/shard-" + std::to_string(i));
  const MemoryNeed need = EstimateMemory(remote, EstimateOptions());
  // Read at once: cycle_length (4) of the 6 shards, each with its pieces ahead.
  EXPECT_EQ(need.read_ahead_bytes, 4 * ReadAheadBytes(remote.paths[0]));
  EXPECT_GT(need.read_ahead_bytes, 0u);
  EXPECT_EQ(need.minimum_bytes, 2 * (3 * need.batch_bytes + need.shuffle_bytes + need.read_ahead_bytes));
  EXPECT_NE(MemoryTerms(need).find("network read-ahead of " + FormatBytes(need.read_ahead_bytes)), std::string::npos);
}

TEST(MemoryEstimate, TheRefusalNamesTheFiguresAndTheLimit) {
  LoaderOptions o = EstimateOptions();
  const uint64_t minimum = EstimateMemory(PhotoShards(), o).minimum_bytes;
  // Half of a machine of twice the need is the budget: it fits; one byte less does not.
  const MemoryNeed fits = EstimateMemory(PhotoShards(), o, {2 * minimum, 2 * minimum});
  EXPECT_TRUE(MemoryFits(fits));
  EXPECT_NO_THROW(CheckMemory(fits, o));
  const MemoryNeed over = EstimateMemory(PhotoShards(), o, {2 * minimum - 2, 2 * minimum});
  EXPECT_FALSE(MemoryFits(over));
  auto message = [&](const MemoryNeed& need) {
    try {
      CheckMemory(need, o);
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  const std::string budget = message(over);
  for (const std::string& part : {std::string("batch_size=16"), std::string("shuffle_buffer=1024"),
                                  std::string("start_ahead=True"), MemoryTerms(over),
                                  "the RAM budget of " + FormatBytes(minimum - 1), std::string("set ram_budget_bytes")}) {
    EXPECT_NE(budget.find(part), std::string::npos) << part << " in: " << budget;
  }
  // A ulimit below the need, with a budget that allows it: the machine's limit is named.
  o.ram_budget_bytes = 4 * minimum;
  const std::string limit = message(EstimateMemory(PhotoShards(), o, {4 * minimum, minimum - 1}));
  EXPECT_NE(limit.find("this machine's " + FormatBytes(minimum - 1) + " (physical memory or ulimit)"),
            std::string::npos) << limit;
}

TEST(MemoryEstimate, TermsLeaveOutWhatIsZero) {
  LoaderOptions o = EstimateOptions();
  o.preset = "eval";  // no shuffle
  o.start_ahead = false;
  const MemoryNeed need = EstimateMemory(PhotoShards(), o);
  EXPECT_EQ(MemoryTerms(need), "3 batches per pass x " + FormatBytes(need.batch_bytes) + " = " +
                                   FormatBytes(3 * need.batch_bytes));
  const MachineMemory machine = ThisMachineMemory();
  EXPECT_GT(machine.physical_bytes, 0u);
  EXPECT_LE(machine.limit_bytes, machine.physical_bytes);
}

}  // namespace
}  // namespace imgpipe::loader
