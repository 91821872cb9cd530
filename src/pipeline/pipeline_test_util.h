// Helpers shared by the pipeline's tests: in-memory source datasets with save/restore,
// a test IteratorContext, draining, and the save/restore-at-every-cut check.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/dataset.h"
#include "pipeline/element.h"
#include "pipeline/iterator_state.h"
#include "record/index.h"
#include "record/tfrecord_writer.h"
#include "util/file.h"

namespace imgpipe::pipeline {

// A root context as the tests use it: fresh options (a copy of `options`), statistics
// registry and buffer pool; prefix "0.test".
inline IteratorContext MakeTestContext(const PipelineOptions& options = PipelineOptions()) {
  IteratorContext ctx;
  ctx.options = std::make_shared<PipelineOptions>(options);
  ctx.stats = std::make_shared<StatsRegistry>();
  ctx.pool = BufferPool::Create();
  ctx.prefix = "0.test";
  ctx.depth = 0;
  return ctx;
}

// A source of `count` elements, element i of epoch e being make(e, i); count < 0 is
// endless. `make` may throw (to test error paths). State: the index of the next
// element. Counts every Next call of all its iterators (next_calls()), for tests that
// check a stage does not touch its input.
template <typename T>
class GeneratorDataset : public Dataset<T> {
 public:
  using Make = std::function<T(uint64_t epoch, size_t index)>;

  GeneratorDataset(int64_t count, Make make, std::string name = "generator")
      : shared_(std::make_shared<Shared>(count, std::move(make), std::move(name))) {}

  std::unique_ptr<Iterator<T>> MakeIterator(const IteratorContext& ctx) const override {
    shared_->iterators_made.fetch_add(1);
    return std::make_unique<GeneratorIterator>(shared_, ctx);
  }
  std::string name() const override { return shared_->name; }

  // Next calls made on all iterators of this dataset (including those at the end).
  int64_t next_calls() const { return shared_->next_calls.load(); }
  int64_t iterators_made() const { return shared_->iterators_made.load(); }

 private:
  // What the dataset and its iterators share (iterators may outlive the dataset).
  struct Shared {
    Shared(int64_t c, Make m, std::string n) : count(c), make(std::move(m)), name(std::move(n)) {}
    const int64_t count;
    const Make make;
    const std::string name;
    std::atomic<int64_t> next_calls{0};
    std::atomic<int64_t> iterators_made{0};
  };

  class GeneratorIterator : public Iterator<T> {
   public:
    GeneratorIterator(std::shared_ptr<Shared> shared, const IteratorContext& ctx)
        : shared_(std::move(shared)), ctx_(ctx), stats_(ctx.RegisterStats(shared_->name)) {}

    std::optional<T> Next() override {
      shared_->next_calls.fetch_add(1);
      if (shared_->count >= 0 && index_ >= static_cast<size_t>(shared_->count)) {
        return std::nullopt;
      }
      T value = shared_->make(ctx_.epoch, index_);
      ++index_;
      stats_->elements += 1;
      stats_->bytes += ElementBytes(value);
      return value;
    }
    void Save(IteratorState& state) override {
      state.PutInt(ctx_.Key("index"), static_cast<int64_t>(index_));
    }
    void Restore(const IteratorState& state) override {
      index_ = static_cast<size_t>(state.GetInt(ctx_.Key("index")));
    }

   private:
    std::shared_ptr<Shared> shared_;
    IteratorContext ctx_;
    StageStats* stats_;
    size_t index_ = 0;
  };

  std::shared_ptr<Shared> shared_;
};

// A source over a fixed vector (the same elements every epoch); T must be copyable.
template <typename T>
class VectorDataset : public GeneratorDataset<T> {
 public:
  explicit VectorDataset(std::vector<T> elements, std::string name = "vector")
      : VectorDataset(std::make_shared<const std::vector<T>>(std::move(elements)), std::move(name)) {}

 private:
  VectorDataset(std::shared_ptr<const std::vector<T>> v, std::string name)
      : GeneratorDataset<T>(
            static_cast<int64_t>(v->size()), [v](uint64_t, size_t i) { return (*v)[i]; },
            std::move(name)) {}
};

template <typename T>
std::shared_ptr<VectorDataset<T>> MakeVectorDataset(std::vector<T> elements,
                                                    std::string name = "vector") {
  return std::make_shared<VectorDataset<T>>(std::move(elements), std::move(name));
}

// "e0", "e1", ... "e<n-1>" (with `prefix` instead of "e" when given).
inline std::vector<std::string> NumberedStrings(size_t n, const std::string& prefix = "e") {
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) out.push_back(prefix + std::to_string(i));
  return out;
}

// A VectorDataset of NumberedStrings(n).
inline DatasetPtr<std::string> Numbers(size_t n) { return MakeVectorDataset(NumberedStrings(n)); }

// Up to `max` elements of `it` (all of them when it ends first).
template <typename T>
std::vector<T> Drain(Iterator<T>& it, size_t max = std::numeric_limits<size_t>::max()) {
  std::vector<T> out;
  while (out.size() < max) {
    std::optional<T> v = it.Next();
    if (!v) break;
    out.push_back(std::move(*v));
  }
  return out;
}
template <typename T>
std::vector<T> Drain(const std::unique_ptr<Iterator<T>>& it,
                     size_t max = std::numeric_limits<size_t>::max()) {
  return Drain(*it, max);
}

// Up to `max` elements of a fresh iterator of `dataset` made with MakeTestContext(options).
template <typename T>
std::vector<T> Collect(const DatasetPtr<T>& dataset, size_t max = std::numeric_limits<size_t>::max(),
                       const PipelineOptions& options = PipelineOptions()) {
  auto it = dataset->MakeIterator(MakeTestContext(options));
  return Drain(*it, max);
}

// A printable, comparable view of an element (with all its bytes), for tests that
// compare sequences of elements that are not themselves comparable.
inline std::string ElementView(const std::string& v) { return v; }
inline std::string ElementView(const Record& r) {
  return "record{" + r.data + "|" + r.source + "@" + std::to_string(r.offset) +
         " label=" + std::to_string(r.label) +
         " origin=" + std::to_string(static_cast<int>(r.origin)) + "}";
}
inline std::string ElementView(const Sample& s) {
  return "sample{label=" + std::to_string(s.label) + " " + s.source + "@" +
         std::to_string(s.offset) + " pixels=" +
         std::string(reinterpret_cast<const char*>(s.pixels.data()), s.pixels.size()) + "}";
}
inline std::string ElementView(const Batch& b) {
  std::string labels;
  for (int64_t l : b.labels) labels += std::to_string(l) + ",";
  std::string stand_ins;
  for (uint8_t m : b.stand_ins) stand_ins += std::to_string(m);
  if (!stand_ins.empty()) labels += " stand_ins=" + stand_ins;
  return "batch{size=" + std::to_string(b.size) + " sample_bytes=" +
         std::to_string(b.sample_bytes) + " labels=" + labels + " data=" +
         std::string(reinterpret_cast<const char*>(b.data.data()), b.data.size()) + "}";
}
template <typename T>
std::vector<std::string> ElementViews(const std::vector<T>& elements) {
  std::vector<std::string> out;
  out.reserve(elements.size());
  for (const T& e : elements) out.push_back(ElementView(e));
  return out;
}

// The element type of a DatasetPtr<T> (or of any shared_ptr to a Dataset<T> subclass).
template <typename T>
T DatasetElementOf(const Dataset<T>*);
template <typename Ptr>
using DatasetElement = decltype(DatasetElementOf(std::declval<Ptr>().get()));

// The save/restore check: `make_dataset()` builds the pipeline (called afresh for the
// reference run, and for each cut both for the saving and for the restoring iterator,
// like a new process). The reference is the first `n` elements of an uninterrupted
// run (all of them if it ends first). For every cut k in [0, reference size]:
//   1. a fresh iterator gives k elements (checked against the reference), then Save;
//   2. the saving iterator goes on and must still give the rest of the reference;
//   3. the state goes through Serialize/Deserialize into a fresh iterator of a fresh
//      dataset, made with a fresh context; after Restore it must give exactly the rest
//      of the reference (and end where the reference ended, if it ended before n).
// Returns the reference views. Elements are compared as ElementView strings.
template <typename Factory>
std::vector<std::string> CheckSaveRestoreAtEveryCut(
    const Factory& make_dataset, size_t n, const PipelineOptions& options = PipelineOptions()) {
  using T = DatasetElement<decltype(make_dataset())>;
  std::vector<std::string> reference;
  bool reference_ended = false;
  {
    auto dataset = make_dataset();
    auto it = dataset->MakeIterator(MakeTestContext(options));
    std::vector<T> elements = Drain<T>(*it, n);
    reference = ElementViews(elements);
    reference_ended = elements.size() < n || !it->Next().has_value();
  }
  // Everything after the cut that a continuing iterator must give.
  auto expect_rest = [&](Iterator<T>& it, size_t k, const char* who) {
    std::vector<std::string> rest = ElementViews(Drain<T>(it, reference.size() - k));
    std::vector<std::string> want(reference.begin() + static_cast<ptrdiff_t>(k), reference.end());
    EXPECT_EQ(rest, want) << who << " iterator after a cut at " << k;
    if (reference_ended) {
      EXPECT_FALSE(it.Next().has_value()) << who << " iterator after a cut at " << k
                                          << " goes on past the end";
    }
  };
  for (size_t k = 0; k <= reference.size(); ++k) {
    SCOPED_TRACE("save/restore cut at element " + std::to_string(k));
    std::string bytes;
    {
      auto dataset = make_dataset();
      auto it = dataset->MakeIterator(MakeTestContext(options));
      std::vector<std::string> head = ElementViews(Drain<T>(*it, k));
      std::vector<std::string> want(reference.begin(), reference.begin() + static_cast<ptrdiff_t>(k));
      EXPECT_EQ(head, want) << "the first " << k << " elements differ from the reference run";
      IteratorState state;
      it->Save(state);
      bytes = state.Serialize();
      expect_rest(*it, k, "saving");
    }
    auto dataset = make_dataset();
    auto restored = dataset->MakeIterator(MakeTestContext(options));
    restored->Restore(IteratorState::Deserialize(bytes));
    expect_rest(*restored, k, "restored");
    if (::testing::Test::HasFailure()) break;  // one failing cut says enough
  }
  return reference;
}

// A path under ::testing::TempDir() unique to this process and call: "<tmp>/<name>.<pid>.<n>".
inline std::string TestTempPath(const std::string& name) {
  static std::atomic<int> counter{0};
  return JoinPath(::testing::TempDir(), name + "." + std::to_string(::getpid()) + "." +
                                            std::to_string(counter.fetch_add(1)));
}

// Writes `records` as an uncompressed TFRecord file at `path` (and its index file
// when `with_index`); returns the index entries.
inline std::vector<IndexEntry> WriteTestTfRecords(const std::string& path,
                                                  const std::vector<std::string>& records,
                                                  bool with_index = false) {
  std::vector<IndexEntry> entries;
  {
    std::unique_ptr<WritableFile> file = OpenWritableFile(path);
    TfRecordWriter writer(*file);
    for (const std::string& r : records) entries.push_back(writer.Write(r));
    writer.Close();
    file->Close();
  }
  if (with_index) WriteIndexFile(IndexPathFor(path), entries);
  return entries;
}

}  // namespace imgpipe::pipeline
