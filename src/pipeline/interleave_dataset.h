// Interleave, as tf.data's interleave: maps each input element to a dataset and
// yields the elements of `cycle_length` of those at a time, `block_length` from each
// in turn; a finished one is replaced by the dataset of the next input element.
// With parallelism, worker threads read ahead from the open datasets into small
// per-slot queues, so that several files are read at once.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "pipeline/dataset.h"
#include "pipeline/element.h"
#include "util/error.h"
#include "util/thread_pool.h"

namespace imgpipe::pipeline {

template <typename T, typename U>
class InterleaveDataset : public Dataset<U> {
 public:
  using MapFn = std::function<DatasetPtr<U>(const T&)>;

  // Elements read ahead per open slot when worker threads run.
  static constexpr size_t kSlotBufferSize = 8;

  InterleaveDataset(DatasetPtr<T> input, MapFn fn, int cycle_length, int block_length,
                    int parallelism)
      : input_(std::move(input)),
        fn_(std::move(fn)),
        cycle_length_(cycle_length),
        block_length_(block_length),
        parallelism_(parallelism) {}

  std::unique_ptr<Iterator<U>> MakeIterator(const IteratorContext& ctx) const override {
    return std::make_unique<InterleaveIterator>(*this, ctx);
  }
  std::string name() const override { return "interleave"; }

 private:
  class InterleaveIterator : public Iterator<U> {
   public:
    InterleaveIterator(const InterleaveDataset& dataset, const IteratorContext& ctx)
        : ctx_(ctx),
          fn_(dataset.fn_),
          cycle_length_(static_cast<size_t>(dataset.cycle_length_)),
          block_length_(static_cast<size_t>(dataset.block_length_)),
          input_(MakeInputIterator(dataset.input_, ctx)),
          stats_(ctx.RegisterStats(dataset.name())),
          slots_(cycle_length_) {
      // 1. Worker threads: the parallelism asked for (kAutotune: one per slot within
      // the CPU budget), at most one per slot; none for parallelism 1.
      int threads = dataset.parallelism_;
      if (threads == kAutotune) {
        threads = ctx.options->cpu_budget > 0 ? ctx.options->cpu_budget : AvailableCpus();
      }
      threads = std::min(threads, static_cast<int>(cycle_length_));
      stats_->parallelism = std::max(threads, 1);
      if (threads > 1) {
        stats_->buffer_capacity = static_cast<int64_t>(cycle_length_ * kSlotBufferSize);
        for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
      }
    }

    ~InterleaveIterator() override {
      {
        std::lock_guard<std::mutex> lock(mu_);
        stop_ = true;
      }
      work_cv_.notify_all();
      for (std::thread& t : workers_) t.join();
    }

    std::optional<U> Next() override {
      std::optional<U> element =
          (workers_.empty() || ctx_.options->deterministic) ? NextInCycle() : NextReady();
      if (element) {
        stats_->elements += 1;
        stats_->bytes += ElementBytes(*element);
      }
      return element;
    }

    void Save(IteratorState& state) override {
      // 1. Pause the workers: after this, no slot is being read.
      std::unique_lock<std::mutex> lock(mu_);
      paused_ = true;
      ready_cv_.wait(lock, [&] { return !AnyBusy(); });
      // 2. Each slot: the element that made it, whether it ended, and the elements read
      // ahead but not yet given; then its inner iterator's own state.
      StateEncoder slots;
      for (size_t i = 0; i < cycle_length_; ++i) {
        Slot& s = slots_[i];
        slots.PutInt(s.inner ? 1 : 0);
        if (!s.inner) continue;
        ElementCodec<T>::Encode(*s.element, slots);
        slots.PutInt(s.done ? 1 : 0);
        slots.PutInt(static_cast<int64_t>(s.queue.size()));
        for (const U& u : s.queue) ElementCodec<U>::Encode(u, slots);
        s.inner->Save(state);
      }
      state.PutBytes(ctx_.Key("slots"), slots.Finish());
      state.PutInt(ctx_.Key("cycle_index"), static_cast<int64_t>(cycle_index_));
      state.PutInt(ctx_.Key("block_index"), static_cast<int64_t>(block_index_));
      state.PutInt(ctx_.Key("end_of_input"), end_of_input_ ? 1 : 0);
      state.PutInt(ctx_.Key("started"), started_ ? 1 : 0);
      input_->Save(state);
      // 3. Resume.
      paused_ = false;
      lock.unlock();
      work_cv_.notify_all();
    }

    void Restore(const IteratorState& state) override {
      cycle_index_ = CheckedIndex(state, "cycle_index", cycle_length_);
      block_index_ = CheckedIndex(state, "block_index", block_length_);
      end_of_input_ = state.GetInt(ctx_.Key("end_of_input")) != 0;
      started_ = state.GetInt(ctx_.Key("started")) != 0;
      StateDecoder slots(state.GetBytes(ctx_.Key("slots")), ctx_.Key("slots"));
      for (size_t i = 0; i < cycle_length_; ++i) {
        if (slots.GetInt() == 0) continue;
        // 1. Remake the slot's iterator from its element and restore it.
        T element = ElementCodec<T>::Decode(slots);
        DatasetPtr<U> dataset = fn_(element);
        std::unique_ptr<Iterator<U>> inner = dataset->MakeIterator(SlotContext(i));
        bool done = slots.GetInt() != 0;
        int64_t queued = slots.GetInt();
        std::deque<U> queue;
        for (int64_t q = 0; q < queued; ++q) queue.push_back(ElementCodec<U>::Decode(slots));
        inner->Restore(state);
        // 2. Install it.
        std::lock_guard<std::mutex> lock(mu_);
        Slot& s = slots_[i];
        s.element = std::move(element);
        s.dataset = std::move(dataset);
        s.inner = std::move(inner);
        s.done = done;
        stats_->buffer_fill += static_cast<int64_t>(queue.size());
        s.queue = std::move(queue);
        ++num_open_;
      }
      if (!slots.done()) throw Error("iterator state " + ctx_.Key("slots") + " has trailing bytes");
      input_->Restore(state);
      {
        std::lock_guard<std::mutex> lock(mu_);
        priority_ = cycle_index_;
      }
      work_cv_.notify_all();
    }

   private:
    // One position of the cycle.
    struct Slot {
      std::optional<T> element;            // the input element that made `inner`
      DatasetPtr<U> dataset;               // fn(element), kept alive with its iterator
      std::unique_ptr<Iterator<U>> inner;  // null: the slot is empty
      // With workers, guarded by mu_ (`inner` itself is used by the one thread that set
      // `busy`, or by the consumer while no worker is busy with it):
      std::deque<U> queue;       // elements read ahead, not yet given
      bool done = false;         // inner reached its end (after `queue`)
      bool busy = false;         // a worker is inside inner->Next()
      std::exception_ptr error;  // what inner->Next() threw (after `queue`)
    };

    // The context of slot i's iterators: their stats and state keys are the slot's.
    IteratorContext SlotContext(size_t i) const { return ctx_.Input("slot" + std::to_string(i)); }

    size_t CheckedIndex(const IteratorState& state, const char* key, size_t bound) const {
      int64_t v = state.GetInt(ctx_.Key(key));
      if (v < 0 || static_cast<uint64_t>(v) >= bound) {
        throw Error("iterator state " + ctx_.Key(key) + " = " + std::to_string(v) +
                    " is outside [0, " + std::to_string(bound) + ")");
      }
      return static_cast<size_t>(v);
    }

    // Deterministic order (tf.data's): the slot at cycle_index_ gives block_length_
    // elements, then the next slot; an empty slot takes the next input element; a
    // finished one is emptied and the cycle moves on.
    std::optional<U> NextInCycle() {
      // 1. With workers, open every slot at once so that all of them read ahead (the
      // same assignment of input elements to slots as opening them one by one).
      if (!started_) {
        if (!workers_.empty()) {
          for (size_t i = 0; i < cycle_length_ && !end_of_input_; ++i) {
            if (!slots_[i].inner) OpenSlot(i);
          }
        }
        started_ = true;
      }
      // 2. The cycle.
      while (!end_of_input_ || num_open_ > 0) {
        if (slots_[cycle_index_].inner) {
          std::optional<U> element = NextFromSlot(cycle_index_);
          if (element) {
            if (++block_index_ == block_length_) AdvanceCycle();
            return element;
          }
          CloseSlot(cycle_index_);
          AdvanceCycle();
        } else if (!end_of_input_) {
          OpenSlot(cycle_index_);
        } else {
          AdvanceCycle();
        }
      }
      return std::nullopt;
    }

    // Non-deterministic order (workers only): the first slot, from the cycle position
    // on, that has an element ready; finished slots are replaced right away.
    std::optional<U> NextReady() {
      while (true) {
        // 1. Empty finished slots and fill empty ones from the input.
        for (size_t i = 0; i < cycle_length_; ++i) {
          bool finished;
          {
            std::lock_guard<std::mutex> lock(mu_);
            finished = slots_[i].inner && slots_[i].done && slots_[i].queue.empty();
          }
          if (finished) CloseSlot(i);
          if (!slots_[i].inner && !end_of_input_) OpenSlot(i);
        }
        if (num_open_ == 0) return std::nullopt;
        // 2. A ready element or error, preferring the current slot.
        auto start = std::chrono::steady_clock::now();
        std::unique_lock<std::mutex> lock(mu_);
        while (true) {
          bool finished = false;
          for (size_t k = 0; k < cycle_length_; ++k) {
            size_t i = (cycle_index_ + k) % cycle_length_;
            Slot& s = slots_[i];
            if (!s.inner) continue;
            if (!s.queue.empty() || s.error) {
              StageStats::AddSince(stats_->input_wait_ns, start);
              std::optional<U> element = TakeLocked(s);  // throws the slot's error
              if (i != cycle_index_) {
                cycle_index_ = i;
                block_index_ = 0;
              }
              if (++block_index_ == block_length_) AdvanceCycleLocked();
              return element;
            }
            finished = finished || s.done;
          }
          if (finished) break;  // back to 1 to replace it
          ready_cv_.wait(lock);
        }
      }
    }

    // The next element of slot i's iterator, nullopt at its end; waits for a worker
    // when there are workers.
    std::optional<U> NextFromSlot(size_t i) {
      Slot& s = slots_[i];
      auto start = std::chrono::steady_clock::now();
      if (workers_.empty()) {
        std::optional<U> element = s.inner->Next();
        StageStats::AddSince(stats_->input_wait_ns, start);
        return element;
      }
      std::unique_lock<std::mutex> lock(mu_);
      ready_cv_.wait(lock, [&] { return !s.queue.empty() || s.error || s.done; });
      StageStats::AddSince(stats_->input_wait_ns, start);
      return TakeLocked(s);
    }

    // With mu_ held: the slot's first queued element; else throws its error (once:
    // the worker then goes on reading it); else nullopt (its end).
    std::optional<U> TakeLocked(Slot& s) {
      if (!s.queue.empty()) {
        std::optional<U> element(std::move(s.queue.front()));
        s.queue.pop_front();
        stats_->buffer_fill -= 1;
        // Wake the readers once the slot is half empty, not at every element: they then
        // read several in a row instead of one per wake-up (a context switch each).
        if (s.queue.size() <= kSlotBufferSize / 2) work_cv_.notify_all();
        return element;
      }
      if (s.error) {
        std::exception_ptr error = std::exchange(s.error, nullptr);
        work_cv_.notify_all();
        std::rethrow_exception(error);
      }
      return std::nullopt;
    }

    // Makes slot i's iterator from the next input element (sets end_of_input_ at the
    // end of the input). Consumer thread only.
    void OpenSlot(size_t i) {
      auto start = std::chrono::steady_clock::now();
      std::optional<T> element = input_->Next();
      StageStats::AddSince(stats_->input_wait_ns, start);
      if (!element) {
        end_of_input_ = true;
        return;
      }
      DatasetPtr<U> dataset = fn_(*element);
      if (!dataset) throw Error("interleave: the map function returned no dataset");
      std::unique_ptr<Iterator<U>> inner = dataset->MakeIterator(SlotContext(i));
      {
        std::lock_guard<std::mutex> lock(mu_);
        Slot& s = slots_[i];
        s.element = std::move(element);
        s.dataset = std::move(dataset);
        s.inner = std::move(inner);
        s.done = false;
        ++num_open_;
      }
      work_cv_.notify_all();
    }

    // Empties slot i (finished: no worker is using it). Consumer thread only.
    void CloseSlot(size_t i) {
      std::unique_ptr<Iterator<U>> inner;
      DatasetPtr<U> dataset;
      {
        std::lock_guard<std::mutex> lock(mu_);
        Slot& s = slots_[i];
        inner = std::move(s.inner);
        dataset = std::move(s.dataset);
        s.element.reset();
        s.done = false;
        --num_open_;
      }
      // `inner` and `dataset` are destroyed here, outside the lock.
    }

    void AdvanceCycle() {
      std::lock_guard<std::mutex> lock(mu_);
      AdvanceCycleLocked();
    }
    void AdvanceCycleLocked() {
      block_index_ = 0;
      cycle_index_ = (cycle_index_ + 1) % cycle_length_;
      priority_ = cycle_index_;
    }

    // With mu_ held: the slot a worker should read next (the first, from the cycle
    // position on, that is open, idle, not finished and has room), or -1.
    int PickSlotLocked() const {
      for (size_t k = 0; k < cycle_length_; ++k) {
        size_t i = (priority_ + k) % cycle_length_;
        const Slot& s = slots_[i];
        if (s.inner && !s.busy && !s.done && !s.error && s.queue.size() < kSlotBufferSize) {
          return static_cast<int>(i);
        }
      }
      return -1;
    }

    bool AnyBusy() const {
      for (const Slot& s : slots_) {
        if (s.busy) return true;
      }
      return false;
    }

    void WorkerLoop() {
      std::unique_lock<std::mutex> lock(mu_);
      while (true) {
        int picked = -1;
        work_cv_.wait(lock, [&] {
          if (stop_) return true;
          if (paused_) return false;
          picked = PickSlotLocked();
          return picked >= 0;
        });
        if (stop_) return;
        Slot& s = slots_[static_cast<size_t>(picked)];
        s.busy = true;
        Iterator<U>* inner = s.inner.get();
        lock.unlock();
        std::optional<U> element;
        std::exception_ptr error;
        try {
          element = inner->Next();
        } catch (...) {
          error = std::current_exception();
        }
        lock.lock();
        s.busy = false;
        if (error) {
          s.error = std::move(error);  // the consumer's alone from here
        } else if (element) {
          s.queue.push_back(std::move(*element));
          stats_->buffer_fill += 1;
        } else {
          s.done = true;
        }
        ready_cv_.notify_all();
      }
    }

    const IteratorContext ctx_;
    const MapFn fn_;
    const size_t cycle_length_;
    const size_t block_length_;
    std::unique_ptr<Iterator<T>> input_;
    StageStats* stats_;

    // Consumer-thread state (cycle_index_ and block_index_ are also written under mu_
    // so that workers can read priority_ consistently).
    std::vector<Slot> slots_;    // cycle_length_ of them; see Slot for the guarded parts
    size_t cycle_index_ = 0;     // the slot giving elements now
    size_t block_index_ = 0;     // elements it gave in the current block
    size_t num_open_ = 0;        // slots with an iterator
    bool end_of_input_ = false;  // the input has no more elements
    bool started_ = false;       // the first Next has run

    std::mutex mu_;
    std::condition_variable work_cv_;   // workers wait for a slot to read
    std::condition_variable ready_cv_;  // the consumer waits for elements or idle workers
    size_t priority_ = 0;               // guarded by mu_: where workers look first
    bool paused_ = false;               // guarded by mu_: Save in progress
    bool stop_ = false;                 // guarded by mu_: the iterator is being destroyed
    std::vector<std::thread> workers_;
  };

  const DatasetPtr<T> input_;
  const MapFn fn_;
  const int cycle_length_;
  const int block_length_;
  const int parallelism_;
};

// Interleave of the datasets fn(e) for the elements e of `input`, `cycle_length` open
// at a time, `block_length` elements from each in turn. `parallelism` > 1 (or
// kAutotune: one thread per slot within the CPU budget) reads ahead on that many
// threads; in deterministic mode the order is the same as with parallelism 1,
// otherwise any slot with an element ready may give it. T and U need ElementCodec
// (state holds the elements that made the open slots and the elements read ahead).
// Throws Error on a missing input or function, or on a non-positive length.
template <typename T, typename U>
DatasetPtr<U> Interleave(DatasetPtr<T> input, std::function<DatasetPtr<U>(const T&)> fn,
                         int cycle_length, int block_length = 1, int parallelism = 1) {
  if (!input) throw Error("interleave: no input dataset");
  if (!fn) throw Error("interleave: no map function");
  if (cycle_length < 1) {
    throw Error("interleave: cycle_length must be at least 1 (got " + std::to_string(cycle_length) +
                ")");
  }
  if (block_length < 1) {
    throw Error("interleave: block_length must be at least 1 (got " + std::to_string(block_length) +
                ")");
  }
  if (parallelism < 1 && parallelism != kAutotune) {
    throw Error("interleave: parallelism must be at least 1 or kAutotune (got " +
                std::to_string(parallelism) + ")");
  }
  return std::make_shared<InterleaveDataset<T, U>>(std::move(input), std::move(fn), cycle_length,
                                                   block_length, parallelism);
}

}  // namespace imgpipe::pipeline
