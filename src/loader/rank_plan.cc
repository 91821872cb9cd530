#include "loader/rank_plan.h"

#include "pipeline/image_samples.h"
#include "pipeline/shard_rule.h"
#include "util/error.h"

namespace imgpipe::loader {

RankPlan PlanRank(const LoaderData& data, const LoaderOptions& o) {
  const int64_t w = o.world_size;
  const auto b = static_cast<int64_t>(o.batch_size);
  const int64_t smallest = data.samples / w;
  const int64_t largest = (data.samples + w - 1) / w;
  const std::optional<pipeline::ShardRule> rule = pipeline::RecordShardRule(ImageConfigOf(data, o));
  RankPlan plan;
  plan.samples = static_cast<int64_t>(pipeline::ShardSize(rule.value_or(pipeline::ShardRule::kContiguous),
                                                          static_cast<uint64_t>(data.samples), o.world_size,
                                                          o.rank));
  plan.batches = o.last_batch == "drop" ? smallest / b : (largest + b - 1) / b;
  const std::string where = " (" + std::to_string(data.samples) + " samples in all, world_size " +
                            std::to_string(w) + ")";
  if (plan.batches == 0 || smallest == 0) {
    throw InvalidArgument("Loader: batch_size " + std::to_string(b) + " is larger than the " +
                          std::to_string(smallest) + " samples rank " + std::to_string(o.rank) + " gets" + where);
  }
  if (o.last_batch == "pad") plan.pad_to = plan.batches * b;
  if (o.last_batch == "partial" && smallest != largest && smallest % b == 0) {
    // The smaller shards give one (full) batch fewer than the larger ones.
    if (b == 1) {
      throw InvalidArgument("Loader: last_batch='partial' with batch_size 1 cannot give every rank the same "
                            "number of batches" + where + "; use last_batch='pad' or 'drop'");
    }
    if (plan.samples == smallest) plan.split_batch = plan.batches - 2;
  }
  return plan;
}

pipeline::Pipeline<pipeline::Batch> BuildBatches(const LoaderData& data, const LoaderOptions& o,
                                                 const RankPlan& plan) {
  pipeline::ImagePipelineConfig config = ImageConfigOf(data, o);
  config.pad_to = plan.pad_to;
  config.split_batch = plan.split_batch;
  config.shuffle = ShufflesRecords(o);
  if (o.preset == "eval") {
    const EvalPreset preset = EvalPresetOf(o);
    return ShufflesRecords(o) ? pipeline::TrainPipeline(config, preset) : pipeline::EvalPipeline(config, preset);
  }
  return pipeline::TrainPipeline(config, TrainPresetOf(o));
}

}  // namespace imgpipe::loader
