// imgpipe.Loader's options and the pipeline they make, without Python: the module
// (loader.cc) and the test tool that checks its batches against the C++ pipeline's
// (python/tests/loader_batches_main.cc) both build their pipeline here. Throws Error
// for a bad option.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "image/presets.h"
#include "loader_data.h"
#include "pipeline/image_samples.h"

namespace imgpipe::python {

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
  // Start the next iteration's pass when an epoch's last batch is yielded (see
  // PassAhead in loader_pass.h); the batches are the same either way. Off by default:
  // on a quiet 2-core machine it measured 0.88x of off (README, Python).
  bool start_ahead = false;
};

// Calls f(name, field, in_state) for every option: the one list of their Python names.
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
}

// Throws Error naming the first option that is out of range.
void CheckOptions(const LoaderOptions& o);

// What one rank reads and yields per epoch. Every rank yields `batches` batches:
// - drop: the smallest shard's whole batches (the rest of each shard is dropped);
// - partial: ceil(largest shard / batch_size); a rank whose shard gives one batch fewer
//   splits its last full batch in two (`split_batch`);
// - pad: the same count, every batch full: the shard is padded to batches * batch_size
//   with repeats of its first samples (`pad_to`); samples at positions >= `samples`
//   of the rank's sequence are padding.
struct RankPlan {
  int64_t samples = 0;   // records in this rank's shard
  int64_t batches = 0;   // batches per epoch, equal on every rank
  int64_t pad_to = 0;    // pipeline::ImagePipelineConfig::pad_to
  int64_t split_batch = -1;  // pipeline::ImagePipelineConfig::split_batch
};

// The plan for `o.rank`; throws Error when a rank would get no batch, or for
// last_batch="partial" with batch_size 1 when the shards differ (nothing to split),
// on every rank alike.
RankPlan PlanRank(const LoaderData& data, const LoaderOptions& o);

// The pipeline `imgpipe bench`/`train` build for these options, over this rank's
// shard, with `plan`'s padding or split.
pipeline::Pipeline<pipeline::Batch> BuildBatches(const LoaderData& data, const LoaderOptions& o,
                                                 const RankPlan& plan);

// The pipeline-wide options (tf.data's Options) of these loader options.
pipeline::PipelineOptions PipelineOptionsOf(const LoaderOptions& o);

// The data-source options (pipeline::DataSourceOptions) of these loader options.
pipeline::DataSourceOptions DataSourceOptionsOf(const LoaderOptions& o);

}  // namespace imgpipe::python
