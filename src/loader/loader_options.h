// A Loader's options, each declared once (IMGPIPE_LOADER_OPTIONS: name, type, default,
// check, the commands whose flag it is, one line of doc), and what they make: the
// pipeline-wide options, the data-source options and the image pipeline's
// configuration. imgpipe.Loader binds them by name; `imgpipe train`, `bench` and
// `extract` add their flags from the declarations (cli/loader_flags.h); the docs' tables
// are made from them (option_tables.h). Checks throw InvalidArgument naming the option.
#pragma once

#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "image/augment_policy.h"
#include "image/presets.h"
#include "loader/batch_mixing.h"
#include "loader/loader_data.h"
#include "pipeline/image_samples.h"

namespace imgpipe::loader {

// Which commands take a Loader option as the flag FlagName(name) (cli/loader_flags.h);
// the docs' tables (OptionsTable, OptionFlagsTable) list them.
enum OptionCommands : unsigned { kNoCommand = 0, kTrain = 1, kBench = 2, kExtract = 4 };
inline constexpr bool kInState = true;   // the option shapes the batches (see ForEachOption)
inline constexpr bool kNotInState = false;

// The values an option takes: a number in [min, max], or a text of `choices` (empty:
// any); `wording` replaces "in [min, max]" in the error when given.
struct OptionCheck {
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  std::vector<std::string> choices;
  const char* wording = nullptr;
};
inline OptionCheck Any() { return {}; }
inline OptionCheck AtLeast(double min, const char* wording = nullptr) {
  return {min, std::numeric_limits<double>::infinity(), {}, wording};
}
inline OptionCheck Between(double min, double max) { return {min, max, {}, nullptr}; }
inline OptionCheck OneOf(std::vector<std::string> choices) { return {0, 0, std::move(choices), nullptr}; }

// One option's declaration, less its C++ type and default (the struct's field has them).
struct OptionSpec {
  const char* name;  // the Python keyword and the field; the flag is FlagName(name)
  bool in_state;     // a saved state records it; a loader with another value refuses it
  unsigned commands;  // OptionCommands taking FlagName(name)
  OptionCheck check;
  const char* doc;  // one line
};

// Every Loader option, declared once: X(C++ type, name, default, in_state, commands,
// check, doc). From this list come the LoaderOptions struct and its defaults,
// ForEachOption (Python's keywords, saved states), CheckOptions' per-option checks, the
// CLI flags (cli/loader_flags.h) and the docs' tables (loader_options_docs_test).
// Rules between options (rank < world_size, the presets') are CheckOptions' own.
#define IMGPIPE_LOADER_OPTIONS(X)                                                                                  \
  X(size_t, batch_size, pipeline::ImagePipelineConfig{}.batch_size, kInState, kBench, AtLeast(1, "positive"),      \
    "Images per batch (of each rank)")                                                                              \
  X(std::string, preset, "train", kInState, kBench, OneOf({"train", "eval"}),                                       \
    "train (random-resized crop, flip, augmentation) or eval (resize, centre crop)")                                \
  X(int, image_size, TrainPreset{}.size, kInState, kTrain | kBench, Between(8, 4096), "Output image side (pixels)") \
  X(std::string, layout, OutputLayoutName(TrainPreset{}.layout), kInState, kBench, OneOf({"float32", "uint8"}),     \
    "float32 (normalised N x 3 x S x S) or uint8 (N x S x S x 3, to normalise on the GPU)")                         \
  X(uint64_t, seed, pipeline::PipelineOptions{}.seed, kInState, kTrain, Any(),                                      \
    "Seed of the shuffles, crops and augmentation (train: also of the model's initialisation)")                    \
  X(bool, deterministic, pipeline::PipelineOptions{}.deterministic, kInState, kNoCommand, Any(),                    \
    "Same batches in the same order whatever the timing (off: parallel stages yield out of order)")                \
  X(size_t, shuffle_buffer, pipeline::ImagePipelineConfig{}.shuffle_buffer, kInState, kTrain, AtLeast(0),          \
    "Records in the shuffle buffer (0: no shuffle)")                                                                \
  X(int, threads, pipeline::PipelineOptions{}.cpu_budget, kNotInState, kBench, AtLeast(0, "0 (all CPUs) or positive"), \
    "CPU budget: threads of the whole pipeline (0: the CPUs available)")                                            \
  X(uint64_t, ram_budget_bytes, pipeline::PipelineOptions{}.ram_budget_bytes, kNotInState, kNoCommand, Any(),      \
    "Bytes the buffers may hold (0: half of physical memory)")                                                      \
  X(std::string, error_policy, ErrorPolicyName(pipeline::PipelineOptions{}.error_policy), kInState, kNoCommand,     \
    OneOf({"skip", "fail"}), "skip (a bad record is counted, or replaced by a stand-in) or fail (raise at once)")  \
  X(int, rank, 0, kInState, kNoCommand, Any(), "This process's rank, in [0, world_size)")                           \
  X(int, world_size, 1, kInState, kNoCommand, AtLeast(1), "Processes sharing the data")                             \
  X(std::string, last_batch, "drop", kInState, kNoCommand, OneOf({"drop", "partial", "pad"}),                       \
    "drop (whole batches), partial (every sample once) or pad (full batches, repeats marked); see RankPlan")       \
  X(std::optional<std::string>, image_key, std::nullopt, kInState, kTrain | kBench | kExtract, Any(),               \
    "Feature holding the encoded image (unset: detected: image/encoded, image, image_raw, jpeg, ...)")                                   \
  X(std::optional<std::string>, label_key, std::nullopt, kInState, kTrain | kBench | kExtract, Any(),               \
    "Int64 feature holding the label, or none (unset: detected: image/class/label, label, ...)")                                                   \
  X(std::optional<int64_t>, label_offset, pipeline::DataSourceOptions{}.label_offset, kInState,                    \
    kTrain | kBench | kExtract, Any(), "Subtracted from stored labels (unset: detected: 1 for TF-slim's 1-based labels, else 0)")          \
  X(std::string, split, "train", kInState, kExtract, Any(),                                                         \
    "The files of this split (train, validation, test, from the file names; \"\" or unsplit data: every file)")   \
  X(bool, start_ahead, true, kNotInState, kNoCommand, Any(),                                                        \
    "Start the next epoch's pass while this one ends (PassAhead); the batches are the same")                       \
  X(std::string, cache_dir, "", kNotInState, kNoCommand, Any(),                                                     \
    "Keep shards read from URLs as local copies in this folder, process-wide (\"\": none)")                        \
  X(uint64_t, cache_bytes, 0, kNotInState, kNoCommand, Any(),                                                       \
    "At most this many bytes in cache_dir, least recently used removed first (0: 90% of its free space)")          \
  X(std::optional<bool>, shuffle, std::nullopt, kInState, kNoCommand, Any(),                                        \
    "Shuffle the records (unset: the preset's way: train shuffles, eval does not)")                                \
  X(bool, stand_ins, pipeline::ImagePipelineConfig{}.stand_ins, kInState, kNoCommand, Any(),                        \
    "Under error_policy skip, a record that fails to decode is replaced by a marked copy (off: dropped)")          \
  X(int, decode_threads, 0, kNotInState, kTrain, AtLeast(0, "0 (autotuned) or positive"),                           \
    "Threads that decode and transform (0: autotuned within threads)")                                              \
  X(bool, draft_decode, EvalPreset{}.draft_decode, kInState, kBench | kExtract, Any(), kDraftDecodeDoc)             \
  X(int, resize_size, 0, kInState, kNoCommand, Any(),                                                               \
    "Preset eval: resize the shorter side to this (0: image_size * 256 / 224), at least image_size")               \
  X(double, mixup_alpha, BatchMixOptions{}.mixup_alpha, kInState, kTrain, AtLeast(0),                               \
    "Mixup: each batch blended with itself rolled by one, lambda ~ Beta(A, A) (0: off)")                            \
  X(double, cutmix_alpha, BatchMixOptions{}.cutmix_alpha, kInState, kTrain, AtLeast(0),                             \
    "CutMix: a box from the batch rolled by one pasted, lambda ~ Beta(A, A) (0: off)")

// The train preset's augmentation (TrainPreset::augment and random_erase), named as
// torchvision's reference train.py names its flags (docs/augmentation.md); the
// LoaderOptions field `augment`.
#define IMGPIPE_AUGMENT_OPTIONS(X)                                                                                 \
  X(std::string, auto_augment, AugmentPolicyName(AugmentPolicyOptions{}.kind), kInState, kTrain | kBench,          \
    OneOf(AugmentPolicyNames()),                                                                                    \
    "Preset train: torchvision's policy on the flipped crop: ta_wide, ra (RandAugment), imagenet or none")         \
  X(int, ra_num_ops, AugmentPolicyOptions{}.ra_num_ops, kInState, kTrain | kBench, AtLeast(0),                      \
    "RandAugment (auto_augment ra): ops per image")                                                                 \
  X(int, ra_magnitude, AugmentPolicyOptions{}.ra_magnitude, kInState, kTrain | kBench,                              \
    Between(0, AugmentPolicyOptions{}.num_magnitude_bins - 1), "RandAugment (auto_augment ra): the magnitude bin") \
  X(double, random_erase, TrainPreset{}.random_erase, kInState, kTrain | kBench, Between(0, 1),                     \
    "Preset train: RandomErasing's probability (torchvision's scale and ratio ranges)")

#define IMGPIPE_OPTION_FIELD(type, name, default_value, ...) type name = default_value;

// The train preset's augmentation (IMGPIPE_AUGMENT_OPTIONS).
struct AugmentOptions {
  IMGPIPE_AUGMENT_OPTIONS(IMGPIPE_OPTION_FIELD)
};

// The Loader's options (IMGPIPE_LOADER_OPTIONS); the defaults are the C++ pipeline's.
struct LoaderOptions {
  IMGPIPE_LOADER_OPTIONS(IMGPIPE_OPTION_FIELD)
  AugmentOptions augment;
};

// Calls f(spec, field) for every option, as IMGPIPE_LOADER_OPTIONS and then
// IMGPIPE_AUGMENT_OPTIONS declare them.
template <typename Options, typename F>
void ForEachOption(Options& o, F&& f) {
#define IMGPIPE_OPTION_VISIT(type, name, default_value, in_state, commands, check, doc) \
  f(OptionSpec{#name, in_state, commands, check, doc}, o.name);
  IMGPIPE_LOADER_OPTIONS(IMGPIPE_OPTION_VISIT)
#undef IMGPIPE_OPTION_VISIT
#define IMGPIPE_OPTION_VISIT(type, name, default_value, in_state, commands, check, doc) \
  f(OptionSpec{#name, in_state, commands, check, doc}, o.augment.name);
  IMGPIPE_AUGMENT_OPTIONS(IMGPIPE_OPTION_VISIT)
#undef IMGPIPE_OPTION_VISIT
}

// The declaration of the option `name`; throws InvalidArgument for an unknown one.
OptionSpec FindOptionSpec(const std::string& name);

// The CLI flag of an option: "--" and its name with dashes (shuffle_buffer: --shuffle-buffer).
std::string FlagName(const std::string& name);

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

// The Python name of an option's type T: "int", "str or None".
template <typename T>
const char* OptionTypeName() {
  if constexpr (std::is_same_v<T, bool>) {
    return "bool";
  } else if constexpr (std::is_integral_v<T>) {
    return "int";
  } else if constexpr (std::is_floating_point_v<T>) {
    return "float";
  } else if constexpr (std::is_same_v<T, std::string>) {
    return "str";
  } else if constexpr (std::is_same_v<T, std::optional<std::string>>) {
    return "str or None";
  } else if constexpr (std::is_same_v<T, std::optional<bool>>) {
    return "bool or None";
  } else if constexpr (std::is_same_v<T, std::optional<int64_t>>) {
    return "int or None";
  } else {
    return "another type";
  }
}

// Throws InvalidArgument naming the first option that is out of range: its declared
// check, then the rules between options.
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
