#include "loader/loader_pass.h"

#include <algorithm>
#include <cmath>

#include "pipeline/stats.h"
#include "util/error.h"

namespace imgpipe::loader {

using pipeline::Batch;
using pipeline::PipelineIterator;

LoaderPass::LoaderPass(const pipeline::Pipeline<Batch>& batches, const pipeline::PipelineOptions& options,
                       int64_t epoch, const RankPlan& plan, const LoaderOptions& o,
                       std::shared_ptr<pipeline::BufferPool> pool, std::shared_ptr<PassPace> pace)
    : pace_(std::move(pace)),
      epoch_(epoch), limit_(plan.batches), plan_(plan), batch_size_(static_cast<int64_t>(o.batch_size)),
      layout_(ParseOutputLayout(o.layout)), image_size_(o.image_size), mix_{o.mixup_alpha, o.cutmix_alpha},
      seed_(o.seed), rank_(o.rank), start_(std::chrono::steady_clock::now()) {
  it_ = std::make_unique<PipelineIterator<Batch>>(
      batches.MakeIterator(options, static_cast<uint64_t>(epoch), std::move(pool)));
  pool_ = &it_->pool();
}

LoaderPass::~LoaderPass() { JoinAheadThread(); }

void LoaderPass::Restore(const pipeline::IteratorState* state, int64_t batches) {
  std::lock_guard<std::mutex> lock(mu_);
  if (state) it_->Restore(*state);
  yielded_ = batches;
}

void LoaderPass::StartAhead() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!it_ || yielded_ > 0 || first_) return;
    ahead_pending_ = true;
    started_ahead_ = true;
    if (!started_) started_ = std::chrono::steady_clock::now();
  }
  std::lock_guard<std::mutex> lock(thread_mu_);
  if (!ahead_thread_.joinable()) ahead_thread_ = std::thread([this] { TakeFirstAhead(); });
}

void LoaderPass::SetOnNearEnd(std::function<void()> on_near_end) {
  std::lock_guard<std::mutex> lock(mu_);
  on_near_end_ = std::move(on_near_end);
}

void LoaderPass::TakeFirstAhead() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!ahead_pending_ || !it_) return;  // Next or Close came first
  ahead_pending_ = false;
  try {
    first_ = it_->Next();
    startup_ = std::chrono::steady_clock::now() - *started_;
  } catch (...) {
    first_ = std::optional<Batch>();
    first_error_ = std::current_exception();
  }
}

void LoaderPass::JoinAheadThread() {
  std::lock_guard<std::mutex> lock(thread_mu_);
  if (ahead_thread_.joinable()) ahead_thread_.join();
}

std::optional<Batch> LoaderPass::PullLocked() {
  ahead_pending_ = false;  // from here the consumer pulls
  if (!first_) {
    if (!started_) started_ = std::chrono::steady_clock::now();
    std::optional<Batch> batch = it_->Next();
    if (!startup_) startup_ = std::chrono::steady_clock::now() - *started_;
    return batch;
  }
  std::optional<Batch> batch = std::move(*first_);
  first_.reset();
  if (first_error_) {
    std::exception_ptr error = std::move(first_error_);
    first_error_ = nullptr;
    std::rethrow_exception(error);
  }
  return batch;
}

std::optional<LoaderBatch> LoaderPass::NextLocked() {
  std::optional<Batch> batch;
  if (it_ && yielded_ < limit_) batch = PullLocked();
  if (!batch) {
    const bool short_pass = it_ && yielded_ < limit_;
    EndLocked();  // the pass is over: its threads stop and its buffers go back
    if (short_pass) {
      throw Error("the pipeline ended after " + std::to_string(yielded_) + " of the " + std::to_string(limit_) +
                  " batches this rank must yield (bad records skipped? see Loader.stats())");
    }
    return std::nullopt;
  }
  CheckPaddingLocked(*batch);
  auto padded = std::make_shared<std::vector<uint8_t>>(PaddedMarksLocked(*batch));
  if (!first_yield_) first_yield_ = std::chrono::steady_clock::now();
  std::optional<MixDraw> mix;
  if (MixingOn(mix_)) mix = DrawMix(mix_, seed_, epoch_, yielded_, rank_, image_size_, image_size_);
  if (++yielded_ == limit_) EndLocked();  // nothing more is read: the threads stop now
  return LoaderBatch{std::make_shared<Batch>(std::move(*batch)), std::move(padded), layout_, image_size_, mix};
}

void PassPace::Record(Measure measure) {
  std::lock_guard<std::mutex> lock(mu_);
  last_ = measure;
}

std::optional<PassPace::Measure> PassPace::Last() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_;
}

std::optional<PassPace::Measure> LoaderPass::MeasureLocked() const {
  if (yielded_ < 2 || !startup_ || !first_yield_) return std::nullopt;
  PassPace::Measure measure;
  measure.interval_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - *first_yield_).count() /
      static_cast<double>(yielded_ - 1);
  measure.startup_seconds = std::chrono::duration<double>(*startup_).count();
  return measure;
}

int64_t LoaderPass::LeadBatchesLocked(std::optional<PassPace::Measure> measure) const {
  if (!measure) measure = pace_->Last();
  if (!measure) return 1;
  if (measure->interval_seconds <= 0) return limit_;
  return static_cast<int64_t>(std::min<double>(
      static_cast<double>(limit_), std::ceil(measure->startup_seconds / measure->interval_seconds) + 1));
}

std::optional<LoaderBatch> LoaderPass::Next() {
  std::function<void()> on_near_end;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const std::optional<PassPace::Measure> measure = MeasureLocked();
    if (measure) pace_->Record(*measure);
    if (it_ && on_near_end_ && yielded_ >= limit_ - LeadBatchesLocked(measure)) {
      on_near_end = std::exchange(on_near_end_, nullptr);
      near_end_at_ = yielded_;
    }
  }
  if (on_near_end) on_near_end();  // before the batch is pulled, so the two overlap
  std::optional<LoaderBatch> batch;
  {
    std::lock_guard<std::mutex> lock(mu_);
    batch = NextLocked();
  }
  // The batch is this call's alone: mixed without holding up Save, Stats or Close.
  if (batch && batch->mix && layout_ == OutputLayout::kFloat32Nchw) {
    pipeline::Batch& b = *batch->batch;
    ApplyMixNchw(*batch->mix, reinterpret_cast<float*>(b.data.data()), static_cast<int64_t>(b.size), 3,
                 image_size_, image_size_);
  }
  return batch;
}

bool LoaderPass::started_ahead() {
  std::lock_guard<std::mutex> lock(mu_);
  return started_ahead_;
}

std::optional<int64_t> LoaderPass::near_end_at() {
  std::lock_guard<std::mutex> lock(mu_);
  return near_end_at_;
}

std::pair<size_t, size_t> LoaderPass::PoolCounters() {
  std::lock_guard<std::mutex> lock(mu_);
  if (it_) pool_counters_ = {pool_->allocations(), pool_->reuses()};
  return pool_counters_;
}

std::pair<std::optional<std::string>, int64_t> LoaderPass::Save() {
  std::lock_guard<std::mutex> lock(mu_);
  // Over, or at the epoch's start (where a pass started ahead has taken a batch already).
  if (!it_ || yielded_ == 0) return {std::nullopt, yielded_};
  return {it_->Save().Serialize(), yielded_};
}

std::vector<pipeline::StageSnapshot> LoaderPass::Stats() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!it_) return stats_at_end_;
  return it_->Stats();
}

std::string LoaderPass::Report() {
  const std::vector<pipeline::StageSnapshot> after = Stats();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  return pipeline::StatsTable({}, after, seconds) + "bottleneck: " + pipeline::BottleneckReport({}, after, seconds) +
         "\n";
}

void LoaderPass::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    EndLocked();
  }
  JoinAheadThread();
}

void LoaderPass::EndLocked() {
  if (it_) {
    stats_at_end_ = it_->Stats();
    pool_counters_ = {pool_->allocations(), pool_->reuses()};
  }
  ahead_pending_ = false;
  first_.reset();
  first_error_ = nullptr;
  it_.reset();
}

void LoaderPass::CheckPaddingLocked(const Batch& batch) {
  if (plan_.pad_to == 0 || static_cast<int64_t>(batch.size) == batch_size_) return;
  EndLocked();
  throw Error("last_batch='pad': a batch of " + std::to_string(batch.size) + " samples instead of " +
              std::to_string(batch_size_) + " (records skipped before decoding?), so the padded samples "
              "cannot be marked; use error_policy='fail' or last_batch='drop' or 'partial'");
}

std::vector<uint8_t> LoaderPass::PaddedMarksLocked(const Batch& batch) const {
  std::vector<uint8_t> marks(batch.size, 0);
  for (size_t i = 0; i < batch.stand_ins.size() && i < batch.size; ++i) marks[i] = batch.stand_ins[i] != 0;
  if (plan_.pad_to == 0) return marks;
  const int64_t first = yielded_ * batch_size_;  // position of the batch's first sample
  for (size_t i = 0; i < batch.size; ++i) marks[i] |= first + static_cast<int64_t>(i) >= plan_.samples;
  return marks;
}

PassAhead::PassAhead(pipeline::Pipeline<Batch> batches, pipeline::PipelineOptions options, RankPlan plan,
                     LoaderOptions o)
    : batches_(std::move(batches)), options_(std::move(options)), plan_(plan), loader_options_(std::move(o)) {}

std::shared_ptr<LoaderPass> PassAhead::Begin(int64_t epoch, bool fresh, std::optional<int64_t> next_epoch) {
  // 1. The pass started ahead, when it is the one asked for; else a new pass.
  std::shared_ptr<LoaderPass> pass, dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    latest_ = nullptr;  // the pass handed out before ends without starting one
    if (!fresh && ahead_ && ahead_->epoch() == epoch) {
      pass = std::move(ahead_);
    } else {
      dropped = std::move(ahead_);
    }
  }
  if (dropped) dropped->Close();
  if (!pass) {
    pass = std::make_shared<LoaderPass>(batches_, options_, epoch, plan_, loader_options_, pool_, pace_);
    RegisterPass(pass);
  }
  // 2. Its end coming near starts the next pass.
  std::weak_ptr<PassAhead> self = weak_from_this();
  const LoaderPass* watched = pass.get();
  pass->SetOnNearEnd([self, watched] {
    if (auto passes = self.lock()) passes->NearEnd(watched);
  });
  std::lock_guard<std::mutex> lock(mu_);
  latest_ = watched;
  next_epoch_ = next_epoch;
  return pass;
}

void PassAhead::NearEnd(const LoaderPass* pass) {
  std::shared_ptr<LoaderPass> started;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_ || pass != latest_ || !next_epoch_ || ahead_) return;
    latest_ = nullptr;
    started = std::make_shared<LoaderPass>(batches_, options_, *next_epoch_, plan_, loader_options_,
                                           pool_, pace_);
    ahead_ = started;
  }
  RegisterPass(started);
  started->StartAhead();
}

void PassAhead::EpochSet(std::optional<int64_t> epoch) {
  std::shared_ptr<LoaderPass> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (ahead_ && ahead_->epoch() != epoch) dropped = std::move(ahead_);
    if (next_epoch_) next_epoch_ = epoch;  // set during a pass: the next iteration's epoch
  }
  if (dropped) dropped->Close();
}

void PassAhead::Close() {
  std::shared_ptr<LoaderPass> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    dropped = std::move(ahead_);
  }
  if (dropped) dropped->Close();
}

namespace {

// Every pass made, so that CloseAllLoaders (Python's atexit) stops the live ones'
// threads before the interpreter and the C++ runtime shut down.
std::mutex registry_mu;
std::vector<std::weak_ptr<LoaderPass>> registry;  // guarded by registry_mu

}  // namespace

void RegisterPass(const std::shared_ptr<LoaderPass>& pass) {
  std::lock_guard<std::mutex> lock(registry_mu);
  std::erase_if(registry, [](const std::weak_ptr<LoaderPass>& p) { return p.expired(); });
  registry.push_back(pass);
}

void CloseAllLoaders() {
  std::vector<std::shared_ptr<LoaderPass>> live;
  {
    std::lock_guard<std::mutex> lock(registry_mu);
    for (const auto& p : registry) {
      if (auto pass = p.lock()) live.push_back(std::move(pass));
    }
    registry.clear();
  }
  for (const auto& pass : live) pass->Close();
}

}  // namespace imgpipe::loader
