// The deterministic plan of a conversion: which input goes to which split and shard.
// It depends only on the input list, the input file sizes and the options, never on
// thread count, timing or which worker runs it, so that any number of workers (and a
// resumed run) produce the same shards.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "pipeline/input_list.h"
#include "util/worker_shards.h"

namespace imgpipe {

struct SplitSpec {
  std::string name;
  double fraction = 1.0;
};

// Parses "train=0.9,validation=0.1" (fractions > 0, summing to 1 within 1e-6).
std::vector<SplitSpec> ParseSplits(const std::string& text);

// Parses a byte size: "256MB", "1.5GiB", "4096", "64k" (k/M/G/T decimal; Ki/Mi/Gi/Ti
// binary; a trailing B optional).
uint64_t ParseByteSize(const std::string& text);

struct PlanOptions {
  std::vector<SplitSpec> splits = {{"train", 1.0}};
  uint64_t shard_bytes = 256'000'000;
  int min_shards = 1;  // per split
  uint64_t seed = 0;
};

struct PlannedShard {
  std::string split;
  int index = 0;               // within its split
  int count = 0;               // shards in its split
  std::string file_name;       // "<split>-00003-of-00016.tfrecord"
  std::vector<uint32_t> inputs;  // indices into the InputList, in write order (4 bytes
                                 // each: 40 MB for ten million inputs)
  uint64_t input_bytes = 0;    // their file sizes added up
};

struct ConvertPlan {
  std::vector<PlannedShard> shards;  // split by split, in index order
};

// Builds the plan:
//  1. shuffle all inputs with `seed` (a fixed PRNG, identical on every platform);
//  2. cut the shuffled order into splits by fraction (rounded; the last split takes
//     the rest);
//  3. per split, shards = max(min_shards, ceil(bytes / shard_bytes)); inputs are dealt
//     out in contiguous runs of equal count (sizes differ by at most one).
// `sizes[i]` is the file size of input i. Throws Error above 2^32 - 1 inputs.
ConvertPlan MakeConvertPlan(const InputList& inputs, const std::vector<uint64_t>& sizes,
                            const PlanOptions& options);
// The same for inputs known by their sizes only (input i has size sizes[i]).
ConvertPlan MakeConvertPlan(std::span<const uint64_t> sizes, const PlanOptions& options);

// "<split>-<index:05>-of-<count:05>.tfrecord".
std::string ShardFileName(const std::string& split, int index, int count);

}  // namespace imgpipe
