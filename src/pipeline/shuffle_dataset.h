// shuffle(buffer_size): tf.data's shuffle. The iterator fills a buffer of
// `buffer_size` elements from its input, then repeatedly outputs a uniformly random
// buffered element and puts the next input element in its place; at the input's end
// it drains the buffer in random order. The epoch's stream is
// SplitMix64(DeriveSeed(seed, reshuffle_each_epoch ? ctx.epoch : 0)), seed defaulting to
// the pipeline's. Saved state: the generator, the buffer (ElementCodec: records by
// reference, so a shuffle of encoded records saves little), whether the input ended,
// and the input's state.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "pipeline/dataset.h"
#include "pipeline/element.h"
#include "util/error.h"
#include "util/random.h"

namespace imgpipe::pipeline {
namespace internal {

template <typename T>
class ShuffleIterator : public Iterator<T> {
 public:
  ShuffleIterator(const DatasetPtr<T>& input, size_t buffer_size, std::optional<uint64_t> seed,
                  bool reshuffle_each_epoch, const IteratorContext& ctx)
      : ctx_(ctx),
        stats_(ctx.RegisterStats("shuffle")),
        input_(MakeInputIterator(input, ctx)),
        buffer_size_(buffer_size),
        rng_(DeriveSeed(seed.value_or(ctx.options->seed), reshuffle_each_epoch ? ctx.epoch : 0)) {
    stats_->buffer_capacity = static_cast<int64_t>(buffer_size_);
  }

  std::optional<T> Next() override {
    // 1. Fill the buffer (the first call, or after a restore with a short buffer).
    while (!input_ended_ && buffer_.size() < buffer_size_) {
      std::optional<T> v = PullInput();
      if (!v) break;
      buffer_.push_back(std::move(*v));
    }
    if (buffer_.empty()) return std::nullopt;
    // 2. A random element out, the next input element (or the last one) in its place.
    //    The input is read first, so that an input error leaves the buffer whole.
    std::optional<T> replacement = input_ended_ ? std::nullopt : PullInput();
    auto start = std::chrono::steady_clock::now();
    size_t i = static_cast<size_t>(rng_.Below(buffer_.size()));
    T out = std::move(buffer_[i]);
    if (replacement) {
      buffer_[i] = std::move(*replacement);
    } else {
      if (i + 1 != buffer_.size()) buffer_[i] = std::move(buffer_.back());
      buffer_.pop_back();
    }
    stats_->buffer_fill = static_cast<int64_t>(buffer_.size());
    stats_->elements++;
    stats_->bytes += ElementBytes(out);
    StageStats::AddSince(stats_->busy_ns, start);
    return out;
  }

  void Save(IteratorState& state) override {
    StateEncoder e;
    e.PutInt(static_cast<int64_t>(buffer_.size()));
    for (const T& element : buffer_) ElementCodec<T>::Encode(element, e);
    state.PutBytes(ctx_.Key("buffer"), e.Finish());
    state.PutInt(ctx_.Key("rng"), static_cast<int64_t>(rng_.state()));
    state.PutInt(ctx_.Key("input_ended"), input_ended_ ? 1 : 0);
    input_->Save(state);
  }

  void Restore(const IteratorState& state) override {
    StateDecoder d(state.GetBytes(ctx_.Key("buffer")), "iterator state " + ctx_.Key("buffer"));
    int64_t count = d.GetInt();
    if (count < 0 || static_cast<uint64_t>(count) > buffer_size_) {
      throw Error("iterator state " + ctx_.Key("buffer") + ": " + std::to_string(count) +
                  " buffered elements for a buffer of " + std::to_string(buffer_size_));
    }
    buffer_ = DecodeElements<T>(d, static_cast<size_t>(count));
    if (!d.done()) throw Error("iterator state " + ctx_.Key("buffer") + ": trailing bytes");
    rng_.set_state(static_cast<uint64_t>(state.GetInt(ctx_.Key("rng"))));
    input_ended_ = state.GetInt(ctx_.Key("input_ended")) != 0;
    stats_->buffer_fill = static_cast<int64_t>(buffer_.size());
    input_->Restore(state);
  }

 private:
  // The input's next element; records the input's end.
  std::optional<T> PullInput() {
    auto start = std::chrono::steady_clock::now();
    std::optional<T> v = input_->Next();
    StageStats::AddSince(stats_->input_wait_ns, start);
    if (!v) input_ended_ = true;
    return v;
  }

  IteratorContext ctx_;
  StageStats* stats_;
  std::unique_ptr<Iterator<T>> input_;
  size_t buffer_size_;
  SplitMix64 rng_;
  std::vector<T> buffer_;
  bool input_ended_ = false;
};

template <typename T>
class ShuffleDataset : public Dataset<T> {
 public:
  ShuffleDataset(DatasetPtr<T> input, size_t buffer_size, std::optional<uint64_t> seed,
                 bool reshuffle_each_epoch)
      : input_(std::move(input)),
        buffer_size_(buffer_size),
        seed_(seed),
        reshuffle_each_epoch_(reshuffle_each_epoch) {}

  std::unique_ptr<Iterator<T>> MakeIterator(const IteratorContext& ctx) const override {
    return std::make_unique<ShuffleIterator<T>>(input_, buffer_size_, seed_,
                                                reshuffle_each_epoch_, ctx);
  }
  std::string name() const override { return "shuffle"; }

 private:
  DatasetPtr<T> input_;
  size_t buffer_size_;
  std::optional<uint64_t> seed_;
  bool reshuffle_each_epoch_;
};

}  // namespace internal

// The elements of `input` in random order, through a buffer of `buffer_size` (> 0)
// elements; see the file comment. Throws Error when buffer_size is 0.
template <typename T>
DatasetPtr<T> Shuffle(DatasetPtr<T> input, size_t buffer_size,
                      std::optional<uint64_t> seed = std::nullopt,
                      bool reshuffle_each_epoch = true) {
  if (buffer_size == 0) throw Error("shuffle: buffer_size must be at least 1");
  return std::make_shared<internal::ShuffleDataset<T>>(std::move(input), buffer_size, seed,
                                                       reshuffle_each_epoch);
}

}  // namespace imgpipe::pipeline
