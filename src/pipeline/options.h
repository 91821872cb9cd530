// Options of a whole pipeline, as tf.data.Options: one place, each with its default.
#pragma once

#include <cstdint>

#include "util/error_policy.h"

namespace imgpipe::pipeline {

struct PipelineOptions {
  // Same elements in the same order for any thread count and timing, given the seed.
  // Off: parallel stages may yield out of order, for speed.
  bool deterministic = true;
  // Choose and adjust parallelism and buffer sizes at run time (stages given
  // kAutotune), within cpu_budget threads and ram_budget_bytes of buffered elements.
  bool autotune = true;
  int cpu_budget = 0;             // 0: the CPUs this process may use
  uint64_t ram_budget_bytes = 0;  // 0: half of physical memory
  // Seed of every random stage that is not given its own.
  uint64_t seed = 0;
  // A bad element (corrupt record, undecodable image): skip and count (logged once per
  // file), or fail (the error reaches the caller of Next).
  ErrorPolicy error_policy = ErrorPolicy::kSkip;
};

// Parallelism or buffer size that autotune chooses.
inline constexpr int kAutotune = -1;

}  // namespace imgpipe::pipeline
