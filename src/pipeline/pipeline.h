// The pipeline API in tf.data's vocabulary: sources make a Pipeline<T>; each method
// adds one stage and returns a new Pipeline (pipelines are immutable and cheap to
// copy); MakeIterator starts one pass.
//
//   auto batches = pipeline::Pipeline(pipeline::ListFiles({"data/train-*"}, true))
//       .Interleave([](const std::string& f) { return pipeline::TfRecordFiles(
//                       pipeline::FromVector<std::string>({f})); }, 4, 1, 4)
//       .Shuffle(2048)
//       .Map(pipeline::TrainSampleFunction(preset), kAutotune, "train_preset")
//       .Batch(256, true)
//       .Prefetch();
//   auto it = batches.MakeIterator(options);
//   while (auto batch = it.Next()) { ... }
#pragma once

#include <concepts>
#include <type_traits>

#include "pipeline/autotune.h"
#include "pipeline/batch_dataset.h"
#include "pipeline/cache_dataset.h"
#include "pipeline/interleave_dataset.h"
#include "pipeline/map_and_batch_dataset.h"
#include "pipeline/map_dataset.h"
#include "pipeline/pad_dataset.h"
#include "pipeline/prefetch_dataset.h"
#include "pipeline/repeat_take_dataset.h"
#include "pipeline/shard_dataset.h"
#include "pipeline/shuffle_dataset.h"
#include "pipeline/source_datasets.h"
#include "pipeline/split_batch_dataset.h"
#include "pipeline/vector_dataset.h"

namespace imgpipe::pipeline {

// The element type U of a DatasetPtr<U> (or a shared_ptr to any Dataset<U>).
template <typename Ptr>
struct DatasetElementType {
  template <typename U>
  static U Of(const Dataset<U>*);
  using type = decltype(Of(std::declval<Ptr>().get()));
};

// One pass over a pipeline: the root iterator with the services it was made with.
template <typename T>
class PipelineIterator {
 public:
  // `pool`: where the pass's pixel and batch buffers come from; null for a pool of its
  // own. Passes that share one (a loader's epochs) reuse each other's buffers instead of
  // allocating (and page-faulting) them again each pass.
  PipelineIterator(const DatasetPtr<T>& dataset, const PipelineOptions& options, uint64_t epoch,
                   std::shared_ptr<BufferPool> pool = nullptr) {
    options_ = std::make_shared<const PipelineOptions>(options);
    IteratorContext ctx;
    ctx.options = options_;
    ctx.stats = std::make_shared<StatsRegistry>();
    ctx.pool = pool ? std::move(pool) : BufferPool::Create();
    int cpus = options.cpu_budget > 0 ? options.cpu_budget : AvailableCpus();
    uint64_t ram = options.ram_budget_bytes > 0 ? options.ram_budget_bytes : PhysicalMemoryBytes() / 2;
    ctx.autotuner = std::make_shared<Autotuner>(cpus, ram);
    ctx.epoch = epoch;
    ctx.prefix = "0." + dataset->name();
    ctx.depth = 0;
    stats_ = ctx.stats;
    bad_elements_ = ctx.bad_elements;
    pool_ = ctx.pool;
    autotuner_ = ctx.autotuner;
    root_ = dataset->MakeIterator(ctx);
    if (options.autotune) autotuner_->Start();
  }

  // The next element, or nullopt at the end of the pass. Throws Error when the pass
  // ends without an element after skipping bad ones (rule 2 of bad_element.h).
  std::optional<T> Next() {
    std::optional<T> element = root_->Next();
    if (element) {
      delivered_ = true;
    } else if (!delivered_) {
      bad_elements_->ThrowIfOnlySkips();
    }
    return element;
  }

  // The state to continue this pass from later (see Iterator::Save).
  IteratorState Save() {
    IteratorState state;
    root_->Save(state);
    return state;
  }
  // Continues from `state`; call before the first Next.
  void Restore(const IteratorState& state) {
    root_->Restore(state);
    delivered_ = true;  // the pass may have delivered its elements before the save
  }

  std::vector<StageSnapshot> Stats() const { return stats_->Snapshot(); }
  // The autotuner's knobs as they are now (thread counts, buffer sizes, read-ahead).
  std::vector<KnobSnapshot> Knobs() const { return autotuner_->Snapshot(); }
  const PipelineOptions& options() const { return *options_; }
  // The pool of this pass's pixel and batch buffers (maybe shared with other passes).
  const BufferPool& pool() const { return *pool_; }

 private:
  std::shared_ptr<const PipelineOptions> options_;
  std::shared_ptr<BufferPool> pool_;
  std::shared_ptr<StatsRegistry> stats_;
  std::shared_ptr<Autotuner> autotuner_;  // outlives root_ (destroyed after it)
  std::shared_ptr<BadElements> bad_elements_;
  std::unique_ptr<Iterator<T>> root_;
  bool delivered_ = false;  // whether Next has returned an element (or Restore ran)
};

template <typename T>
class Pipeline {
 public:
  explicit Pipeline(DatasetPtr<T> dataset) : dataset_(std::move(dataset)) {}
  const DatasetPtr<T>& dataset() const { return dataset_; }

  Pipeline Shuffle(size_t buffer_size, std::optional<uint64_t> seed = std::nullopt,
                   bool reshuffle_each_epoch = true) const {
    return Pipeline(pipeline::Shuffle<T>(dataset_, buffer_size, seed, reshuffle_each_epoch));
  }

  // fn: U(T&&, const MapContext&). parallelism: threads, or kAutotune.
  template <typename F>
  auto Map(F fn, int parallelism = 1, std::string name = "map") const {
    using U = std::invoke_result_t<F, T&&, const MapContext&>;
    return Pipeline<U>(pipeline::Map<T, U>(dataset_, MapFunction<T, U>(std::move(fn)),
                                           parallelism, std::move(name)));
  }

  // fn: DatasetPtr<U>(const T&), e.g. a file name to its records.
  template <typename F>
  auto Interleave(F fn, int cycle_length, int block_length = 1, int parallelism = 1) const {
    using U = typename DatasetElementType<std::invoke_result_t<F, const T&>>::type;
    return Pipeline<U>(pipeline::Interleave<T, U>(
        dataset_, std::function<DatasetPtr<U>(const T&)>(std::move(fn)), cycle_length,
        block_length, parallelism));
  }

  Pipeline Cache(std::string path = "") const {
    return Pipeline(pipeline::Cache<T>(dataset_, std::move(path)));
  }
  Pipeline Prefetch(int buffer_size = kAutotune) const {
    return Pipeline(pipeline::Prefetch<T>(dataset_, buffer_size));
  }
  Pipeline Repeat(int64_t count = -1) const { return Pipeline(pipeline::Repeat<T>(dataset_, count)); }
  Pipeline Take(int64_t n) const { return Pipeline(pipeline::Take<T>(dataset_, n)); }
  Pipeline Shard(int num_shards, int index) const {
    return Pipeline(pipeline::Shard<T>(dataset_, num_shards, index));
  }
  // Padded to `count` elements with repeats of the first `keep` (pad_dataset.h).
  Pipeline Pad(int64_t count, size_t keep) const {
    return Pipeline(pipeline::Pad<T>(dataset_, count, keep));
  }
  // Batch `index` as two batches (split_batch_dataset.h).
  Pipeline SplitBatch(int64_t index) const
    requires std::same_as<T, pipeline::Batch>
  {
    return Pipeline(pipeline::SplitBatch(dataset_, index));
  }

  // Samples into batches of `size` (the last one smaller unless drop_remainder).
  Pipeline<pipeline::Batch> Batch(size_t size, bool drop_remainder = false) const
    requires std::same_as<T, Sample>
  {
    return Pipeline<pipeline::Batch>(BatchSamples(dataset_, size, drop_remainder));
  }

  // Records into batches of the samples `writer` makes, map and batch fused (each
  // sample written in place in its batch): Map(SampleFunctionOf(writer), parallelism,
  // name).Batch(size, drop_remainder) without the copy, in input order.
  // With `stand_ins`, skipped elements are replaced (map_and_batch_dataset.h).
  Pipeline<pipeline::Batch> MapAndBatch(SampleWriter writer, int parallelism, std::string name,
                                        size_t size, bool drop_remainder = false,
                                        bool stand_ins = false) const
    requires std::same_as<T, Record>
  {
    return Pipeline<pipeline::Batch>(pipeline::MapAndBatch(
        dataset_, std::move(writer), parallelism, std::move(name), size, drop_remainder, stand_ins));
  }

  // Starts a pass (epoch `epoch`: random stages reshuffle per epoch).
  PipelineIterator<T> MakeIterator(const PipelineOptions& options = {}, uint64_t epoch = 0,
                                   std::shared_ptr<BufferPool> pool = nullptr) const {
    return PipelineIterator<T>(dataset_, options, epoch, std::move(pool));
  }

 private:
  DatasetPtr<T> dataset_;
};

}  // namespace imgpipe::pipeline
