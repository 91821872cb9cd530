// Shards dealt to workers round robin (shard i to worker i % num_workers), as
// `imgpipe convert` and `imgpipe extract` split their output over the processes of a
// job array; and the report their finalize steps give when shards are missing.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace imgpipe {

// Whether worker `worker` of `num_workers` owns the shard at position `position`.
inline bool ShardBelongsToWorker(size_t position, int worker, int num_workers) {
  return static_cast<int>(position % static_cast<size_t>(num_workers)) == worker;
}

// The finalize step's refusal: "OUTPUT: K of N shards do not check out, so no summary
// was written:" then up to 20 lines "NAME (worker W): PROBLEM" (`names[i]` and
// `problems[i]` of shard i; an empty problem is a good shard), then which workers of
// `num_workers` to rerun and `rerun_hint`. With `num_workers` <= 1 (a finalize step not
// told the split) no worker is named.
std::string ShardProblemReport(const std::string& output, const std::vector<std::string>& names,
                               const std::vector<std::string>& problems, int num_workers,
                               const std::string& rerun_hint);

}  // namespace imgpipe
