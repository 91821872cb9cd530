// Element-level sharding, as tf.data's shard: shard `index` of `num_shards` keeps the
// input elements of the strided rule (pipeline/shard_rule.h: i % num_shards == index).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "pipeline/dataset.h"
#include "pipeline/element.h"
#include "pipeline/shard_rule.h"
#include "util/error.h"

namespace imgpipe::pipeline {

template <typename T>
class ShardDataset : public Dataset<T> {
 public:
  ShardDataset(DatasetPtr<T> input, int num_shards, int index)
      : input_(std::move(input)), num_shards_(num_shards), index_(index) {}

  std::unique_ptr<Iterator<T>> MakeIterator(const IteratorContext& ctx) const override {
    return std::make_unique<ShardIterator>(*this, ctx);
  }
  std::string name() const override { return "shard"; }

 private:
  class ShardIterator : public Iterator<T> {
   public:
    ShardIterator(const ShardDataset& dataset, const IteratorContext& ctx)
        : ctx_(ctx),
          num_shards_(static_cast<uint64_t>(dataset.num_shards_)),
          index_(static_cast<uint64_t>(dataset.index_)),
          input_(MakeInputIterator(dataset.input_, ctx)),
          stats_(ctx.RegisterStats(dataset.name())) {}

    std::optional<T> Next() override {
      while (true) {
        auto start = std::chrono::steady_clock::now();
        std::optional<T> element = input_->Next();
        StageStats::AddSince(stats_->input_wait_ns, start);
        if (!element) return std::nullopt;
        uint64_t position = position_++;
        if (StridedShardOf(position, num_shards_) != index_) continue;  // another shard's
        stats_->elements += 1;
        stats_->bytes += ElementBytes(*element);
        return element;
      }
    }

    void Save(IteratorState& state) override {
      state.PutInt(ctx_.Key("position"), static_cast<int64_t>(position_));
      input_->Save(state);
    }

    void Restore(const IteratorState& state) override {
      position_ = static_cast<uint64_t>(state.GetInt(ctx_.Key("position")));
      input_->Restore(state);
    }

   private:
    const IteratorContext ctx_;
    const uint64_t num_shards_;
    const uint64_t index_;
    std::unique_ptr<Iterator<T>> input_;
    StageStats* stats_;
    uint64_t position_ = 0;  // input elements consumed so far
  };

  const DatasetPtr<T> input_;
  const int num_shards_;
  const int index_;
};

// Shard `index` of `num_shards` of `input` (element-level). Throws Error unless
// num_shards >= 1 and 0 <= index < num_shards.
template <typename T>
DatasetPtr<T> Shard(DatasetPtr<T> input, int num_shards, int index) {
  if (!input) throw Error("shard: no input dataset");
  CheckShardIndex("shard", num_shards, index);
  return std::make_shared<ShardDataset<T>>(std::move(input), num_shards, index);
}

}  // namespace imgpipe::pipeline
