#include "loader_options.h"

#include "pipeline/shard_rule.h"
#include "util/error.h"

namespace imgpipe::python {

void CheckOptions(const LoaderOptions& o) {
  auto fail = [](const std::string& what) { throw Error("Loader: " + what); };
  if (o.batch_size == 0) fail("batch_size must be positive");
  if (o.preset != "train" && o.preset != "eval") fail("preset must be 'train' or 'eval', not '" + o.preset + "'");
  if (o.image_size < 8 || o.image_size > 4096) fail("image_size must be in [8, 4096]");
  if (o.threads < 0) fail("threads must be 0 (all CPUs) or positive");
  ParseOutputLayout(o.layout);     // throws for an unknown layout
  ParseErrorPolicy(o.error_policy);  // and policy
  if (o.world_size < 1 || o.rank < 0 || o.rank >= o.world_size) {
    fail("rank " + std::to_string(o.rank) + " is outside world_size " + std::to_string(o.world_size));
  }
  if (o.last_batch != "drop" && o.last_batch != "partial" && o.last_batch != "pad") {
    fail("last_batch must be 'drop', 'partial' or 'pad', not '" + o.last_batch + "'");
  }
}

namespace {

// Records in shard `r` of `w`: image folders are sharded file by file (ShardDataset,
// the strided rule), TFRecords by contiguous ranges (TfRecordRecordShard).
int64_t ShardSamples(const LoaderData& data, int r, int w) {
  const auto n = static_cast<uint64_t>(data.samples);
  if (data.image_folder) return static_cast<int64_t>(pipeline::StridedShardSize(n, w, r));
  return static_cast<int64_t>(pipeline::ContiguousShardRange(n, w, r).size());
}

}  // namespace

RankPlan PlanRank(const LoaderData& data, const LoaderOptions& o) {
  const int64_t w = o.world_size;
  const auto b = static_cast<int64_t>(o.batch_size);
  const int64_t smallest = data.samples / w;
  const int64_t largest = (data.samples + w - 1) / w;
  RankPlan plan;
  plan.samples = ShardSamples(data, o.rank, o.world_size);
  plan.batches = o.last_batch == "drop" ? smallest / b : (largest + b - 1) / b;
  const std::string where = " (" + std::to_string(data.samples) + " samples in all, world_size " +
                            std::to_string(w) + ")";
  if (plan.batches == 0 || smallest == 0) {
    throw Error("Loader: batch_size " + std::to_string(b) + " is larger than the " + std::to_string(smallest) +
                " samples rank " + std::to_string(o.rank) + " gets" + where);
  }
  if (o.last_batch == "pad") plan.pad_to = plan.batches * b;
  if (o.last_batch == "partial" && smallest != largest && smallest % b == 0) {
    // The smaller shards give one (full) batch fewer than the larger ones.
    if (b == 1) {
      throw Error("Loader: last_batch='partial' with batch_size 1 cannot give every rank the same number of "
                  "batches" + where + "; use last_batch='pad' or 'drop'");
    }
    if (plan.samples == smallest) plan.split_batch = plan.batches - 2;
  }
  return plan;
}

pipeline::Pipeline<pipeline::Batch> BuildBatches(const LoaderData& data, const LoaderOptions& o,
                                                 const RankPlan& plan) {
  pipeline::ImagePipelineConfig config;
  config.patterns = data.paths;
  config.schema = data.source.schema;
  config.batch_size = o.batch_size;
  config.drop_remainder = o.last_batch == "drop";
  config.shuffle_buffer = o.shuffle_buffer;
  config.num_shards = o.world_size;
  config.shard_index = o.rank;
  config.shard_policy = pipeline::ShardPolicy::kData;  // every record once, even counts
  config.pad_to = plan.pad_to;
  config.split_batch = plan.split_batch;
  const OutputLayout layout = ParseOutputLayout(o.layout);
  if (o.preset == "eval") return pipeline::EvalPipeline(config, EvalPresetForCrop(o.image_size, layout));
  TrainPreset preset;
  preset.size = o.image_size;
  preset.layout = layout;
  return pipeline::TrainPipeline(config, preset);
}

pipeline::PipelineOptions PipelineOptionsOf(const LoaderOptions& o) {
  pipeline::PipelineOptions options;
  options.deterministic = o.deterministic;
  options.cpu_budget = o.threads;
  options.ram_budget_bytes = o.ram_budget_bytes;
  options.seed = o.seed;
  options.error_policy = ParseErrorPolicy(o.error_policy);
  return options;
}

pipeline::DataSourceOptions DataSourceOptionsOf(const LoaderOptions& o) {
  pipeline::DataSourceOptions options;
  options.image_key = o.image_key.value_or(options.image_key);
  options.label_key = o.label_key.value_or(options.label_key);
  options.label_offset = o.label_offset;
  return options;
}

}  // namespace imgpipe::python
