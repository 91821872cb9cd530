// repeat(count) and take(n), as tf.data's.
//
// Repeat makes a new input iterator for each pass, with ctx.epoch = the pass number
// (0, 1, ...), so random stages below it reshuffle per epoch. An input that yields
// nothing in a whole pass ends the repeat (no endless loop); the size of each pass sets
// the limit on bad elements in a row of the stages above (bad_element.h). State: the pass, whether
// it has yielded, whether the repeat ended, and the input's state.
// Take yields the first n elements of its input and then stops, without reading the
// input further. State: the count taken.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "pipeline/dataset.h"
#include "pipeline/element.h"
#include "util/error.h"

namespace imgpipe::pipeline {
namespace internal {

template <typename T>
class RepeatIterator : public Iterator<T> {
 public:
  RepeatIterator(DatasetPtr<T> input, int64_t count, const IteratorContext& ctx)
      : input_dataset_(std::move(input)), count_(count), ctx_(ctx),
        stats_(ctx.RegisterStats("repeat")) {
    StartPass();
  }

  std::optional<T> Next() override {
    while (!ended_) {
      auto start = std::chrono::steady_clock::now();
      std::optional<T> v = input_->Next();
      StageStats::AddSince(stats_->input_wait_ns, start);
      if (v) {
        yielded_in_pass_ = true;
        ++elements_in_pass_;
        stats_->elements++;
        stats_->bytes += ElementBytes(*v);
        return v;
      }
      // The pass ended: the next one, unless this one was empty or it was the last.
      bool empty_pass = !yielded_in_pass_;
      ctx_.bad_elements->PassEnded(elements_in_pass_);
      ++epoch_;
      input_.reset();
      if (empty_pass) {
        ended_ = true;
      } else {
        StartPass();
      }
    }
    return std::nullopt;
  }

  void Save(IteratorState& state) override {
    state.PutInt(ctx_.Key("epoch"), static_cast<int64_t>(epoch_));
    state.PutInt(ctx_.Key("yielded_in_pass"), yielded_in_pass_ ? 1 : 0);
    state.PutInt(ctx_.Key("ended"), ended_ ? 1 : 0);
    if (!ended_) input_->Save(state);
  }

  void Restore(const IteratorState& state) override {
    int64_t epoch = state.GetInt(ctx_.Key("epoch"));
    if (epoch < 0) throw Error("iterator state " + ctx_.Key("epoch") + ": negative epoch");
    epoch_ = static_cast<uint64_t>(epoch);
    bool yielded_in_pass = state.GetInt(ctx_.Key("yielded_in_pass")) != 0;
    ended_ = state.GetInt(ctx_.Key("ended")) != 0;
    input_.reset();
    if (!ended_) {
      StartPass();
      if (ended_) return;
      input_->Restore(state);
    }
    yielded_in_pass_ = yielded_in_pass;
  }

 private:
  // Makes the input iterator for pass epoch_, or ends when the count is reached.
  void StartPass() {
    yielded_in_pass_ = false;
    elements_in_pass_ = 0;
    if (count_ >= 0 && epoch_ >= static_cast<uint64_t>(count_)) {
      ended_ = true;
      return;
    }
    IteratorContext pass_ctx = ctx_;
    pass_ctx.epoch = epoch_;
    input_ = MakeInputIterator(input_dataset_, pass_ctx);
  }

  DatasetPtr<T> input_dataset_;
  int64_t count_;
  IteratorContext ctx_;
  StageStats* stats_;
  std::unique_ptr<Iterator<T>> input_;
  uint64_t epoch_ = 0;
  bool yielded_in_pass_ = false;
  // Elements of this pass (since the iterator was made or restored, not saved): each
  // finished pass's count goes to the stop rule of bad_element.h.
  uint64_t elements_in_pass_ = 0;
  bool ended_ = false;
};

template <typename T>
class RepeatDataset : public Dataset<T> {
 public:
  RepeatDataset(DatasetPtr<T> input, int64_t count) : input_(std::move(input)), count_(count) {}
  std::unique_ptr<Iterator<T>> MakeIterator(const IteratorContext& ctx) const override {
    return std::make_unique<RepeatIterator<T>>(input_, count_, ctx);
  }
  std::string name() const override { return "repeat"; }

 private:
  DatasetPtr<T> input_;
  int64_t count_;
};

template <typename T>
class TakeIterator : public Iterator<T> {
 public:
  TakeIterator(const DatasetPtr<T>& input, int64_t n, const IteratorContext& ctx)
      : ctx_(ctx), stats_(ctx.RegisterStats("take")), input_(MakeInputIterator(input, ctx)), n_(n) {}

  std::optional<T> Next() override {
    if (n_ >= 0 && taken_ >= n_) return std::nullopt;
    auto start = std::chrono::steady_clock::now();
    std::optional<T> v = input_->Next();
    StageStats::AddSince(stats_->input_wait_ns, start);
    if (v) {
      ++taken_;
      stats_->elements++;
      stats_->bytes += ElementBytes(*v);
    }
    return v;
  }

  void Save(IteratorState& state) override {
    state.PutInt(ctx_.Key("taken"), taken_);
    input_->Save(state);
  }

  void Restore(const IteratorState& state) override {
    taken_ = state.GetInt(ctx_.Key("taken"));
    if (taken_ < 0) throw Error("iterator state " + ctx_.Key("taken") + ": negative count");
    input_->Restore(state);
  }

 private:
  IteratorContext ctx_;
  StageStats* stats_;
  std::unique_ptr<Iterator<T>> input_;
  int64_t n_;
  int64_t taken_ = 0;
};

template <typename T>
class TakeDataset : public Dataset<T> {
 public:
  TakeDataset(DatasetPtr<T> input, int64_t n) : input_(std::move(input)), n_(n) {}
  std::unique_ptr<Iterator<T>> MakeIterator(const IteratorContext& ctx) const override {
    return std::make_unique<TakeIterator<T>>(input_, n_, ctx);
  }
  std::string name() const override { return "take"; }

 private:
  DatasetPtr<T> input_;
  int64_t n_;
};

}  // namespace internal

// `input` `count` times over (-1: forever); see the file comment.
template <typename T>
DatasetPtr<T> Repeat(DatasetPtr<T> input, int64_t count = -1) {
  return std::make_shared<internal::RepeatDataset<T>>(std::move(input), count);
}

// The first `n` elements of `input` (n < 0: all of them).
template <typename T>
DatasetPtr<T> Take(DatasetPtr<T> input, int64_t n) {
  return std::make_shared<internal::TakeDataset<T>>(std::move(input), n);
}

}  // namespace imgpipe::pipeline
