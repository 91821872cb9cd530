// A dataset over the elements of a std::vector (tf.data's from_tensor_slices).
#pragma once

#include <vector>

#include "pipeline/dataset.h"

namespace imgpipe::pipeline {
namespace internal {

template <typename T>
class VectorIterator : public Iterator<T> {
 public:
  VectorIterator(std::shared_ptr<const std::vector<T>> elements, const IteratorContext& ctx)
      : elements_(std::move(elements)), ctx_(ctx), stats_(ctx.RegisterStats("from_vector")) {}

  std::optional<T> Next() override {
    if (position_ >= elements_->size()) return std::nullopt;
    stats_->elements++;
    return (*elements_)[position_++];
  }
  void Save(IteratorState& state) override {
    state.PutInt(ctx_.Key("position"), static_cast<int64_t>(position_));
  }
  void Restore(const IteratorState& state) override {
    position_ = static_cast<size_t>(state.GetInt(ctx_.Key("position")));
  }

 private:
  std::shared_ptr<const std::vector<T>> elements_;
  IteratorContext ctx_;
  StageStats* stats_;
  size_t position_ = 0;
};

template <typename T>
class VectorDataset : public Dataset<T> {
 public:
  explicit VectorDataset(std::vector<T> elements)
      : elements_(std::make_shared<const std::vector<T>>(std::move(elements))) {}
  std::unique_ptr<Iterator<T>> MakeIterator(const IteratorContext& ctx) const override {
    return std::make_unique<VectorIterator<T>>(elements_, ctx);
  }
  std::string name() const override { return "from_vector"; }

 private:
  std::shared_ptr<const std::vector<T>> elements_;
};

}  // namespace internal

// The elements of `elements`, in order (T copyable).
template <typename T>
DatasetPtr<T> FromVector(std::vector<T> elements) {
  return std::make_shared<internal::VectorDataset<T>>(std::move(elements));
}

}  // namespace imgpipe::pipeline
