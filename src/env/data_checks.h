// The doctor's second job: the input pipeline's side of the machine. The host's CPUs
// against the decode threads, its memory against the Loader's own estimate of the
// planned training (loader/memory_estimate.h: the figures the Loader refuses with), and
// the data's storage, shards and network.
#pragma once

#include <string>

#include "env/doctor.h"
#include "env/system_root.h"
#include "loader/memory_estimate.h"

namespace imgpipe::env {

// What probing the data found, for the checks.
struct DataProbe {
  bool exists = false;
  std::string error;  // listing or reading the data failed (a URL's credentials, endpoint)
  double record_bytes = kAssumedRecordBytes;  // a record's mean encoded bytes
  std::string record_bytes_source = "(assumed: ImageNet's mean JPEG)";
};

// Fills r->cpus, memory and processes (r->driver probed already) and, for options.data,
// storage (a local path), shards and network (a URL). Never throws: a failure is
// DataProbe::error.
DataProbe ProbeHostAndData(const SystemRoot& root, const DoctorOptions& options, DoctorReport* r);

// The Loader's memory estimate (loader::EstimateMemory) for rank 0 of r.processes
// training with `plan` over r.shards (URLs read ahead; their records counted as their
// bytes over `record_bytes`; no shards: enough records to fill the shuffle buffer), on
// a machine of r.memory.total_bytes.
loader::MemoryNeed PlannedLoaderMemory(const PlannedTraining& plan, const DoctorReport& r, double record_bytes);

// Appends the host checks: CPUs, then memory (sets r->loader_memory and
// r->planned_buffer_bytes).
void CheckHost(DoctorReport* r, const PlannedTraining& plan, const DataProbe& data);

// Appends the data checks: what --data is, its storage, shards and network.
void CheckData(DoctorReport* r, const DoctorOptions& options, const DataProbe& data);

}  // namespace imgpipe::env
