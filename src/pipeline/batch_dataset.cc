#include "pipeline/batch_dataset.h"

#include <chrono>
#include <cstring>
#include <optional>
#include <vector>

#include "util/error.h"

namespace imgpipe::pipeline {
namespace {

// Names a sample in errors: "FILE at offset N", or "sample N of the batch".
std::string DescribeSample(const Sample& s, size_t index) {
  if (s.source.empty()) return "sample " + std::to_string(index) + " of the batch";
  return s.source + " at offset " + std::to_string(s.offset);
}

class BatchIterator : public Iterator<Batch> {
 public:
  BatchIterator(const DatasetPtr<Sample>& input, size_t batch_size, bool drop_remainder,
                const IteratorContext& ctx)
      : ctx_(ctx),
        stats_(ctx.RegisterStats("batch")),
        input_(MakeInputIterator(input, ctx)),
        pool_(ctx.pool ? ctx.pool : BufferPool::Default()),
        batch_size_(batch_size),
        drop_remainder_(drop_remainder) {
    stats_->buffer_capacity = static_cast<int64_t>(batch_size_);
    partial_.reserve(batch_size_);
  }

  std::optional<Batch> Next() override {
    // 1. Gather up to batch_size samples.
    while (partial_.size() < batch_size_ && !input_ended_) {
      auto start = std::chrono::steady_clock::now();
      std::optional<Sample> s = input_->Next();
      StageStats::AddSince(stats_->input_wait_ns, start);
      if (!s) {
        input_ended_ = true;
        break;
      }
      if (!partial_.empty() && s->pixels.size() != partial_.front().pixels.size()) {
        throw Error("batch: samples differ in size: " + DescribeSample(partial_.front(), 0) +
                    " has " + std::to_string(partial_.front().pixels.size()) + " pixel bytes, " +
                    DescribeSample(*s, partial_.size()) + " has " +
                    std::to_string(s->pixels.size()));
      }
      partial_.push_back(std::move(*s));
      stats_->buffer_fill = static_cast<int64_t>(partial_.size());
    }
    if (partial_.empty()) return std::nullopt;
    if (partial_.size() < batch_size_ && drop_remainder_) {
      partial_.clear();
      stats_->buffer_fill = 0;
      return std::nullopt;
    }
    // 2. Copy them back to back into one pooled buffer.
    auto start = std::chrono::steady_clock::now();
    Batch batch;
    batch.size = partial_.size();
    batch.sample_bytes = partial_.front().pixels.size();
    batch.data = pool_->Get(batch.size * batch.sample_bytes);
    batch.labels.reserve(batch.size);
    for (size_t i = 0; i < partial_.size(); ++i) {
      if (batch.sample_bytes > 0) {
        std::memcpy(batch.data.data() + i * batch.sample_bytes, partial_[i].pixels.data(),
                    batch.sample_bytes);
      }
      batch.labels.push_back(partial_[i].label);
    }
    partial_.clear();  // the samples' buffers go back to their pool
    stats_->buffer_fill = 0;
    stats_->elements++;
    stats_->bytes += ElementBytes(batch);
    StageStats::AddSince(stats_->busy_ns, start);
    return batch;
  }

  void Save(IteratorState& state) override {
    StateEncoder e;
    e.PutInt(static_cast<int64_t>(partial_.size()));
    for (const Sample& s : partial_) ElementCodec<Sample>::Encode(s, e);
    state.PutBytes(ctx_.Key("partial"), e.Finish());
    state.PutInt(ctx_.Key("input_ended"), input_ended_ ? 1 : 0);
    input_->Save(state);
  }

  void Restore(const IteratorState& state) override {
    const std::string key = ctx_.Key("partial");
    StateDecoder d(state.GetBytes(key), "iterator state " + key);
    int64_t count = d.GetInt();
    if (count < 0 || static_cast<uint64_t>(count) > batch_size_) {
      throw Error("iterator state " + key + ": " + std::to_string(count) +
                  " samples for batches of " + std::to_string(batch_size_));
    }
    partial_.clear();
    for (int64_t i = 0; i < count; ++i) partial_.push_back(ElementCodec<Sample>::Decode(d));
    if (!d.done()) throw Error("iterator state " + key + ": trailing bytes");
    input_ended_ = state.GetInt(ctx_.Key("input_ended")) != 0;
    stats_->buffer_fill = static_cast<int64_t>(partial_.size());
    input_->Restore(state);
  }

 private:
  IteratorContext ctx_;
  StageStats* stats_;
  std::unique_ptr<Iterator<Sample>> input_;
  std::shared_ptr<BufferPool> pool_;
  size_t batch_size_;
  bool drop_remainder_;
  std::vector<Sample> partial_;  // samples of the batch being gathered
  bool input_ended_ = false;
};

class BatchDataset : public Dataset<Batch> {
 public:
  BatchDataset(DatasetPtr<Sample> input, size_t batch_size, bool drop_remainder)
      : input_(std::move(input)), batch_size_(batch_size), drop_remainder_(drop_remainder) {}
  std::unique_ptr<Iterator<Batch>> MakeIterator(const IteratorContext& ctx) const override {
    return std::make_unique<BatchIterator>(input_, batch_size_, drop_remainder_, ctx);
  }
  std::string name() const override { return "batch"; }

 private:
  DatasetPtr<Sample> input_;
  size_t batch_size_;
  bool drop_remainder_;
};

}  // namespace

DatasetPtr<Batch> BatchSamples(DatasetPtr<Sample> input, size_t batch_size, bool drop_remainder) {
  if (batch_size == 0) throw Error("batch: batch_size must be at least 1");
  return std::make_shared<BatchDataset>(std::move(input), batch_size, drop_remainder);
}

}  // namespace imgpipe::pipeline
