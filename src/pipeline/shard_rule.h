// Which samples a shard gets: the two rules the pipeline shards by, each written once.
// Strided (ShardDataset, tf.data's shard): element i belongs to shard i % num_shards.
// Contiguous (TfRecordRecordShard): shard r of w gets [r*n/w, (r+1)*n/w) of n records.
// Under both, every shard gets n/w or n/w + 1 samples. Functions that take a shard
// throw Error unless num_shards >= 1 and 0 <= index < num_shards.
#pragma once

#include <cstdint>

namespace imgpipe::pipeline {

// Throws Error, naming `what`, unless num_shards >= 1 and 0 <= index < num_shards.
void CheckShardIndex(const char* what, int num_shards, int index);

// The shard that element `position` belongs to under the strided rule
// (num_shards >= 1, unchecked: it runs once per element).
inline uint64_t StridedShardOf(uint64_t position, uint64_t num_shards) {
  return position % num_shards;
}

// How many of elements 0..n-1 the strided rule gives shard `index` of `num_shards`.
uint64_t StridedShardSize(uint64_t n, int num_shards, int index);

// A half-open range [begin, end) of sample indexes.
struct SampleRange {
  uint64_t begin = 0;
  uint64_t end = 0;
  uint64_t size() const { return end - begin; }
};

// The samples of 0..n-1 the contiguous rule gives shard `index` of `num_shards`:
// [index*n/num_shards, (index+1)*n/num_shards), computed without overflow.
SampleRange ContiguousShardRange(uint64_t n, int num_shards, int index);

// The two rules, for code that counts a shard without reading it.
enum class ShardRule { kStrided, kContiguous };
// How many of elements 0..n-1 `rule` gives shard `index` of `num_shards`.
uint64_t ShardSize(ShardRule rule, uint64_t n, int num_shards, int index);

}  // namespace imgpipe::pipeline
