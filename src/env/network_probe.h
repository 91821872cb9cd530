// How fast network storage answers (issue 21): the latency of a small ranged read and the
// throughput of large ranged reads over one connection and over several at once, measured
// on the data's own shards through the byte sources the pipeline reads with (io/storage.h).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace imgpipe::env {

struct NetworkProbeOptions {
  int latency_reads = 5;               // 4 KiB ranged reads timed; the median is kept
  size_t piece_bytes = size_t{8} << 20;  // bytes a ranged read asks for (the pipeline's own)
  double seconds = 2;                  // each throughput measure stops after this long ...
  size_t max_bytes = size_t{256} << 20;  // ... or after this many bytes, whichever first
  int connections = 8;                 // readers at once for the "many" measure
};

struct NetworkProbe {
  double latency_ms = 0;            // median time of a 4 KiB ranged read
  double one_connection_mb_per_s = 0;
  double many_connections_mb_per_s = 0;
  int connections = 0;              // readers used for the "many" measure
  std::string error;                // "": measured; else why not (the first read's error)
};

// Measures `shards` (URLs or paths; the first one for latency and one connection, all of
// them round-robin for several connections, each reader from its own offset). Never throws:
// a failure is NetworkProbe::error.
NetworkProbe ProbeNetworkStore(const std::vector<std::string>& shards, const NetworkProbeOptions& options = {});

}  // namespace imgpipe::env
