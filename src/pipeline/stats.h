// Per-stage statistics and the bottleneck report.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace imgpipe::pipeline {

// Counters one stage updates as it works; all atomic, read at any time.
struct StageStats {
  std::string name;  // e.g. "tfrecord", "shuffle", "map(train_preset)"
  int depth = 0;     // 0 = the stage the consumer calls; larger = further upstream
  std::atomic<uint64_t> elements{0};       // elements produced
  std::atomic<uint64_t> bytes{0};          // their bytes (ElementBytes)
  std::atomic<uint64_t> busy_ns{0};        // thread-time spent on this stage's own work
  std::atomic<uint64_t> input_wait_ns{0};  // time spent blocked on its input
  std::atomic<uint64_t> output_wait_ns{0}; // time its consumer spent blocked on it
  std::atomic<uint64_t> errors{0};         // elements skipped under the skip policy
  std::atomic<uint64_t> stand_ins{0};      // samples put in the place of skipped ones
  std::atomic<uint64_t> warnings{0};       // elements decoded despite warnings (decode_warnings.h)
  std::atomic<int64_t> buffer_fill{0};     // elements buffered now (buffering stages)
  std::atomic<int64_t> buffer_capacity{0};
  std::atomic<int64_t> parallelism{1};     // threads working now

  // Adds the time since `start` to `counter`.
  static void AddSince(std::atomic<uint64_t>& counter, std::chrono::steady_clock::time_point start) {
    counter += std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now() - start).count();
  }
};

// A plain-value copy of StageStats, for reports.
struct StageSnapshot {
  std::string name;
  std::string key;  // the stage's place in the pipeline (its state prefix)
  int depth = 0;
  uint64_t elements = 0, bytes = 0, busy_ns = 0, input_wait_ns = 0, output_wait_ns = 0, errors = 0;
  int64_t buffer_fill = 0, buffer_capacity = 0, parallelism = 1;
  uint64_t stand_ins = 0, warnings = 0;
};

// The stages of one iterator, registered as the iterator tree is built.
class StatsRegistry {
 public:
  // The StageStats of the stage at `key` (its state prefix), made on first use, so a
  // stage's counters add up over the passes of a Repeat; valid while the registry
  // lives. An empty key always makes a new one.
  StageStats* Register(const std::string& name, int depth, const std::string& key = "");
  // Every stage, in pipeline order (the consumer's stage first, each stage followed by
  // its inputs).
  std::vector<StageSnapshot> Snapshot() const;

 private:
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<StageStats>> stages_;  // guarded by mu_
  std::vector<std::string> keys_;                    // guarded by mu_, one per stage
};

// The snapshot of `after`'s stage in `before` (same key, name and depth), or an empty
// one (all counters zero) when the stage did not exist yet.
StageSnapshot MatchingStage(const StageSnapshot& after, const std::vector<StageSnapshot>& before);

// The counters of two passes added stage by stage: `later`'s stages, in its order, each
// with its MatchingStage in `earlier` added (gauges: parallelism and buffers, `later`'s).
std::vector<StageSnapshot> AddStages(const std::vector<StageSnapshot>& earlier,
                                     const std::vector<StageSnapshot>& later);

// Names the stage that limits throughput, in plain words, from two snapshots taken
// `wall_seconds` apart, e.g. "map(train_preset) is the bottleneck: its 2 threads are
// busy 97% of the time while the consumer waits 41% of the time; more CPU would help".
// `cpu_utilization` (0..1 of the cores the pipeline may use; negative: unknown) tells
// a starved pipeline (I/O, too few threads) from one whose cores are taken by others.
std::string BottleneckReport(const std::vector<StageSnapshot>& before,
                             const std::vector<StageSnapshot>& after, double wall_seconds,
                             double cpu_utilization = -1);

// A table of per-stage statistics between two snapshots, one line per stage.
std::string StatsTable(const std::vector<StageSnapshot>& before,
                       const std::vector<StageSnapshot>& after, double wall_seconds);

}  // namespace imgpipe::pipeline
