// prefetch(buffer): a background thread runs the input ahead of the consumer, keeping
// up to `buffer` elements ready (kAutotune: tuned within the RAM budget). Saved state
// holds the buffered elements by value (ElementCodec), as tf.data's does.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "pipeline/autotune.h"
#include "pipeline/dataset.h"
#include "pipeline/element.h"
#include "util/error.h"
#include "util/trace.h"

namespace imgpipe::pipeline {
namespace internal {

template <typename T>
class PrefetchIterator : public Iterator<T> {
 public:
  PrefetchIterator(DatasetPtr<T> input, int buffer_size, const IteratorContext& ctx)
      : ctx_(ctx), input_(MakeInputIterator(input, ctx)), stats_(ctx.RegisterStats("prefetch")) {
    if (buffer_size == kAutotune) {
      capacity_ = 2;
      if (ctx.autotuner && ctx.options->autotune) {
        knob_ = ctx.autotuner->Register(Knob::Kind::kBuffer, "prefetch", 1, 64, 2, stats_);
        ctx.autotuner->SetConsumer(stats_);  // the outermost prefetch registers last
      }
    } else {
      capacity_ = std::max(1, buffer_size);
    }
    stats_->buffer_capacity = capacity_;
  }

  ~PrefetchIterator() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  std::optional<T> Next() override {
    std::unique_lock<std::mutex> lock(mu_);
    if (!thread_.joinable()) {
      thread_ = std::thread([this] {
        trace::SetThreadName("prefetch producer (depth " + std::to_string(ctx_.depth) + ")");
        ProducerLoop();
      });
    }
    auto wait_start = std::chrono::steady_clock::now();
    cv_.wait(lock, [this] { return !buffer_.empty() || ended_; });
    StageStats::AddSince(stats_->output_wait_ns, wait_start);
    if (buffer_.empty()) {
      if (error_) {
        // The consumer owns the error from here: no other thread still refers to
        // it, so it is freed after its handler here, not by the producer.
        std::exception_ptr e = std::move(error_);
        error_ = nullptr;
        std::rethrow_exception(e);
      }
      return std::nullopt;
    }
    T element = std::move(buffer_.front());
    buffer_.pop_front();
    stats_->buffer_fill = static_cast<int64_t>(buffer_.size());
    stats_->elements++;
    stats_->bytes += ElementBytes(element);
    cv_.notify_all();
    return element;
  }

  void Save(IteratorState& state) override {
    // Hold the producer between two of its input calls: the buffer and the input's
    // state then describe the same point.
    std::lock_guard<std::mutex> producing(produce_mu_);
    std::lock_guard<std::mutex> lock(mu_);
    StateEncoder e;
    e.PutInt(static_cast<int64_t>(buffer_.size()));
    for (const T& element : buffer_) ElementCodec<T>::Encode(element, e);
    state.PutBytes(ctx_.Key("buffer"), e.Finish());
    state.PutInt(ctx_.Key("ended"), ended_ && !error_ ? 1 : 0);
    input_->Save(state);
  }

  void Restore(const IteratorState& state) override {
    std::lock_guard<std::mutex> lock(mu_);
    StateDecoder d(state.GetBytes(ctx_.Key("buffer")), ctx_.Key("buffer"));
    int64_t n = d.GetInt();
    for (int64_t i = 0; i < n; ++i) buffer_.push_back(ElementCodec<T>::Decode(d));
    input_ended_ = state.GetInt(ctx_.Key("ended")) != 0;
    ended_ = input_ended_;
    input_->Restore(state);
  }

 private:
  size_t Capacity() const {
    return knob_ ? static_cast<size_t>(knob_->value.load()) : static_cast<size_t>(capacity_);
  }

  void ProducerLoop() {
    while (true) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stopping_ || buffer_.size() < Capacity(); });
        if (stopping_ || input_ended_) return;
      }
      std::unique_lock<std::mutex> producing(produce_mu_);
      std::optional<T> element;
      std::exception_ptr error;
      auto start = std::chrono::steady_clock::now();
      try {
        trace::ScopedTrace span("prefetch: input Next");
        element = input_->Next();
      } catch (...) {
        error = std::current_exception();
      }
      StageStats::AddSince(stats_->input_wait_ns, start);
      std::lock_guard<std::mutex> lock(mu_);
      if (element) {
        if (knob_ && buffer_.empty()) knob_->element_bytes = ElementBytes(*element);
        buffer_.push_back(std::move(*element));
        stats_->buffer_fill = static_cast<int64_t>(buffer_.size());
        stats_->buffer_capacity = static_cast<int64_t>(Capacity());
      } else {
        input_ended_ = true;
        ended_ = true;
        error_ = std::move(error);  // this thread keeps no reference (see Next)
      }
      cv_.notify_all();
    }
  }

  const IteratorContext ctx_;
  std::unique_ptr<Iterator<T>> input_;  // used under produce_mu_
  StageStats* stats_;
  Knob* knob_ = nullptr;
  int capacity_ = 1;

  std::mutex produce_mu_;  // held by the producer while it calls the input
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<T> buffer_;         // guarded by mu_
  bool input_ended_ = false;     // guarded by mu_: the input returned its end (or threw)
  bool ended_ = false;           // guarded by mu_: the producer is done
  bool stopping_ = false;        // guarded by mu_
  std::exception_ptr error_;     // guarded by mu_: delivered after the buffered elements
  std::thread thread_;
};

template <typename T>
class PrefetchDataset : public Dataset<T> {
 public:
  PrefetchDataset(DatasetPtr<T> input, int buffer_size)
      : input_(std::move(input)), buffer_size_(buffer_size) {}
  std::unique_ptr<Iterator<T>> MakeIterator(const IteratorContext& ctx) const override {
    return std::make_unique<PrefetchIterator<T>>(input_, buffer_size_, ctx);
  }
  std::string name() const override { return "prefetch"; }

 private:
  DatasetPtr<T> input_;
  int buffer_size_;
};

}  // namespace internal

// Runs `input` ahead on a background thread, up to `buffer_size` elements.
template <typename T>
DatasetPtr<T> Prefetch(DatasetPtr<T> input, int buffer_size = kAutotune) {
  if (buffer_size == 0 || buffer_size < kAutotune) throw Error("prefetch: buffer must be >= 1 or kAutotune");
  return std::make_shared<internal::PrefetchDataset<T>>(std::move(input), buffer_size);
}

}  // namespace imgpipe::pipeline
