// Padding to a fixed element count, as torch's DistributedSampler pads a rank's
// indices: the input's elements, then, when the input ended after n < count elements,
// its first elements again (cyclically over the first min(n, keep)) until `count`
// elements in all. Saved state: the elements given, whether the input ended, the kept
// elements (ElementCodec: records by reference) and the input's state.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/dataset.h"
#include "pipeline/element.h"
#include "util/error.h"

namespace imgpipe::pipeline {

template <typename T>
class PadDataset : public Dataset<T> {
 public:
  PadDataset(DatasetPtr<T> input, int64_t count, size_t keep)
      : input_(std::move(input)), count_(count), keep_(keep) {}

  std::unique_ptr<Iterator<T>> MakeIterator(const IteratorContext& ctx) const override {
    return std::make_unique<PadIterator>(*this, ctx);
  }
  std::string name() const override { return "pad"; }

 private:
  class PadIterator : public Iterator<T> {
   public:
    PadIterator(const PadDataset& dataset, const IteratorContext& ctx)
        : ctx_(ctx), count_(dataset.count_), keep_(dataset.keep_),
          input_(MakeInputIterator(dataset.input_, ctx)),
          stats_(ctx.RegisterStats(dataset.name())) {}

    std::optional<T> Next() override {
      if (!input_ended_) {
        std::optional<T> element = input_->Next();
        if (element) {
          if (kept_.size() < keep_) kept_.push_back(*element);
          ++given_;
          return element;
        }
        input_ended_ = true;
        real_ = given_;
      }
      if (given_ >= count_ || kept_.empty()) return std::nullopt;
      T element = kept_[static_cast<size_t>(given_ - real_) % kept_.size()];
      ++given_;
      stats_->elements += 1;  // the padding: what this stage adds
      stats_->bytes += ElementBytes(element);
      return element;
    }

    void Save(IteratorState& state) override {
      StateEncoder e;
      e.PutInt(static_cast<int64_t>(kept_.size()));
      for (const T& element : kept_) ElementCodec<T>::Encode(element, e);
      state.PutBytes(ctx_.Key("kept"), e.Finish());
      state.PutInt(ctx_.Key("given"), given_);
      state.PutInt(ctx_.Key("real"), input_ended_ ? real_ : -1);
      input_->Save(state);
    }

    void Restore(const IteratorState& state) override {
      StateDecoder d(state.GetBytes(ctx_.Key("kept")), "iterator state " + ctx_.Key("kept"));
      const int64_t kept = d.GetInt();
      if (kept < 0 || static_cast<uint64_t>(kept) > keep_) {
        throw Error("iterator state " + ctx_.Key("kept") + ": " + std::to_string(kept) +
                    " kept elements, at most " + std::to_string(keep_) + " expected");
      }
      kept_ = DecodeElements<T>(d, static_cast<size_t>(kept));
      if (!d.done()) throw Error("iterator state " + ctx_.Key("kept") + ": trailing bytes");
      given_ = state.GetInt(ctx_.Key("given"));
      real_ = state.GetInt(ctx_.Key("real"));
      input_ended_ = real_ >= 0;
      input_->Restore(state);
    }

   private:
    const IteratorContext ctx_;
    const int64_t count_;
    const size_t keep_;
    std::unique_ptr<Iterator<T>> input_;
    StageStats* stats_;
    std::vector<T> kept_;       // the input's first min(n, keep) elements
    int64_t given_ = 0;         // elements returned so far, padding included
    int64_t real_ = -1;         // the input's element count, once it ended
    bool input_ended_ = false;
  };

  const DatasetPtr<T> input_;
  const int64_t count_;
  const size_t keep_;
};

// `input` padded to `count` elements with repeats of its first min(n, keep) elements
// (see above); an input of `count` elements or more passes unchanged. Throws Error
// unless count >= 0 and keep >= 1.
template <typename T>
DatasetPtr<T> Pad(DatasetPtr<T> input, int64_t count, size_t keep) {
  if (!input) throw Error("pad: no input dataset");
  if (count < 0) throw Error("pad: count must be >= 0 (got " + std::to_string(count) + ")");
  if (keep < 1) throw Error("pad: keep must be at least 1");
  return std::make_shared<PadDataset<T>>(std::move(input), count, keep);
}

}  // namespace imgpipe::pipeline
