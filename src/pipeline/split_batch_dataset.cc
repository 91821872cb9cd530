#include "pipeline/split_batch_dataset.h"

#include <cstring>
#include <optional>
#include <string>

#include "util/error.h"

namespace imgpipe::pipeline {
namespace {

class SplitBatchDataset : public Dataset<Batch> {
 public:
  SplitBatchDataset(DatasetPtr<Batch> input, int64_t index) : input_(std::move(input)), index_(index) {}

  std::unique_ptr<Iterator<Batch>> MakeIterator(const IteratorContext& ctx) const override;
  std::string name() const override { return "split_batch"; }

 private:
  class SplitIterator;
  const DatasetPtr<Batch> input_;
  const int64_t index_;
};

class SplitBatchDataset::SplitIterator : public Iterator<Batch> {
 public:
  SplitIterator(const SplitBatchDataset& dataset, const IteratorContext& ctx)
      : ctx_(ctx), index_(dataset.index_), input_(MakeInputIterator(dataset.input_, ctx)),
        stats_(ctx.RegisterStats(dataset.name())) {}

  std::optional<Batch> Next() override {
    if (tail_) {
      std::optional<Batch> tail = std::move(tail_);
      tail_.reset();
      return tail;
    }
    std::optional<Batch> batch = input_->Next();
    if (!batch) return std::nullopt;
    if (taken_++ == index_) {
      tail_ = Split(*batch);
      stats_->elements += 1;
      stats_->bytes += ElementBytes(*tail_);
    }
    return batch;
  }

  void Save(IteratorState& state) override {
    state.PutInt(ctx_.Key("taken"), taken_);
    StateEncoder e;
    e.PutInt(tail_ ? 1 : 0);
    if (tail_) ElementCodec<Batch>::Encode(*tail_, e);
    state.PutBytes(ctx_.Key("tail"), e.Finish());
    input_->Save(state);
  }

  void Restore(const IteratorState& state) override {
    taken_ = state.GetInt(ctx_.Key("taken"));
    StateDecoder d(state.GetBytes(ctx_.Key("tail")), "iterator state " + ctx_.Key("tail"));
    tail_.reset();
    if (d.GetInt() != 0) tail_ = ElementCodec<Batch>::Decode(d);
    if (!d.done()) throw Error("iterator state " + ctx_.Key("tail") + ": trailing bytes");
    input_->Restore(state);
  }

 private:
  // Cuts `batch` to its first half and returns the second half in a new buffer.
  Batch Split(Batch& batch) const {
    if (batch.size < 2) {
      throw Error("split_batch: batch " + std::to_string(index_) + " has " + std::to_string(batch.size) +
                  " sample(s); it cannot be split in two");
    }
    const size_t head = (batch.size + 1) / 2;
    Batch tail;
    tail.size = batch.size - head;
    tail.sample_bytes = batch.sample_bytes;
    tail.data = ctx_.pool->Get(tail.size * batch.sample_bytes);
    std::memcpy(tail.data.data(), batch.data.data() + head * batch.sample_bytes, tail.data.size());
    tail.labels.assign(batch.labels.begin() + static_cast<ptrdiff_t>(head), batch.labels.end());
    batch.labels.resize(head);
    if (!batch.stand_ins.empty()) {
      tail.stand_ins.assign(batch.stand_ins.begin() + static_cast<ptrdiff_t>(head), batch.stand_ins.end());
      batch.stand_ins.resize(head);
    }
    batch.size = head;
    return tail;
  }

  const IteratorContext ctx_;
  const int64_t index_;
  std::unique_ptr<Iterator<Batch>> input_;
  StageStats* stats_;
  int64_t taken_ = 0;          // batches taken from the input
  std::optional<Batch> tail_;  // the split batch's second half, not yet returned
};

std::unique_ptr<Iterator<Batch>> SplitBatchDataset::MakeIterator(const IteratorContext& ctx) const {
  return std::make_unique<SplitIterator>(*this, ctx);
}

}  // namespace

DatasetPtr<Batch> SplitBatch(DatasetPtr<Batch> input, int64_t index) {
  if (!input) throw Error("split_batch: no input dataset");
  if (index < 0) throw Error("split_batch: index must be >= 0 (got " + std::to_string(index) + ")");
  return std::make_shared<SplitBatchDataset>(std::move(input), index);
}

}  // namespace imgpipe::pipeline
