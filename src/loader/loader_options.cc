#include "loader/loader_options.h"

#include "util/error.h"

namespace imgpipe::loader {

void CheckOptions(const LoaderOptions& o) {
  auto fail = [](const std::string& what) { throw InvalidArgument("Loader: " + what); };
  if (o.batch_size == 0) fail("batch_size must be positive");
  if (o.preset != "train" && o.preset != "eval") fail("preset must be 'train' or 'eval', not '" + o.preset + "'");
  if (o.image_size < 8 || o.image_size > 4096) {
    fail("image_size must be in [8, 4096], not " + std::to_string(o.image_size));
  }
  if (o.threads < 0) fail("threads must be 0 (all CPUs) or positive");
  if (o.decode_threads < 0) fail("decode_threads must be 0 (autotuned) or positive");
  ParseOutputLayout(o.layout);     // InvalidArgument for an unknown layout
  ParseErrorPolicy(o.error_policy);  // and policy
  if (o.world_size < 1 || o.rank < 0 || o.rank >= o.world_size) {
    fail("rank " + std::to_string(o.rank) + " is outside world_size " + std::to_string(o.world_size));
  }
  if (o.last_batch != "drop" && o.last_batch != "partial" && o.last_batch != "pad") {
    fail("last_batch must be 'drop', 'partial' or 'pad', not '" + o.last_batch + "'");
  }
}

bool ShufflesRecords(const LoaderOptions& o) { return o.shuffle.value_or(o.preset == "train"); }

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

void SetDataSourceOptions(const pipeline::DataSourceOptions& source, LoaderOptions& o) {
  o.image_key = source.image_key.empty() ? std::nullopt : std::optional<std::string>(source.image_key);
  o.label_key = source.label_key.empty() ? std::nullopt : std::optional<std::string>(source.label_key);
  o.label_offset = source.label_offset;
}

pipeline::ImagePipelineConfig ImageConfigOf(const LoaderData& data, const LoaderOptions& o) {
  pipeline::ImagePipelineConfig config;
  config.patterns = data.paths;
  config.schema = data.source.schema;
  config.batch_size = o.batch_size;
  config.drop_remainder = o.last_batch == "drop";
  config.shuffle_buffer = o.shuffle_buffer;
  config.num_shards = o.world_size;
  config.shard_index = o.rank;
  config.shard_policy = pipeline::ShardPolicy::kData;  // every record once, even counts
  config.stand_ins = o.stand_ins;
  if (o.decode_threads > 0) config.map_parallelism = o.decode_threads;
  return config;
}

}  // namespace imgpipe::loader
