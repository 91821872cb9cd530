// A Loader's options (the one list of them, with their defaults and checks) and what
// they make: the pipeline-wide options, the data-source options and the image pipeline's
// configuration. imgpipe.Loader binds them by name; `imgpipe train` and `bench` fill
// them from their flags. Checks throw InvalidArgument naming the option.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>

#include "image/presets.h"
#include "loader/batch_mixing.h"
#include "loader/loader_data.h"
#include "pipeline/image_samples.h"

namespace imgpipe::loader {

// The train preset's augmentation (TrainPreset::augment and random_erase), named as
// torchvision's reference train.py names its flags (docs/augmentation.md).
struct AugmentOptions {
  // "none", "ta_wide", "ra" or "imagenet" (AugmentPolicyNames).
  std::string auto_augment = AugmentPolicyName(AugmentPolicyOptions{}.kind);
  int ra_num_ops = AugmentPolicyOptions{}.ra_num_ops;      // RandAugment's ops per image
  int ra_magnitude = AugmentPolicyOptions{}.ra_magnitude;  // RandAugment's magnitude bin
  double random_erase = TrainPreset{}.random_erase;        // RandomErasing's p
};

// The Loader's options; the defaults are the C++ pipeline's (the structs they name).
struct LoaderOptions {
  size_t batch_size = pipeline::ImagePipelineConfig{}.batch_size;
  std::string preset = "train";  // "train" or "eval"
  int image_size = TrainPreset{}.size;
  std::string layout = OutputLayoutName(TrainPreset{}.layout);
  uint64_t seed = pipeline::PipelineOptions{}.seed;
  bool deterministic = pipeline::PipelineOptions{}.deterministic;
  size_t shuffle_buffer = pipeline::ImagePipelineConfig{}.shuffle_buffer;
  int threads = pipeline::PipelineOptions{}.cpu_budget;
  uint64_t ram_budget_bytes = pipeline::PipelineOptions{}.ram_budget_bytes;
  std::string error_policy = ErrorPolicyName(pipeline::PipelineOptions{}.error_policy);
  int rank = 0;
  int world_size = 1;
  std::string last_batch = "drop";  // "drop", "partial" or "pad" (see RankPlan)
  // How `data` is read, as the CLI's --image-key, --label-key and --label-offset
  // (cli/data_options.cc); unset: pipeline::DataSourceOptions's default (detected).
  std::optional<std::string> image_key;
  std::optional<std::string> label_key;  // "none": no labels
  std::optional<int64_t> label_offset = pipeline::DataSourceOptions{}.label_offset;
  // The files of this split (train, validation, test; "" or unsplit data: every file).
  std::string split = "train";
  // Start the next epoch's pass while this one's last batches are made, so that the
  // threads never idle at an epoch boundary (PassAhead in loader_pass.h); the batches
  // are the same either way.
  bool start_ahead = true;
  // Shards read from URLs are kept as local copies in this folder for the epochs and runs
  // after the first, at most cache_bytes of them (0: 90% of its free space), the least
  // recently used removed first (io/storage.h, ConfigureStorageCache); "": no copies.
  // Process-wide: the loader sets it for every reader of the process.
  std::string cache_dir;
  uint64_t cache_bytes = 0;
  // Shuffle the records (unset: the preset's way: train shuffles, eval does not).
  std::optional<bool> shuffle;
  // Under error_policy "skip", a record that fails to decode keeps its place with a
  // copy of the last good sample, marked in the batch (docs/bad-data.md); off: dropped.
  bool stand_ins = pipeline::ImagePipelineConfig{}.stand_ins;
  // Threads that decode and transform (0: autotuned within `threads`).
  int decode_threads = 0;
  // The eval preset's DCT-scaled decode (EvalPreset::draft_decode).
  bool draft_decode = EvalPreset{}.draft_decode;
  // The eval preset's resize of the shorter side (0: image_size * 256 / 224, as
  // EvalPresetForCrop); at least image_size.
  int resize_size = 0;
  // The train preset's policy and random erasing (preset "train" only).
  AugmentOptions augment;
  // Batch mixing (loader/batch_mixing.h): float32 batches are mixed before they are
  // yielded; uint8 ones carry the draw for the consumer to apply after normalising.
  double mixup_alpha = BatchMixOptions{}.mixup_alpha;
  double cutmix_alpha = BatchMixOptions{}.cutmix_alpha;
};

// Calls f(name, field, in_state) for every option: the one list of their names.
// in_state: the option shapes the batches, so a saved state records it and a loader
// with another value refuses that state.
template <typename Options, typename F>
void ForEachOption(Options& o, F&& f) {
  f("batch_size", o.batch_size, true);
  f("preset", o.preset, true);
  f("image_size", o.image_size, true);
  f("layout", o.layout, true);
  f("seed", o.seed, true);
  f("deterministic", o.deterministic, true);
  f("shuffle_buffer", o.shuffle_buffer, true);
  f("threads", o.threads, false);
  f("ram_budget_bytes", o.ram_budget_bytes, false);
  f("error_policy", o.error_policy, true);
  f("rank", o.rank, true);
  f("world_size", o.world_size, true);
  f("last_batch", o.last_batch, true);
  f("image_key", o.image_key, true);
  f("label_key", o.label_key, true);
  f("label_offset", o.label_offset, true);
  f("split", o.split, true);
  f("start_ahead", o.start_ahead, false);
  f("cache_dir", o.cache_dir, false);
  f("cache_bytes", o.cache_bytes, false);
  f("shuffle", o.shuffle, true);
  f("stand_ins", o.stand_ins, true);
  f("decode_threads", o.decode_threads, false);
  f("draft_decode", o.draft_decode, true);
  f("resize_size", o.resize_size, true);
  f("auto_augment", o.augment.auto_augment, true);
  f("ra_num_ops", o.augment.ra_num_ops, true);
  f("ra_magnitude", o.augment.ra_magnitude, true);
  f("random_erase", o.augment.random_erase, true);
  f("mixup_alpha", o.mixup_alpha, true);
  f("cutmix_alpha", o.cutmix_alpha, true);
}

// An option's value as Python writes it: 'text', True, None, 12.
template <typename T>
std::string OptionText(const T& value) {
  if constexpr (std::is_same_v<T, std::string>) {
    return "'" + value + "'";
  } else if constexpr (std::is_same_v<T, bool>) {
    return value ? "True" : "False";
  } else if constexpr (std::is_same_v<T, std::optional<std::string>> ||
                       std::is_same_v<T, std::optional<int64_t>> || std::is_same_v<T, std::optional<bool>>) {
    return value ? OptionText(*value) : "None";
  } else if constexpr (std::is_floating_point_v<T>) {
    char text[32];  // the shortest text that reads back as the same value
    return std::string(text, std::to_chars(text, text + sizeof(text), value).ptr);
  } else {
    return std::to_string(value);
  }
}

// Throws InvalidArgument naming the first option that is out of range.
void CheckOptions(const LoaderOptions& o);

// Whether the records are shuffled: `shuffle`, else the preset's way.
bool ShufflesRecords(const LoaderOptions& o);

// The pipeline-wide options (tf.data's Options) of these loader options.
pipeline::PipelineOptions PipelineOptionsOf(const LoaderOptions& o);

// The data-source options (pipeline::DataSourceOptions) of these loader options, and
// back (an empty key or an unset offset: detected).
pipeline::DataSourceOptions DataSourceOptionsOf(const LoaderOptions& o);
void SetDataSourceOptions(const pipeline::DataSourceOptions& source, LoaderOptions& o);

// The train preset of these options: image_size, layout, the policy and random erasing.
TrainPreset TrainPresetOf(const LoaderOptions& o);
// The eval preset of these options: image_size, resize_size, layout, draft_decode.
EvalPreset EvalPresetOf(const LoaderOptions& o);

// The image pipeline's configuration for these options over `data`, sharded for
// o.rank (every record once: record-level sharding), without a rank plan's padding.
pipeline::ImagePipelineConfig ImageConfigOf(const LoaderData& data, const LoaderOptions& o);

}  // namespace imgpipe::loader
