#include "env/network_probe.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>

#include "io/storage.h"
#include "util/error.h"

namespace imgpipe::env {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Reads `sources` with `readers` threads (reader i on source i mod sources.size(), the
// readers of one source starting at offsets spread over it, so none asks for the same bytes)
// in pieces of options.piece_bytes until options.seconds or options.max_bytes; MB/s.
// Throws the first reader's error.
double MeasureThroughput(const std::vector<std::unique_ptr<ByteSource>>& sources, int readers,
                         const NetworkProbeOptions& options) {
  std::atomic<uint64_t> total{0};
  std::mutex mu;
  std::string error;  // guarded by mu
  const Clock::time_point start = Clock::now();
  std::vector<std::thread> threads;
  for (int i = 0; i < readers; ++i) {
    threads.emplace_back([&, i] {
      const ByteSource& source = *sources[i % sources.size()];
      std::string piece(options.piece_bytes, '\0');
      const size_t per_source = (readers + sources.size() - 1) / sources.size();
      uint64_t offset = source.size() / per_source * (i / sources.size());
      try {
        while (SecondsSince(start) < options.seconds && total.load() < options.max_bytes) {
          if (offset >= source.size()) offset = 0;
          const size_t n = source.Read(offset, piece.data(), piece.size());
          if (n == 0) break;
          offset += n;
          total += n;
        }
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(mu);
        if (error.empty()) error = e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  if (!error.empty()) throw Error(error);
  return static_cast<double>(total.load()) / 1e6 / std::max(SecondsSince(start), 1e-9);
}

}  // namespace

NetworkProbe ProbeNetworkStore(const std::vector<std::string>& shards, const NetworkProbeOptions& options) {
  NetworkProbe probe;
  if (shards.empty()) {
    probe.error = "no shards to read";
    return probe;
  }
  try {
    // 1. Latency: small ranged reads spread over the first shard (4 KiB: s3rver answers
    // "bytes=0-0" with the whole object).
    std::vector<std::unique_ptr<ByteSource>> sources;
    sources.push_back(OpenByteSource(shards[0]));
    const ByteSource& first = *sources[0];
    std::vector<double> ms;
    for (int i = 0; i < options.latency_reads; ++i) {
      char bytes[4096];
      const uint64_t offset = first.size() * i / options.latency_reads;
      const Clock::time_point start = Clock::now();
      first.Read(offset, bytes, sizeof(bytes));
      ms.push_back(SecondsSince(start) * 1e3);
    }
    std::sort(ms.begin(), ms.end());
    probe.latency_ms = ms.empty() ? 0 : ms[ms.size() / 2];
    // 2. One connection, then several: the shards round-robin.
    probe.one_connection_mb_per_s = MeasureThroughput(sources, 1, options);
    const size_t opened = std::min<size_t>(shards.size(), static_cast<size_t>(options.connections));
    for (size_t i = 1; i < opened; ++i) sources.push_back(OpenByteSource(shards[i]));
    probe.connections = options.connections;
    probe.many_connections_mb_per_s = MeasureThroughput(sources, options.connections, options);
  } catch (const std::exception& e) {
    probe.error = e.what();
  }
  return probe;
}

}  // namespace imgpipe::env
