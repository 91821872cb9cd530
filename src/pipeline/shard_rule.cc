#include "pipeline/shard_rule.h"

#include <string>

#include "util/error.h"

namespace imgpipe::pipeline {

void CheckShardIndex(const char* what, int num_shards, int index) {
  if (num_shards < 1 || index < 0 || index >= num_shards) {
    throw Error(std::string(what) + ": shard index " + std::to_string(index) + " of " +
                std::to_string(num_shards) +
                " shards is invalid (need num_shards >= 1 and 0 <= index < num_shards)");
  }
}

uint64_t StridedShardSize(uint64_t n, int num_shards, int index) {
  CheckShardIndex("strided shard", num_shards, index);
  const auto w = static_cast<uint64_t>(num_shards), r = static_cast<uint64_t>(index);
  return n > r ? (n - r - 1) / w + 1 : 0;  // elements r, r + w, ... below n
}

SampleRange ContiguousShardRange(uint64_t n, int num_shards, int index) {
  CheckShardIndex("contiguous shard", num_shards, index);
  auto bound = [&](int i) {
    return static_cast<uint64_t>(static_cast<unsigned __int128>(n) * static_cast<unsigned>(i) /
                                 static_cast<unsigned>(num_shards));
  };
  return {bound(index), bound(index + 1)};
}

uint64_t ShardSize(ShardRule rule, uint64_t n, int num_shards, int index) {
  return rule == ShardRule::kStrided ? StridedShardSize(n, num_shards, index)
                                     : ContiguousShardRange(n, num_shards, index).size();
}

}  // namespace imgpipe::pipeline
