// Run-time tuning of parallelism and buffer sizes, as tf.data's AUTOTUNE: stages
// given kAutotune register a knob; a background thread watches how long the consumer
// waits and how busy each stage is, and moves the knobs within the pipeline's CPU
// budget (threads) and RAM budget (buffered bytes).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/stats.h"

namespace imgpipe::pipeline {

// One tunable value: a stage's thread count or buffer size.
struct Knob {
  enum class Kind { kParallelism, kBuffer };
  Kind kind = Kind::kParallelism;
  std::string name;
  int64_t min = 1;
  int64_t max = 1;
  std::atomic<int64_t> value{1};
  StageStats* stats = nullptr;   // the stage's statistics (its utilisation)
  std::atomic<uint64_t> element_bytes{0};  // buffers: bytes per element, for the RAM budget (set by the stage)
};

// A knob's name and value at one moment, and the bytes a buffer knob holds at that value.
struct KnobSnapshot {
  std::string name;
  int64_t value = 0;
  uint64_t bytes = 0;  // value x element_bytes for a buffer, 0 for parallelism
};

// Bytes of physical memory (sysconf), for the default RAM budget.
uint64_t PhysicalMemoryBytes();

class Autotuner {
 public:
  // `consumer` is the root stage's statistics (its output_wait_ns is the time the
  // consumer waited). Knob values stay within cpu_budget threads in total and
  // ram_budget_bytes of buffers.
  Autotuner(int cpu_budget, uint64_t ram_budget_bytes);
  ~Autotuner();

  // Registers a knob starting at `initial`; the returned pointer stays valid for the
  // tuner's life. Knobs of stages whose iterator is gone are left alone.
  Knob* Register(Knob::Kind kind, const std::string& name, int64_t min, int64_t max,
                 int64_t initial, StageStats* stats);
  // The knob named `name`, registered as Register would by the first call and returned
  // as it is by later ones: for a value several iterators share, such as the read-ahead
  // of every file read from a URL (each adds its bytes per unit to element_bytes while
  // it reads, and takes them off after).
  Knob* Shared(Knob::Kind kind, const std::string& name, int64_t min, int64_t max, int64_t initial);
  void SetConsumer(StageStats* consumer);
  // Starts the background thread (period: 50 ms). Idempotent.
  void Start();

  // Every knob as it is now, in the order registered.
  std::vector<KnobSnapshot> Snapshot();

  int cpu_budget() const { return cpu_budget_; }
  uint64_t ram_budget_bytes() const { return ram_budget_bytes_; }

  // One tuning step from counters observed over `interval_s` (exposed for tests).
  void Step(double interval_s);

 private:
  void Loop();
  // Register's work, with mu_ held.
  Knob* AddKnobLocked(Knob::Kind kind, const std::string& name, int64_t min, int64_t max, int64_t initial,
                      StageStats* stats);

  const int cpu_budget_;
  const uint64_t ram_budget_bytes_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Knob>> knobs_;  // guarded by mu_
  std::vector<uint64_t> last_busy_ns_;        // guarded by mu_, per knob
  StageStats* consumer_ = nullptr;            // guarded by mu_
  uint64_t last_consumer_wait_ns_ = 0;        // guarded by mu_
  bool stopping_ = false;                     // guarded by mu_
  std::thread thread_;
};

}  // namespace imgpipe::pipeline
