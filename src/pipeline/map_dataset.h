// map(fn, parallelism): applies fn to every element, on up to `parallelism` threads
// (kAutotune: tuned within the CPU budget). In deterministic mode results come out in
// input order; otherwise as they finish. A DataError thrown by fn follows the error
// policy (skip and count, or fail at that element's turn) through a BadElementGuard,
// whose stop rule (bad_element.h) ends a map that finds no good element.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "image/decode_warnings.h"
#include "pipeline/autotune.h"
#include "pipeline/dataset.h"
#include "pipeline/element.h"
#include "util/error.h"
#include "util/random.h"
#include "util/thread_pool.h"
#include "util/trace.h"

namespace imgpipe::pipeline {

// What fn learns about the element it maps.
struct MapContext {
  uint64_t seed = 0;   // for this element: DeriveSeed(pipeline seed, epoch, index)
  uint64_t index = 0;  // position of the element in its epoch's input sequence
  uint64_t epoch = 0;
  BufferPool* pool = nullptr;  // for output pixel buffers
};

template <typename T, typename U>
using MapFunction = std::function<U(T&&, const MapContext&)>;

namespace internal {

// The consumer's thread pulls input elements and hands them to worker threads, keeping
// up to 4 x `active` queued or running and up to 8 x `active` not yet delivered; it
// delivers in input order (deterministic) or as finished. Save happens between Next
// calls, so the state is: the input's state, plus the inputs of elements pulled but not
// delivered (encoded with ElementCodec<T>), which Restore maps again with the same
// per-element seeds.
template <typename T, typename U>
class MapIterator : public Iterator<U> {
 public:
  // `in_order`: deliver in input order even when the pipeline is not deterministic.
  MapIterator(DatasetPtr<T> input, MapFunction<T, U> fn, int parallelism, std::string name,
              const IteratorContext& ctx, bool in_order = false)
      : ctx_(ctx),
        in_order_(in_order || ctx.options->deterministic),
        fn_(std::move(fn)),
        input_(MakeInputIterator(input, ctx)),
        stats_(ctx.RegisterStats(name)),
        seed_(ctx.options->seed),
        bad_(ctx.MakeBadElementGuard(stats_)) {
    const int budget = ctx.options->cpu_budget > 0 ? ctx.options->cpu_budget : AvailableCpus();
    if (parallelism == kAutotune) {
      max_threads_ = budget;
      if (ctx.autotuner && ctx.options->autotune) {
        knob_ = ctx.autotuner->Register(Knob::Kind::kParallelism, name, 1, budget, budget, stats_);
      }
    } else {
      max_threads_ = std::max(1, parallelism);
    }
    stats_->parallelism = max_threads_;
  }

  ~MapIterator() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (auto& w : workers_) w.join();
  }

  std::optional<U> Next() override {
    if (max_threads_ == 1) return NextSequential();
    if (workers_.empty()) {
      for (int i = 0; i < max_threads_; ++i) {
        workers_.emplace_back([this, i] {
          trace::SetThreadName(stats_->name + " worker " + std::to_string(i));
          WorkerLoop(i);
        });
      }
    }
    auto wait_start = std::chrono::steady_clock::now();
    while (true) {
      Fill();
      std::unique_lock<std::mutex> lock(mu_);
      // 1. A finished element to deliver? In order when deterministic.
      auto it = results_.end();
      if (in_order_) {
        it = results_.find(next_deliver_);
      } else {
        for (auto r = results_.begin(); r != results_.end(); ++r) {
          if (r->second.done) {
            it = r;
            break;
          }
        }
      }
      if (it != results_.end() && it->second.done) {
        Result result = std::move(it->second);
        uint64_t seq = it->first;
        results_.erase(it);
        pending_inputs_.erase(seq);
        if (seq == next_deliver_) ++next_deliver_;
        stats_->buffer_fill = static_cast<int64_t>(results_.size());
        lock.unlock();
        if (result.error) std::rethrow_exception(result.error);
        if (!result.value) continue;  // a bad element, skipped and counted
        StageStats::AddSince(stats_->output_wait_ns, wait_start);
        stats_->elements++;
        stats_->bytes += ElementBytes(*result.value);
        return std::move(result.value);
      }
      // 2. Nothing pulled and nothing left: the end.
      if (input_done_ && replay_.empty() && results_.empty()) {
        StageStats::AddSince(stats_->output_wait_ns, wait_start);
        return std::nullopt;
      }
      // 3. Wait for a worker to finish one.
      done_cv_.wait(lock);
    }
  }

  void Save(IteratorState& state) override {
    std::lock_guard<std::mutex> lock(mu_);
    StateEncoder pending;
    pending.PutInt(static_cast<int64_t>(pending_inputs_.size()));
    for (auto& [seq, encoded] : pending_inputs_) {
      pending.PutInt(static_cast<int64_t>(seq));
      pending.PutBytes(encoded);
    }
    state.PutInt(ctx_.Key("next_index"), static_cast<int64_t>(next_index_));
    state.PutInt(ctx_.Key("input_done"), input_done_ ? 1 : 0);
    state.PutBytes(ctx_.Key("pending"), pending.Finish());
    input_->Save(state);
  }

  void Restore(const IteratorState& state) override {
    std::lock_guard<std::mutex> lock(mu_);
    next_index_ = static_cast<uint64_t>(state.GetInt(ctx_.Key("next_index")));
    input_done_ = state.GetInt(ctx_.Key("input_done")) != 0;
    StateDecoder pending(state.GetBytes(ctx_.Key("pending")), ctx_.Key("pending"));
    int64_t n = pending.GetInt();
    for (int64_t i = 0; i < n; ++i) {
      uint64_t seq = static_cast<uint64_t>(pending.GetInt());
      std::string encoded = pending.GetBytes();
      replay_.push_back(seq);
      pending_inputs_[seq] = std::move(encoded);
    }
    next_deliver_ = replay_.empty() ? next_index_ : replay_.front();
    input_->Restore(state);
  }

 private:
  struct Result {
    bool done = false;
    std::optional<U> value;  // empty without error: a bad element, skipped
    std::exception_ptr error;
  };

  struct Task {
    uint64_t seq;
    std::optional<T> element;  // empty: decode from pending_inputs_[seq] (replay)
  };

  int Active() const {
    return knob_ ? static_cast<int>(std::min<int64_t>(knob_->value.load(), max_threads_))
                 : max_threads_;
  }

  // Pulls input elements (replayed ones first) and queues them while under the limits.
  void Fill() {
    while (true) {
      std::unique_lock<std::mutex> lock(mu_);
      const size_t active = static_cast<size_t>(Active());
      // Four tasks per worker in flight, so that workers find work queued even while
      // this thread is off the CPU for a scheduler time slice (a few ms: about as long
      // as 2-4 images take to decode); at most 8 per worker unconsumed.
      if (running_ >= 4 * active || results_.size() >= 8 * active) return;
      if (!replay_.empty()) {
        uint64_t seq = replay_.front();
        replay_.pop_front();
        Submit(lock, Task{seq, std::nullopt});
        continue;
      }
      if (input_done_) return;
      lock.unlock();
      auto wait_start = std::chrono::steady_clock::now();
      std::optional<T> element;
      std::exception_ptr error;
      try {
        element = input_->Next();
      } catch (...) {
        error = std::current_exception();
      }
      StageStats::AddSince(stats_->input_wait_ns, wait_start);
      lock.lock();
      if (error) {
        // The input's error takes the next element's place, in order.
        results_[next_index_++] = Result{true, std::nullopt, std::move(error)};
        input_done_ = true;
        return;
      }
      if (!element) {
        input_done_ = true;
        return;
      }
      uint64_t seq = next_index_++;
      StateEncoder e;
      ElementCodec<T>::Encode(*element, e);
      pending_inputs_[seq] = e.Finish();
      Submit(lock, Task{seq, std::move(element)});
    }
  }

  void Submit(std::unique_lock<std::mutex>&, Task task) {
    results_[task.seq];  // reserve the slot, not done
    ++running_;
    tasks_.push_back(std::move(task));
    // One waiting worker suffices, unless autotune parks some: a parked one woken alone
    // would go back to sleep with the task still queued.
    if (Active() == max_threads_) {
      cv_.notify_one();
    } else {
      cv_.notify_all();
    }
  }

  // Worker `index` takes tasks while index < Active() (autotune parks the rest).
  void WorkerLoop(int index) {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      cv_.wait_for(lock, std::chrono::milliseconds(100),
                   [&] { return stopping_ || (!tasks_.empty() && index < Active()); });
      if (!stopping_ && (tasks_.empty() || index >= Active())) continue;
      if (stopping_) return;
      Task task = std::move(tasks_.front());
      tasks_.pop_front();
      std::string replayed;
      if (!task.element) replayed = pending_inputs_[task.seq];
      lock.unlock();
      Result result{true, std::nullopt, nullptr};
      auto start = std::chrono::steady_clock::now();
      try {
        if (!task.element) {
          StateDecoder d(replayed, ctx_.Key("pending"));
          task.element = ElementCodec<T>::Decode(d);
        }
        result.value = Apply(std::move(*task.element), task.seq);
      } catch (...) {
        result.error = std::current_exception();
      }
      StageStats::AddSince(stats_->busy_ns, start);
      lock.lock();
      --running_;
      results_[task.seq] = std::move(result);
      done_cv_.notify_all();
    }
  }

  // One thread: pull, map, return.
  std::optional<U> NextSequential() {
    while (true) {
      std::optional<T> element;
      uint64_t seq;
      if (!replay_.empty()) {
        seq = replay_.front();
        replay_.pop_front();
        std::string encoded = std::move(pending_inputs_[seq]);
        pending_inputs_.erase(seq);
        StateDecoder decoder(encoded, ctx_.Key("pending"));
        element = ElementCodec<T>::Decode(decoder);
      } else {
        auto wait_start = std::chrono::steady_clock::now();
        element = input_->Next();
        StageStats::AddSince(stats_->input_wait_ns, wait_start);
        if (!element) return std::nullopt;
        seq = next_index_++;
      }
      auto start = std::chrono::steady_clock::now();
      std::optional<U> out = Apply(std::move(*element), seq);
      StageStats::AddSince(stats_->busy_ns, start);
      if (out) {
        stats_->elements++;
        stats_->bytes += ElementBytes(*out);
        return out;
      }
    }
  }

  // Applies fn; nullopt for a bad element skipped under kSkip.
  std::optional<U> Apply(T&& element, uint64_t seq) {
    trace::ScopedTrace span(stats_->name.c_str());
    MapContext mc{DeriveSeed(seed_, ctx_.epoch, seq), seq, ctx_.epoch, ctx_.pool.get()};
    const uint64_t warnings_before = ThreadDecodeWarningCount();
    try {
      U out = fn_(std::move(element), mc);
      bad_.Good();
      stats_->warnings += ThreadDecodeWarningCount() - warnings_before;
      return out;
    } catch (const DataError& e) {
      bad_.SkipOrRethrow(e);
      return std::nullopt;
    }
  }

  const IteratorContext ctx_;
  const bool in_order_;
  const MapFunction<T, U> fn_;
  std::unique_ptr<Iterator<T>> input_;  // used by the consumer's thread only
  StageStats* stats_;
  const uint64_t seed_;
  BadElementGuard bad_;  // shared by the workers
  Knob* knob_ = nullptr;
  int max_threads_ = 1;

  std::mutex mu_;
  std::condition_variable cv_;       // workers: a task was queued, or stopping
  std::condition_variable done_cv_;  // consumer: a task finished
  uint64_t next_index_ = 0;    // guarded by mu_: sequence number of the next input pulled
  uint64_t next_deliver_ = 0;  // guarded by mu_: next sequence number in input order
  std::map<uint64_t, std::string> pending_inputs_;  // guarded by mu_: pulled, undelivered
  std::map<uint64_t, Result> results_;            // guarded by mu_: running or finished
  std::deque<Task> tasks_;                        // guarded by mu_: queued for workers
  std::deque<uint64_t> replay_;                   // guarded by mu_: restored, to map again
  size_t running_ = 0;                            // guarded by mu_
  bool input_done_ = false;                       // guarded by mu_
  bool stopping_ = false;                         // guarded by mu_
  std::vector<std::thread> workers_;
};

template <typename T, typename U>
class MapDataset : public Dataset<U> {
 public:
  MapDataset(DatasetPtr<T> input, MapFunction<T, U> fn, int parallelism, std::string name,
             bool in_order = false)
      : input_(std::move(input)),
        fn_(std::move(fn)),
        parallelism_(parallelism),
        name_(std::move(name)),
        in_order_(in_order) {}

  std::unique_ptr<Iterator<U>> MakeIterator(const IteratorContext& ctx) const override {
    return std::make_unique<MapIterator<T, U>>(input_, fn_, parallelism_, name_, ctx, in_order_);
  }
  std::string name() const override { return name_; }

 private:
  DatasetPtr<T> input_;
  MapFunction<T, U> fn_;
  int parallelism_;
  std::string name_;
  bool in_order_;
};

}  // namespace internal

// Applies `fn` to every element of `input` on `parallelism` threads (kAutotune: tuned).
template <typename T, typename U>
DatasetPtr<U> Map(DatasetPtr<T> input, MapFunction<T, U> fn, int parallelism = 1,
                  std::string name = "map") {
  if (parallelism == 0 || parallelism < kAutotune) throw Error("map: parallelism must be >= 1 or kAutotune");
  return std::make_shared<internal::MapDataset<T, U>>(std::move(input), std::move(fn), parallelism,
                                                      std::move(name));
}

}  // namespace imgpipe::pipeline
