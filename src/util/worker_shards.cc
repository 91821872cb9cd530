#include "util/worker_shards.h"

#include <set>

namespace imgpipe {

std::string ShardProblemReport(const std::string& output, const std::vector<std::string>& names,
                               const std::vector<std::string>& problems, int num_workers,
                               const std::string& rerun_hint) {
  // 1. The shards that do not check out, each with its worker when the split is known
  //    (a --finalize without --num-workers cannot tell whose a shard was).
  constexpr size_t kListed = 20;
  const bool split_known = num_workers > 1;
  std::set<int> workers;
  std::string listed;
  size_t count = 0;
  for (size_t i = 0; i < problems.size(); ++i) {
    if (problems[i].empty()) continue;
    int worker = static_cast<int>(i % static_cast<size_t>(split_known ? num_workers : 1));
    workers.insert(worker);
    if (++count <= kListed) {
      std::string owner = split_known ? " (worker " + std::to_string(worker) + ")" : "";
      listed += "\n  " + names[i] + owner + ": " + problems[i];
    }
  }
  if (count > kListed) listed += "\n  ... and " + std::to_string(count - kListed) + " more";
  std::string report = output + ": " + std::to_string(count) + " of " +
                       std::to_string(problems.size()) +
                       " shards do not check out, so no summary was written:" + listed;
  // 2. What to rerun.
  if (!split_known) {
    return report + "\nrerun the workers that own them (shard i is worker i % --num-workers's; " +
           rerun_hint + "), then --finalize again (give it --num-workers to have them named)";
  }
  std::string worker_list;
  for (int w : workers) worker_list += (worker_list.empty() ? "" : ", ") + std::to_string(w);
  return report + "\nrerun worker" + (workers.size() > 1 ? "s " : " ") + worker_list +
         " of --num-workers " + std::to_string(num_workers) + " (" + rerun_hint +
         "), then --finalize again";
}

}  // namespace imgpipe
