#include "loader/memory_estimate.h"

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>

#include "io/storage.h"
#include "pipeline/autotune.h"
#include "pipeline/image_samples.h"
#include "util/byte_size.h"
#include "util/error.h"

namespace imgpipe::loader {

MachineMemory ThisMachineMemory() {
  MachineMemory machine;
  machine.physical_bytes = pipeline::PhysicalMemoryBytes();
  machine.limit_bytes = machine.physical_bytes;
  for (int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    rlimit limit{};
    if (getrlimit(resource, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
      machine.limit_bytes = std::min<uint64_t>(machine.limit_bytes, limit.rlim_cur);
    }
  }
  return machine;
}

MemoryNeed EstimateMemory(const LoaderData& data, const LoaderOptions& o, const MachineMemory& machine) {
  MemoryNeed need;
  const auto batch = static_cast<uint64_t>(o.batch_size);
  need.batch_bytes = batch * OutputBytes(ParseOutputLayout(o.layout), o.image_size) + batch * sizeof(int64_t);
  // The batch the user holds, one prefetched (the prefetch buffer's minimum) and one
  // that map_and_batch's workers write.
  need.batches_per_pass = 3;
  if (ShufflesRecords(o)) {
    const uint64_t per_rank = static_cast<uint64_t>(data.samples) / static_cast<uint64_t>(o.world_size) + 1;
    need.shuffle_bytes = std::min<uint64_t>(o.shuffle_buffer, per_rank) * data.mean_record_bytes;
  }
  // Over a network, each shard read at once holds pieces ahead of its reader.
  if (!data.paths.empty()) {
    const auto shards = std::min<uint64_t>(data.paths.size(), pipeline::ImagePipelineConfig{}.cycle_length);
    need.read_ahead_bytes = shards * ReadAheadBytes(data.paths.front());
  }
  need.passes = o.start_ahead ? 2 : 1;
  need.minimum_bytes =
      need.passes * (need.batches_per_pass * need.batch_bytes + need.shuffle_bytes + need.read_ahead_bytes);
  need.budget_bytes = o.ram_budget_bytes > 0 ? o.ram_budget_bytes : machine.physical_bytes / 2;
  need.machine_bytes = machine.limit_bytes;
  return need;
}

std::string MemoryTerms(const MemoryNeed& need) {
  std::string terms = std::to_string(need.batches_per_pass) + " batches per pass x " + FormatBytes(need.batch_bytes);
  if (need.shuffle_bytes) terms += " + a shuffle buffer of " + FormatBytes(need.shuffle_bytes);
  if (need.read_ahead_bytes) terms += " + network read-ahead of " + FormatBytes(need.read_ahead_bytes);
  if (need.passes > 1) terms = "(" + terms + ") x " + std::to_string(need.passes) + " passes";
  return terms + " = " + FormatBytes(need.minimum_bytes);
}

bool MemoryFits(const MemoryNeed& need) {
  return need.minimum_bytes <= need.budget_bytes && need.minimum_bytes <= need.machine_bytes;
}

void CheckMemory(const MemoryNeed& need, const LoaderOptions& o) {
  if (MemoryFits(need)) return;
  const bool over_budget = need.minimum_bytes > need.budget_bytes;
  const std::string budget_source =
      o.ram_budget_bytes > 0 ? " (ram_budget_bytes)" : " (half the machine's memory; set ram_budget_bytes)";
  const std::string limit = over_budget
                                ? "the RAM budget of " + FormatBytes(need.budget_bytes) + budget_source
                                : "this machine's " + FormatBytes(need.machine_bytes) + " (physical memory or ulimit)";
  std::string with;  // the options behind the terms
  if (need.shuffle_bytes) with = " shuffle_buffer=" + std::to_string(o.shuffle_buffer);
  if (need.passes > 1) with += (with.empty() ? " " : " and ") + std::string("start_ahead=True (two passes overlap)");
  throw InvalidArgument("Loader: batch_size=" + std::to_string(o.batch_size) + " with image_size=" +
                        std::to_string(o.image_size) + " and layout='" + o.layout + "' makes batches of " +
                        FormatBytes(need.batch_bytes) + ";" + (with.empty() ? "" : " with" + with + ",") +
                        " the loader needs at least " + MemoryTerms(need) + ", more than " + limit +
                        ": lower batch_size, image_size or shuffle_buffer, or use layout='uint8'");
}

}  // namespace imgpipe::loader
