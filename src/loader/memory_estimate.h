// What a Loader's buffers hold at least, known before any is allocated: its batches,
// its shuffle buffer and, with start_ahead, a second pass's; and the memory it may use:
// the RAM budget and the machine's (physical memory, the address-space and data ulimits).
// A configuration whose minimum does not fit is refused with the figures, instead of
// failing in an allocation (or being killed by the kernel) mid-epoch. The one estimate:
// `imgpipe doctor` states and judges the same figures (env/data_checks.h).
#pragma once

#include <cstdint>
#include <string>

#include "loader/loader_data.h"
#include "loader/loader_options.h"

namespace imgpipe::loader {

struct MemoryNeed {
  uint64_t batch_bytes = 0;        // one batch: its samples and labels
  uint64_t batches_per_pass = 0;   // held at least: being made, prefetched, with the user
  uint64_t shuffle_bytes = 0;      // the shuffle buffer's records (mean record size)
  uint64_t read_ahead_bytes = 0;   // data at URLs: the pieces of the shards read at once, at most
  uint64_t passes = 1;             // 2 with start_ahead (the next epoch's overlaps)
  uint64_t minimum_bytes = 0;      // passes * (batches_per_pass * batch_bytes + shuffle_bytes + read_ahead_bytes)
  uint64_t budget_bytes = 0;       // ram_budget_bytes, or half the physical memory (as the pipeline)
  uint64_t machine_bytes = 0;      // physical memory, or a lower RLIMIT_AS / RLIMIT_DATA
};

// The memory of a machine, as the estimate judges it.
struct MachineMemory {
  uint64_t physical_bytes = 0;  // RAM: half of it is the default budget
  uint64_t limit_bytes = 0;     // physical memory, or a lower limit on the process
};

// This machine's: pipeline::PhysicalMemoryBytes, and the soft RLIMIT_AS and RLIMIT_DATA.
MachineMemory ThisMachineMemory();

// The need of `o` over `data` on `machine`; batches of rank `o.rank`. Reads only
// data.samples, data.mean_record_bytes and data.paths (URLs are read ahead), so a caller
// without the data at hand (the doctor) may fill those alone.
MemoryNeed EstimateMemory(const LoaderData& data, const LoaderOptions& o,
                          const MachineMemory& machine = ThisMachineMemory());

// need.minimum_bytes in the terms the refusal names: "(3 batches per pass x 147.0 MiB
// + a shuffle buffer of 107.4 MiB + network read-ahead of 160.0 MiB) x 2 passes =
// 1.1 GiB"; terms that are zero are left out.
std::string MemoryTerms(const MemoryNeed& need);

// Whether need.minimum_bytes fits both the budget and the machine (the Loader accepts).
bool MemoryFits(const MemoryNeed& need);

// Throws InvalidArgument when the need does not fit (MemoryFits), naming the options
// and the figures.
void CheckMemory(const MemoryNeed& need, const LoaderOptions& o);

}  // namespace imgpipe::loader
