// One pass of a Loader over an epoch (LoaderPass), the pass the Loader starts ahead of
// the next epoch (PassAhead), and the registry that stops every live pass's threads
// (at a Python interpreter's exit). Throws Error as the pipeline does.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "loader/batch_mixing.h"
#include "loader/loader_options.h"
#include "loader/rank_plan.h"
#include "pipeline/image_samples.h"

namespace imgpipe::loader {

// One batch: the pipeline's Batch (shared, so that arrays exported from it can keep it),
// which of its samples are padding (last_batch="pad") or stand-ins for bad records (1),
// the shape of its samples, and its mixing draw when mixup or cutmix is on: applied to
// float32 images already, to be applied to uint8 ones after normalising (the labels stay
// the samples' own; see batch_mixing.h for the loss).
struct LoaderBatch {
  std::shared_ptr<pipeline::Batch> batch;
  std::shared_ptr<std::vector<uint8_t>> padded;
  OutputLayout layout;
  int image_size;
  std::optional<MixDraw> mix;
};

// How fast a loader's passes go, as last measured: the seconds from a pass's start to
// its first batch, and between its batches. Shared by the loader's passes, so that a pass
// that has yielded fewer than two batches times the start of the next one by the pass
// before it (an epoch of a few batches would otherwise start the next one too late).
// Thread-safe.
class PassPace {
 public:
  struct Measure {
    double startup_seconds = 0;
    double interval_seconds = 0;
  };
  void Record(Measure measure);
  // The last measure recorded; none before the first.
  std::optional<Measure> Last() const;

 private:
  mutable std::mutex mu_;
  std::optional<Measure> last_;  // guarded by mu_
};

// One pass over an epoch: the pipeline's iterator, stopped after `plan.batches`
// batches, drawing its buffers from `pool` and recording its pace in `pace` (both the
// loader's, shared by its passes). Close may come from another thread (or atexit). The
// pipeline's threads start at the first Next, or at StartAhead.
class LoaderPass {
 public:
  LoaderPass(const pipeline::Pipeline<pipeline::Batch>& batches, const pipeline::PipelineOptions& options,
             int64_t epoch, const RankPlan& plan, const LoaderOptions& o,
             std::shared_ptr<pipeline::BufferPool> pool, std::shared_ptr<PassPace> pace);
  // Joins the thread StartAhead started (the pipeline's own threads stop with it).
  ~LoaderPass();

  // Continues after `batches` batches, from the pipeline's saved `state` (null: the
  // pass had ended, so nothing is left to yield); call before Next.
  void Restore(const pipeline::IteratorState* state, int64_t batches);
  // Starts the pipeline now: a thread of the pass takes the first batch (kept for Next,
  // or an error rethrown there), so its stages fill while the user is elsewhere.
  void StartAhead();
  // `on_near_end` runs once, without the pass's lock, when Next is about to pull one of
  // the pass's last LeadBatches() batches (or, restored at the epoch's end, to stop);
  // not when the pass is closed first. Set before Next.
  void SetOnNearEnd(std::function<void()> on_near_end);

  // The next batch (none after `limit` batches), mixed when mixing is on (the draw of
  // its index in the epoch); Error when the pipeline ends first (records skipped as bad
  // under the skip policy). The pass ends (its threads stop) as it yields the last batch.
  std::optional<LoaderBatch> Next();

  int64_t epoch() const { return epoch_; }
  // Whether StartAhead started this pass's threads (before its first Next).
  bool started_ahead();
  // How many batches this pass had yielded when its near end started the next pass
  // (none: it has not).
  std::optional<int64_t> near_end_at();
  // The pool's counters (as the pass ended, once it is over); the pool is the loader's,
  // so they count its earlier passes too.
  std::pair<size_t, size_t> PoolCounters();
  // The pipeline's state and the batches yielded so far; no state once the pass is over
  // or before its first batch is yielded (the epoch's start needs none).
  std::pair<std::optional<std::string>, int64_t> Save();
  // The stages' statistics now (or as the pass ended).
  std::vector<pipeline::StageSnapshot> Stats();
  // `imgpipe bench`'s report over this pass so far: the per-stage table, then
  // "bottleneck: ..." naming the stage that limits throughput.
  std::string Report();
  // Stops the pipeline's threads (waiting for a Next in progress); Next then stops.
  void Close();

 private:
  // Next's work under the lock; the pass ends after its last batch. Needs mu_.
  std::optional<LoaderBatch> NextLocked();
  // How many batches before the pass's end the next pass must start for its first batch
  // to be ready when this one ends: the start-up time (from the threads' start to the
  // first batch) over the time between batches, plus one; by `measure` (this pass's, from
  // MeasureLocked) once it has yielded two batches, before that by the last pass's
  // (pace_), 1 without either. Needs mu_.
  int64_t LeadBatchesLocked(std::optional<PassPace::Measure> measure) const;
  // This pass's pace so far; none before its second batch. Needs mu_.
  std::optional<PassPace::Measure> MeasureLocked() const;
  // The pipeline's next batch: the one taken ahead when there is one. Needs mu_.
  std::optional<pipeline::Batch> PullLocked();
  // StartAhead's thread: the first batch, unless Next or Close came first.
  void TakeFirstAhead();
  // Waits for StartAhead's thread to end.
  void JoinAheadThread();
  // Keeps the final statistics and stops the pipeline. Needs mu_.
  void EndLocked();
  // Under last_batch="pad" the padding starts at position plan_.samples of the pass,
  // which holds while every record keeps its place (a record that fails to decode gets
  // a stand-in; one the reader skips is not counted in the plan): throws Error (the pass
  // ends) when a batch is short. Needs mu_.
  void CheckPaddingLocked(const pipeline::Batch& batch);
  // 1 for each sample of `batch`, the pass's batch number yielded_, that is padding or
  // a stand-in for a bad record. Needs mu_.
  std::vector<uint8_t> PaddedMarksLocked(const pipeline::Batch& batch) const;

  std::mutex mu_;
  std::unique_ptr<pipeline::PipelineIterator<pipeline::Batch>> it_;  // guarded by mu_; null once over
  int64_t yielded_ = 0;                                // guarded by mu_
  bool ahead_pending_ = false;                         // guarded by mu_; StartAhead's thread may pull
  std::optional<std::optional<pipeline::Batch>> first_;  // guarded by mu_; pulled ahead, not yielded
  std::exception_ptr first_error_;                     // guarded by mu_; the ahead pull's error
  std::vector<pipeline::StageSnapshot> stats_at_end_;  // guarded by mu_
  const pipeline::BufferPool* pool_ = nullptr;  // the iterator's; read under mu_ while it_ lives
  const std::shared_ptr<PassPace> pace_;
  std::pair<size_t, size_t> pool_counters_;      // guarded by mu_; as the pass ended
  std::function<void()> on_near_end_;            // guarded by mu_; taken by the Next that comes near the end
  std::optional<std::chrono::steady_clock::time_point> started_;      // guarded by mu_; the threads' start
  std::optional<std::chrono::steady_clock::duration> startup_;        // guarded by mu_; to the first batch
  std::optional<std::chrono::steady_clock::time_point> first_yield_;  // guarded by mu_
  bool started_ahead_ = false;                                        // guarded by mu_
  std::optional<int64_t> near_end_at_;                                // guarded by mu_
  std::mutex thread_mu_;
  std::thread ahead_thread_;  // guarded by thread_mu_
  const int64_t epoch_;
  const int64_t limit_;
  const RankPlan plan_;
  const int64_t batch_size_;
  const OutputLayout layout_;
  const int image_size_;
  const BatchMixOptions mix_;
  const uint64_t seed_;
  const int rank_;
  const std::chrono::steady_clock::time_point start_;
};

// The Loader's passes: a new one per iteration, and the one started ahead. When the
// latest pass comes near its end (LeadBatchesLocked), a pass over the epoch the next
// iteration is expected to ask for starts (StartAhead): its reading, shuffle-buffer fill
// and first batches overlap the end of this epoch, so the threads never idle at the
// boundary; Begin hands it out when that epoch is asked for, and drops it otherwise.
// The batches of a pass do not depend on when it started.
class PassAhead : public std::enable_shared_from_this<PassAhead> {
 public:
  PassAhead(pipeline::Pipeline<pipeline::Batch> batches, pipeline::PipelineOptions options, RankPlan plan,
            LoaderOptions o);

  // A pass over `epoch`: the one started ahead when it is over `epoch` and `fresh` is
  // false, else a new one (a pass started ahead for another epoch is closed). When it
  // comes to its last batch, a pass over `next_epoch` starts ahead (none: nothing does).
  // The pass is registered (see CloseAllLoaders).
  std::shared_ptr<LoaderPass> Begin(int64_t epoch, bool fresh, std::optional<int64_t> next_epoch);
  // The loader's epoch is now `epoch` (none: a state was loaded, so the next pass
  // continues it): a pass started ahead over another epoch is closed, and one still to
  // start ahead will be over `epoch` (none: will not start).
  void EpochSet(std::optional<int64_t> epoch);
  // Closes the pass started ahead; none starts after this.
  void Close();

 private:
  // `pass` comes near its end: when it is the latest pass, the next one starts.
  void NearEnd(const LoaderPass* pass);

  const pipeline::Pipeline<pipeline::Batch> batches_;
  const pipeline::PipelineOptions options_;
  const RankPlan plan_;
  const LoaderOptions loader_options_;
  // The buffers of every pass: an epoch's batches reuse the last epoch's memory instead
  // of allocating (and page-faulting) theirs again.
  const std::shared_ptr<pipeline::BufferPool> pool_ = pipeline::BufferPool::Create();
  const std::shared_ptr<PassPace> pace_ = std::make_shared<PassPace>();
  std::mutex mu_;
  const LoaderPass* latest_ = nullptr;     // guarded by mu_; the pass whose end starts the next one
  std::optional<int64_t> next_epoch_;      // guarded by mu_; the epoch to start then
  std::shared_ptr<LoaderPass> ahead_;      // guarded by mu_; started ahead, not handed out
  bool closed_ = false;                    // guarded by mu_
};

// Adds `pass` to the registry of live passes, dropping the entries of passes freed.
void RegisterPass(const std::shared_ptr<LoaderPass>& pass);
// Closes every live pass (their threads are joined); the registry is left empty.
void CloseAllLoaders();

}  // namespace imgpipe::loader
