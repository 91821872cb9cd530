// The core of the pipeline, in tf.data's shape: an immutable Dataset describes a
// stage and makes mutable Iterators; an iterator pulls from its input's iterator.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "pipeline/bad_element.h"
#include "pipeline/buffer_pool.h"
#include "pipeline/iterator_state.h"
#include "pipeline/options.h"
#include "pipeline/stats.h"

namespace imgpipe::pipeline {

class Autotuner;

// What an iterator is made with: the pipeline's options and shared services, and
// where this stage sits (its state-key prefix, depth and epoch).
struct IteratorContext {
  std::shared_ptr<const PipelineOptions> options;
  std::shared_ptr<StatsRegistry> stats;
  std::shared_ptr<BufferPool> pool;
  std::shared_ptr<Autotuner> autotuner;
  std::shared_ptr<BadElements> bad_elements = std::make_shared<BadElements>();
  uint64_t epoch = 0;  // set by Repeat for each pass over its input
  std::string prefix;  // this stage's state keys start with it: "0.batch", "0.batch/1.map"
  int depth = 0;

  // The context for this stage's input: one level deeper, prefix extended by the
  // input stage's name.
  IteratorContext Input(const std::string& input_name) const {
    IteratorContext c = *this;
    c.depth = depth + 1;
    c.prefix = prefix + "/" + std::to_string(c.depth) + "." + input_name;
    return c;
  }
  // A key of this stage's state.
  std::string Key(const std::string& name) const { return prefix + ":" + name; }
  // Registers this stage's statistics.
  StageStats* RegisterStats(const std::string& name) const {
    return stats->Register(name, depth, prefix);
  }
  // The skip-or-rethrow helper of a stage whose statistics are `stage_stats`.
  BadElementGuard MakeBadElementGuard(StageStats* stage_stats) const {
    return BadElementGuard(options->error_policy, stage_stats, bad_elements);
  }
};

template <typename T>
class Iterator {
 public:
  virtual ~Iterator() = default;

  // The next element, or nullopt at the end of the sequence. Called by one thread at a
  // time. Throws a bad element's DataError under ErrorPolicy::kFail, and rethrows an
  // exception raised on a worker thread.
  virtual std::optional<T> Next() = 0;

  // Writes the state of this stage and of its inputs under the context's prefix, such
  // that Restore continues with exactly the elements this iterator would have given
  // next (in deterministic mode). Called between Next calls.
  virtual void Save(IteratorState& state) = 0;

  // Continues from `state`. Called right after the iterator was made, before Next.
  virtual void Restore(const IteratorState& state) = 0;
};

template <typename T>
class Dataset {
 public:
  virtual ~Dataset() = default;
  // A new iterator at the start of this dataset's sequence for ctx.epoch.
  virtual std::unique_ptr<Iterator<T>> MakeIterator(const IteratorContext& ctx) const = 0;
  // Short name for statistics and state keys: "shuffle", "map(train_preset)".
  virtual std::string name() const = 0;
};

template <typename T>
using DatasetPtr = std::shared_ptr<const Dataset<T>>;

// Makes the input iterator of a stage: the input's context derived from `ctx`.
template <typename T>
std::unique_ptr<Iterator<T>> MakeInputIterator(const DatasetPtr<T>& input,
                                               const IteratorContext& ctx) {
  return input->MakeIterator(ctx.Input(input->name()));
}

}  // namespace imgpipe::pipeline
