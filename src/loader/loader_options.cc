#include "loader/loader_options.h"

#include "loader/batch_mixing.h"
#include "util/error.h"

namespace imgpipe::loader {
namespace {

[[noreturn]] void Fail(const std::string& what) { throw InvalidArgument("Loader: " + what); }

// torchvision's policy arguments of `a`; throws InvalidArgument for an unknown policy name.
AugmentPolicyOptions AugmentPolicyOf(const AugmentOptions& a) {
  AugmentPolicyOptions policy;
  policy.kind = ParseAugmentPolicy(a.auto_augment);
  policy.ra_num_ops = a.ra_num_ops;
  policy.ra_magnitude = a.ra_magnitude;
  return policy;
}

// The augmentation options (preset "train" only) and resize_size (preset "eval" only).
void CheckPresetOptions(const LoaderOptions& o) {
  const AugmentOptions& a = o.augment;
  try {
    CheckAugmentPolicyOptions(AugmentPolicyOf(a));
  } catch (const InvalidArgument& e) {
    Fail(e.what());
  }
  if (!(a.random_erase >= 0 && a.random_erase <= 1)) {
    Fail("random_erase must be in [0, 1], not " + OptionText(a.random_erase));
  }
  if (o.preset == "eval" && (a.auto_augment != "none" || a.random_erase > 0)) {
    Fail("auto_augment and random_erase augment preset 'train'; preset 'eval' takes neither");
  }
  if (o.resize_size != 0 && (o.resize_size < o.image_size || o.resize_size > 4 * 4096)) {
    Fail("resize_size must be 0 (image_size * 256 / 224) or in [image_size, 16384], not " +
         std::to_string(o.resize_size));
  }
  if (o.preset == "train" && o.resize_size != 0) Fail("resize_size applies to preset 'eval' only, not 'train'");
}

}  // namespace

void CheckOptions(const LoaderOptions& o) {
  if (o.batch_size == 0) Fail("batch_size must be positive");
  if (o.preset != "train" && o.preset != "eval") Fail("preset must be 'train' or 'eval', not '" + o.preset + "'");
  if (o.image_size < 8 || o.image_size > 4096) {
    Fail("image_size must be in [8, 4096], not " + std::to_string(o.image_size));
  }
  if (o.threads < 0) Fail("threads must be 0 (all CPUs) or positive");
  if (o.decode_threads < 0) Fail("decode_threads must be 0 (autotuned) or positive");
  ParseOutputLayout(o.layout);     // InvalidArgument for an unknown layout
  ParseErrorPolicy(o.error_policy);  // and policy
  if (o.world_size < 1 || o.rank < 0 || o.rank >= o.world_size) {
    Fail("rank " + std::to_string(o.rank) + " is outside world_size " + std::to_string(o.world_size));
  }
  if (o.last_batch != "drop" && o.last_batch != "partial" && o.last_batch != "pad") {
    Fail("last_batch must be 'drop', 'partial' or 'pad', not '" + o.last_batch + "'");
  }
  CheckPresetOptions(o);
  CheckBatchMixOptions({o.mixup_alpha, o.cutmix_alpha});
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

TrainPreset TrainPresetOf(const LoaderOptions& o) {
  TrainPreset preset;
  preset.size = o.image_size;
  preset.layout = ParseOutputLayout(o.layout);
  preset.augment = AugmentPolicyOf(o.augment);
  preset.random_erase = o.augment.random_erase;
  return preset;
}

EvalPreset EvalPresetOf(const LoaderOptions& o) {
  EvalPreset preset = EvalPresetForCrop(o.image_size, ParseOutputLayout(o.layout));
  if (o.resize_size > 0) preset.resize_size = o.resize_size;
  preset.draft_decode = o.draft_decode;
  return preset;
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
