#include "pipeline/autotune.h"

#include <algorithm>
#include <chrono>

#include <unistd.h>

namespace imgpipe::pipeline {

uint64_t PhysicalMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page_size = sysconf(_SC_PAGESIZE);
  return pages > 0 && page_size > 0 ? static_cast<uint64_t>(pages) * page_size : 0;
}

Autotuner::Autotuner(int cpu_budget, uint64_t ram_budget_bytes)
    : cpu_budget_(std::max(1, cpu_budget)), ram_budget_bytes_(ram_budget_bytes) {}

Autotuner::~Autotuner() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Knob* Autotuner::Register(Knob::Kind kind, const std::string& name, int64_t min, int64_t max,
                          int64_t initial, StageStats* stats) {
  std::lock_guard<std::mutex> lock(mu_);
  return AddKnobLocked(kind, name, min, max, initial, stats);
}

Knob* Autotuner::Shared(Knob::Kind kind, const std::string& name, int64_t min, int64_t max, int64_t initial) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const std::unique_ptr<Knob>& knob : knobs_) {
    if (knob->name == name && knob->kind == kind) return knob.get();
  }
  return AddKnobLocked(kind, name, min, max, initial, nullptr);
}

Knob* Autotuner::AddKnobLocked(Knob::Kind kind, const std::string& name, int64_t min, int64_t max,
                               int64_t initial, StageStats* stats) {
  auto knob = std::make_unique<Knob>();
  knob->kind = kind;
  knob->name = name;
  knob->min = min;
  knob->max = std::max(min, max);
  knob->value = std::clamp(initial, knob->min, knob->max);
  knob->stats = stats;
  knobs_.push_back(std::move(knob));
  last_busy_ns_.push_back(stats ? stats->busy_ns.load() : 0);
  return knobs_.back().get();
}

std::vector<KnobSnapshot> Autotuner::Snapshot() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<KnobSnapshot> out;
  for (const std::unique_ptr<Knob>& k : knobs_) {
    const int64_t value = k->value.load();
    const uint64_t bytes = k->kind == Knob::Kind::kBuffer ? static_cast<uint64_t>(value) * k->element_bytes.load() : 0;
    out.push_back({k->name, value, bytes});
  }
  return out;
}

void Autotuner::SetConsumer(StageStats* consumer) {
  std::lock_guard<std::mutex> lock(mu_);
  consumer_ = consumer;
  last_consumer_wait_ns_ = consumer ? consumer->output_wait_ns.load() : 0;
}

void Autotuner::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
}

void Autotuner::Loop() {
  constexpr auto kPeriod = std::chrono::milliseconds(50);
  auto last = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, kPeriod, [this] { return stopping_; })) {
    auto now = std::chrono::steady_clock::now();
    double interval = std::chrono::duration<double>(now - last).count();
    last = now;
    lock.unlock();
    Step(interval);
    lock.lock();
  }
}

void Autotuner::Step(double interval_s) {
  std::lock_guard<std::mutex> lock(mu_);
  if (interval_s <= 0 || knobs_.empty()) return;
  // 1. Did the consumer wait for elements in this interval?
  double consumer_wait = 0;
  if (consumer_) {
    uint64_t wait = consumer_->output_wait_ns.load();
    consumer_wait = (wait - last_consumer_wait_ns_) / 1e9 / interval_s;
    last_consumer_wait_ns_ = wait;
  }
  // 2. Each knob's stage utilisation: busy time over (threads x interval).
  int64_t threads = 0;
  uint64_t buffered_bytes = 0;
  std::vector<double> utilisation(knobs_.size(), 0);
  for (size_t i = 0; i < knobs_.size(); ++i) {
    Knob& k = *knobs_[i];
    if (k.stats) {
      uint64_t busy = k.stats->busy_ns.load();
      double workers = k.kind == Knob::Kind::kParallelism ? std::max<int64_t>(1, k.value) : 1;
      utilisation[i] = (busy - last_busy_ns_[i]) / 1e9 / (workers * interval_s);
      last_busy_ns_[i] = busy;
    }
    if (k.kind == Knob::Kind::kParallelism) threads += k.value;
    if (k.kind == Knob::Kind::kBuffer) buffered_bytes += k.value * k.element_bytes;
  }
  // 3. The consumer waits: give the busiest parallel stage one more thread while the
  //    CPU budget allows, and grow buffers that are drained within the RAM budget.
  //    The consumer never waits: take a thread from stages that idle, freeing CPU.
  if (consumer_wait > 0.02) {
    size_t busiest = knobs_.size();
    for (size_t i = 0; i < knobs_.size(); ++i) {
      const Knob& k = *knobs_[i];
      if (k.kind != Knob::Kind::kParallelism || k.value >= k.max) continue;
      if (busiest == knobs_.size() || utilisation[i] > utilisation[busiest]) busiest = i;
    }
    if (busiest < knobs_.size() && threads < cpu_budget_ && utilisation[busiest] > 0.5) {
      ++knobs_[busiest]->value;
    }
    for (auto& k : knobs_) {
      if (k->kind != Knob::Kind::kBuffer || k->value >= k->max) continue;
      uint64_t extra = k->element_bytes * static_cast<uint64_t>(k->value);
      if (ram_budget_bytes_ == 0 || buffered_bytes + extra <= ram_budget_bytes_) {
        k->value = std::min(k->max, k->value * 2);
        buffered_bytes += extra;
      }
    }
  } else if (consumer_wait == 0) {
    for (size_t i = 0; i < knobs_.size(); ++i) {
      Knob& k = *knobs_[i];
      if (k.kind == Knob::Kind::kParallelism && k.value > k.min && utilisation[i] < 0.3) --k.value;
    }
  }
}

}  // namespace imgpipe::pipeline
