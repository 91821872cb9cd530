// Loader: a data set as epochs of equal-sized batches for one rank of many, the one
// loader that imgpipe.Loader, `imgpipe train` and `imgpipe bench` share. It resolves
// `data` (pipeline::ResolveDataSource), plans this rank's batches (RankPlan), refuses
// options whose buffers cannot fit in memory (memory_estimate.h), makes one pass per
// epoch (LoaderPass) and starts the next epoch's pass before this one ends (PassAhead),
// and saves and restores its position exactly (LoaderState).
//
//   loader::Loader loader("shards/", options);
//   for (int64_t epoch = 0; epoch < epochs; ++epoch) {
//     loader.SetEpoch(epoch);
//     auto pass = loader.Iterate();
//     while (std::optional<loader::LoaderBatch> batch = pass->Next()) { ... }
//   }
//
// Throws InvalidArgument for bad options, Error/DataError/IoError as the pipeline does.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "loader/loader_data.h"
#include "loader/loader_options.h"
#include "loader/loader_pass.h"
#include "loader/memory_estimate.h"
#include "loader/rank_plan.h"
#include "pipeline/iterator_state.h"
#include "pipeline/stats.h"

namespace imgpipe::loader {

// A Loader's position: which epoch, how many of its batches were yielded, and the
// pipeline's state there (none at the epoch's start or end), with the options that
// shape the batches and a fingerprint of the data, so that another loader's state is
// refused.
struct LoaderState {
  static constexpr int64_t kVersion = 1;
  int64_t epoch = 0;
  int64_t batches = 0;
  std::optional<std::string> pipeline;  // pipeline::IteratorState, serialized
  LoaderOptions options;                // the in-state ones (ForEachOption) matter
  uint32_t data = 0;                    // DataFingerprint
};

// The state as bytes (for checkpoints), and back; Deserialize throws Error for bytes
// that are not a state of this version.
std::string SerializeLoaderState(const LoaderState& state);
LoaderState DeserializeLoaderState(const std::string& bytes);

class Loader {
 public:
  // Resolves `data`, counts its samples, plans this rank's batches and builds the
  // pipeline; throws InvalidArgument for a bad option, when this rank would get no
  // batch, or when the buffers cannot fit the RAM budget or the machine (MemoryNeed).
  Loader(const std::string& data, LoaderOptions options);
  // The same for data resolved already (pipeline::ResolveDataSource with the keys and
  // label offset of `options`): a program that resolved it once to describe it, or for
  // several loaders (train and validation), makes no request or read of it again.
  Loader(pipeline::DataSource source, LoaderOptions options);
  // Stops the pass started ahead; a pass handed out goes on for whoever holds it.
  ~Loader();

  // Batches each rank yields per epoch.
  int64_t size() const { return plan_.batches; }
  const LoaderOptions& options() const { return options_; }
  const LoaderData& data() const { return data_; }
  const RankPlan& plan() const { return plan_; }
  // What the buffers of these options hold at most (see memory_estimate.h).
  const MemoryNeed& memory() const { return memory_; }

  // The epoch of the next pass (shuffles and augmentation draw from it). A loaded state
  // of another epoch is dropped: that epoch starts afresh.
  void SetEpoch(int64_t epoch);
  int64_t epoch() const { return epoch_; }
  // No pass is started ahead for an epoch >= `epochs` (a run that ends there; none:
  // no end), so the last epoch does not decode batches nobody takes.
  void SetEpochLimit(std::optional<int64_t> epochs) { epoch_limit_ = epochs; }
  // A new pass over epoch `epoch()` (continuing a loaded state, when there is one): the
  // pass started ahead when it is over that epoch, else a new one. Error after Close.
  std::shared_ptr<LoaderPass> Iterate();
  // The latest pass's position (epoch `epoch()` not started: 0 batches).
  LoaderState State();
  // Continues from `state` at the next Iterate; throws InvalidArgument naming the
  // differing option (or the data) when `state` was made by another loader.
  void LoadState(const LoaderState& state);

  // Per-stage statistics of the latest pass (empty before the first).
  std::vector<pipeline::StageSnapshot> Stats();
  // `imgpipe bench`'s table and bottleneck line for the latest pass ("" before one).
  std::string Report();
  // The buffer pool the passes share: {allocated from the system, handed out again}
  // as of the latest pass (none before the first).
  std::optional<std::pair<size_t, size_t>> PoolCounters();
  // Stops the latest pass's threads and the one started ahead; Iterate then throws.
  void Close();

 private:
  // Checks options_ and sets up the cache of URL shards it names.
  void CheckOptionsAndCache();
  // Plans this rank's share of `data`, checks the memory and builds the pipeline.
  void Build(LoaderData data);
  // The epoch the iteration after this one is expected to ask for (none: start nothing
  // ahead, as with start_ahead false): this one's again when the last two iterations
  // were over the same epoch, the next one when they differed; before a second
  // iteration, the next one when SetEpoch or LoadState was called; none at or past
  // the epoch limit.
  std::optional<int64_t> ExpectedNextEpoch() const;

  LoaderOptions options_;
  LoaderData data_;
  RankPlan plan_;
  MemoryNeed memory_;
  pipeline::Pipeline<pipeline::Batch> batches_;
  int64_t epoch_ = 0;
  bool epoch_chosen_ = false;              // SetEpoch or LoadState was called
  std::optional<int64_t> previous_epoch_;  // of the latest pass handed out
  bool closed_ = false;
  std::optional<int64_t> epoch_limit_;     // SetEpochLimit
  std::shared_ptr<PassAhead> passes_;   // makes the passes; holds the one started ahead
  std::shared_ptr<LoaderPass> latest_;  // kept for State and Stats after the pass
  // A loaded state for the next pass: its pipeline state and batches already yielded.
  std::optional<pipeline::IteratorState> pending_state_;
  int64_t pending_batches_ = 0;
};

}  // namespace imgpipe::loader
