#include "loader/loader_options.h"

#include <algorithm>

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
  if (o.preset == "eval" && (a.auto_augment != "none" || a.random_erase > 0)) {
    Fail("auto_augment and random_erase augment preset 'train'; preset 'eval' takes neither");
  }
  if (o.resize_size != 0 && (o.resize_size < o.image_size || o.resize_size > 4 * 4096)) {
    Fail("resize_size must be 0 (image_size * 256 / 224) or in [image_size, 16384], not " +
         std::to_string(o.resize_size));
  }
  if (o.preset == "train" && o.resize_size != 0) Fail("resize_size applies to preset 'eval' only, not 'train'");
}

// "'a' or 'b'", "'a', 'b' or 'c'"; four or more: "one of 'a', 'b', 'c', 'd'".
std::string ChoicesText(const std::vector<std::string>& choices) {
  std::string text = choices.size() > 3 ? "one of " : "";
  for (size_t i = 0; i < choices.size(); ++i) {
    const bool last = i + 1 == choices.size();
    text += (i == 0 ? "" : choices.size() > 3 || !last ? ", " : " or ") + ("'" + choices[i] + "'");
  }
  return text;
}

// Throws InvalidArgument when `value` breaks spec.check: "NAME must be RULE, not VALUE".
template <typename T>
void CheckDeclared(const OptionSpec& spec, const T& value) {
  const OptionCheck& c = spec.check;
  if constexpr (std::is_same_v<T, std::string>) {
    if (c.choices.empty() || std::find(c.choices.begin(), c.choices.end(), value) != c.choices.end()) return;
    Fail(std::string(spec.name) + " must be " + ChoicesText(c.choices) + ", not " + OptionText(value));
  } else if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
    const auto v = static_cast<double>(value);
    if (v >= c.min && v <= c.max) return;
    const std::string rule = c.wording ? c.wording
                             : c.max == std::numeric_limits<double>::infinity()
                                 ? ">= " + OptionText(c.min)
                                 : "in [" + OptionText(c.min) + ", " + OptionText(c.max) + "]";
    Fail(std::string(spec.name) + " must be " + rule + ", not " + OptionText(value));
  }
}

}  // namespace

OptionSpec FindOptionSpec(const std::string& name) {
  std::optional<OptionSpec> found;
  const LoaderOptions defaults;
  ForEachOption(defaults, [&](const OptionSpec& spec, const auto&) {
    if (name == spec.name) found = spec;
  });
  if (!found) throw InvalidArgument("Loader: no option '" + name + "'");
  return *found;
}

std::string FlagName(const std::string& name) {
  std::string flag = "--" + name;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

void CheckOptions(const LoaderOptions& o) {
  // The layers' own checks first, for their wording of an unknown name.
  ParseOutputLayout(o.layout);     // InvalidArgument for an unknown layout
  ParseErrorPolicy(o.error_policy);  // and policy
  try {
    CheckAugmentPolicyOptions(AugmentPolicyOf(o.augment));
  } catch (const InvalidArgument& e) {
    Fail(e.what());
  }
  CheckBatchMixOptions({o.mixup_alpha, o.cutmix_alpha});
  ForEachOption(o, [](const OptionSpec& spec, const auto& field) { CheckDeclared(spec, field); });
  if (o.rank < 0 || o.rank >= o.world_size) {
    Fail("rank " + std::to_string(o.rank) + " is outside world_size " + std::to_string(o.world_size));
  }
  CheckPresetOptions(o);
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
