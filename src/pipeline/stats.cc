#include "pipeline/stats.h"

#include <algorithm>
#include <cstdio>

namespace imgpipe::pipeline {
namespace {

// The change of one stage's counters between two snapshots.
struct StageDelta {
  const StageSnapshot* after;
  double elements, bytes, busy_s, input_wait_s, output_wait_s, errors;
};

std::vector<StageDelta> Deltas(const std::vector<StageSnapshot>& before,
                               const std::vector<StageSnapshot>& after) {
  std::vector<StageDelta> out;
  for (size_t i = 0; i < after.size(); ++i) {
    const StageSnapshot& a = after[i];
    const StageSnapshot b = MatchingStage(a, before);
    auto d = [&](uint64_t StageSnapshot::*field) { return static_cast<double>(a.*field - b.*field); };
    out.push_back({&a, d(&StageSnapshot::elements), d(&StageSnapshot::bytes),
                   d(&StageSnapshot::busy_ns) / 1e9, d(&StageSnapshot::input_wait_ns) / 1e9,
                   d(&StageSnapshot::output_wait_ns) / 1e9, d(&StageSnapshot::errors)});
  }
  return out;
}

// Busy fraction of a stage's threads: its busy time over (threads x wall time).
double Utilisation(const StageDelta& d, double wall_seconds) {
  double threads = std::max<int64_t>(1, d.after->parallelism);
  return wall_seconds > 0 ? d.busy_s / (threads * wall_seconds) : 0;
}

}  // namespace

StageSnapshot MatchingStage(const StageSnapshot& after, const std::vector<StageSnapshot>& before) {
  for (const StageSnapshot& b : before) {
    if (b.key == after.key && b.name == after.name && b.depth == after.depth) return b;
  }
  return StageSnapshot{};
}

std::vector<StageSnapshot> AddStages(const std::vector<StageSnapshot>& earlier,
                                     const std::vector<StageSnapshot>& later) {
  std::vector<StageSnapshot> sum = later;
  for (StageSnapshot& s : sum) {
    const StageSnapshot e = MatchingStage(s, earlier);
    s.elements += e.elements;
    s.bytes += e.bytes;
    s.busy_ns += e.busy_ns;
    s.input_wait_ns += e.input_wait_ns;
    s.output_wait_ns += e.output_wait_ns;
    s.errors += e.errors;
    s.stand_ins += e.stand_ins;
    s.warnings += e.warnings;
  }
  return sum;
}

StageStats* StatsRegistry::Register(const std::string& name, int depth, const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!key.empty()) {
    for (size_t i = 0; i < keys_.size(); ++i) {
      if (keys_[i] == key) return stages_[i].get();
    }
  }
  keys_.push_back(key);
  stages_.push_back(std::make_unique<StageStats>());
  stages_.back()->name = name;
  stages_.back()->depth = depth;
  return stages_.back().get();
}

std::vector<StageSnapshot> StatsRegistry::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<StageSnapshot> out;
  for (size_t i = 0; i < stages_.size(); ++i) {
    const auto& s = stages_[i];
    out.push_back({s->name, keys_[i], s->depth, s->elements.load(), s->bytes.load(), s->busy_ns.load(),
                   s->input_wait_ns.load(), s->output_wait_ns.load(), s->errors.load(),
                   s->buffer_fill.load(), s->buffer_capacity.load(), s->parallelism.load(),
                   s->stand_ins.load(), s->warnings.load()});
  }
  // Keys are paths ("0.prefetch/1.batch/2.map"): sorted, they list each stage before
  // its inputs. Stages without a key keep their registration order, after the rest.
  std::stable_sort(out.begin(), out.end(), [](const StageSnapshot& a, const StageSnapshot& b) {
    if (a.key.empty() != b.key.empty()) return b.key.empty();
    return a.key < b.key;
  });
  return out;
}

std::string StatsTable(const std::vector<StageSnapshot>& before,
                       const std::vector<StageSnapshot>& after, double wall_seconds) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof(line), "%-28s %10s %10s %8s %8s %8s %7s %9s %7s\n", "stage",
                "elem/s", "MB/s", "threads", "busy", "in-wait", "errors", "buffer", "");
  out += line;
  for (const StageDelta& d : Deltas(before, after)) {
    const StageSnapshot& s = *d.after;
    std::string name = std::string(static_cast<size_t>(s.depth) * 2, ' ') + s.name;
    char buffer[32] = "-";
    if (s.buffer_capacity > 0) {
      std::snprintf(buffer, sizeof(buffer), "%lld/%lld", static_cast<long long>(s.buffer_fill),
                    static_cast<long long>(s.buffer_capacity));
    }
    double wall = wall_seconds > 0 ? wall_seconds : 1e-9;
    std::snprintf(line, sizeof(line), "%-28s %10.1f %10.1f %8lld %7.0f%% %7.0f%% %7.0f %9s\n",
                  name.c_str(), d.elements / wall, d.bytes / wall / 1e6,
                  static_cast<long long>(s.parallelism), 100 * Utilisation(d, wall),
                  100 * d.input_wait_s / wall, d.errors, buffer);
    out += line;
  }
  return out;
}

std::string BottleneckReport(const std::vector<StageSnapshot>& before,
                             const std::vector<StageSnapshot>& after, double wall_seconds,
                             double cpu_utilization) {
  std::vector<StageDelta> deltas = Deltas(before, after);
  if (deltas.empty() || wall_seconds <= 0) return "no statistics yet";
  // The consumer-facing stage (depth 0) tells whether the consumer waited at all.
  const StageDelta* root = &deltas[0];
  for (const StageDelta& d : deltas) {
    if (d.after->depth < root->after->depth) root = &d;
  }
  double consumer_wait = root->output_wait_s / wall_seconds;
  // The bottleneck is the stage whose threads are busiest: each stage's own work
  // (busy time, not time waiting on its input) over the threads it has.
  const StageDelta* worst = nullptr;
  for (const StageDelta& d : deltas) {
    if (!worst || Utilisation(d, wall_seconds) > Utilisation(*worst, wall_seconds)) worst = &d;
  }
  char text[512];
  double u = Utilisation(*worst, wall_seconds);
  if (consumer_wait < 0.05) {
    std::snprintf(text, sizeof(text),
                  "the input pipeline keeps up: the consumer waited %.0f%% of the time; the "
                  "busiest stage is %s (%.0f%% busy on %lld thread(s))",
                  100 * consumer_wait, worst->after->name.c_str(), 100 * u,
                  static_cast<long long>(worst->after->parallelism));
  } else if (u > 0.8) {
    std::snprintf(text, sizeof(text),
                  "%s is the bottleneck: its %lld thread(s) are busy %.0f%% of the time while "
                  "the consumer waits %.0f%% of the time; more CPU threads (or cheaper work in "
                  "this stage) would help",
                  worst->after->name.c_str(), static_cast<long long>(worst->after->parallelism),
                  100 * u, 100 * consumer_wait);
  } else if (cpu_utilization >= 0 && u > 0.4 && cpu_utilization < 0.7) {
    std::snprintf(text, sizeof(text),
                  "%s limits throughput (busy %.0f%%) while this process got only %.0f%% of its "
                  "CPU budget and the consumer waits %.0f%% of the time: other processes are "
                  "taking the cores",
                  worst->after->name.c_str(), 100 * u, 100 * cpu_utilization, 100 * consumer_wait);
  } else {
    std::snprintf(text, sizeof(text),
                  "no stage is saturated (busiest: %s at %.0f%%) but the consumer waits %.0f%% "
                  "of the time: the pipeline is starved by I/O or too little parallelism",
                  worst->after->name.c_str(), 100 * u, 100 * consumer_wait);
  }
  return text;
}

}  // namespace imgpipe::pipeline
