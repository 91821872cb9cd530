#include "pipeline/stats.h"

#include <gtest/gtest.h>

#include "pipeline/autotune.h"

namespace imgpipe::pipeline {
namespace {

StageSnapshot Stage(const std::string& name, int depth, uint64_t busy_ms, int64_t threads,
                    uint64_t output_wait_ms = 0) {
  StageSnapshot s;
  s.name = name;
  s.key = std::to_string(depth) + "." + name;
  s.depth = depth;
  s.elements = 1000;
  s.busy_ns = busy_ms * 1'000'000;
  s.output_wait_ns = output_wait_ms * 1'000'000;
  s.parallelism = threads;
  return s;
}

TEST(BottleneckReport, NamesTheSaturatedStage) {
  // One second: the consumer-facing prefetch waited 400 ms; map's 2 threads were busy
  // 1.9 s of their 2 s; the reader 100 ms.
  std::vector<StageSnapshot> before = {Stage("prefetch", 0, 0, 1), Stage("map(decode)", 1, 0, 2),
                                       Stage("tfrecord", 2, 0, 1)};
  std::vector<StageSnapshot> after = {Stage("prefetch", 0, 10, 1, 400),
                                      Stage("map(decode)", 1, 1900, 2), Stage("tfrecord", 2, 100, 1)};
  std::string report = BottleneckReport(before, after, 1.0);
  EXPECT_NE(report.find("map(decode) is the bottleneck"), std::string::npos) << report;
  EXPECT_NE(report.find("95%"), std::string::npos) << report;
  EXPECT_NE(report.find("waits 40%"), std::string::npos) << report;
}

TEST(BottleneckReport, SaysWhenThePipelineKeepsUp) {
  std::vector<StageSnapshot> before = {Stage("prefetch", 0, 0, 1), Stage("map", 1, 0, 2)};
  std::vector<StageSnapshot> after = {Stage("prefetch", 0, 1, 1, 0), Stage("map", 1, 600, 2)};
  EXPECT_NE(BottleneckReport(before, after, 1.0).find("keeps up"), std::string::npos);
}

TEST(BottleneckReport, StarvedWithoutASaturatedStage) {
  std::vector<StageSnapshot> before = {Stage("prefetch", 0, 0, 1), Stage("read", 1, 0, 1)};
  std::vector<StageSnapshot> after = {Stage("prefetch", 0, 1, 1, 700), Stage("read", 1, 200, 1)};
  EXPECT_NE(BottleneckReport(before, after, 1.0).find("starved"), std::string::npos);
}

TEST(BottleneckReport, SaysWhenOtherProcessesTakeTheCores) {
  std::vector<StageSnapshot> before = {Stage("prefetch", 0, 0, 1), Stage("map", 1, 0, 2)};
  std::vector<StageSnapshot> after = {Stage("prefetch", 0, 1, 1, 900), Stage("map", 1, 1100, 2)};
  std::string report = BottleneckReport(before, after, 1.0, 0.45);
  EXPECT_NE(report.find("other processes"), std::string::npos) << report;
  EXPECT_EQ(BottleneckReport(before, after, 1.0).find("other processes"), std::string::npos);
}

TEST(StatsTable, OneLinePerStage) {
  StatsRegistry registry;
  registry.Register("map", 1, "0.batch/1.map");
  StageStats* a = registry.Register("batch", 0, "0.batch");
  EXPECT_EQ(registry.Register("batch", 0, "0.batch"), a);  // one per key
  a->elements = 50;
  auto snapshot = registry.Snapshot();
  ASSERT_EQ(snapshot.size(), 2u);
  EXPECT_EQ(snapshot[0].elements, 50u);
  std::string table = StatsTable({}, snapshot, 2.0);
  EXPECT_NE(table.find("batch"), std::string::npos);
  EXPECT_NE(table.find("  map"), std::string::npos);  // indented by depth
  EXPECT_NE(table.find("25.0"), std::string::npos);   // 50 elements in 2 s
}

TEST(Autotuner, AddsThreadsToTheBusyStageWhileTheConsumerWaits) {
  StageStats consumer, map;
  Autotuner tuner(4, 0);
  tuner.SetConsumer(&consumer);
  Knob* knob = tuner.Register(Knob::Kind::kParallelism, "map", 1, 4, 1, &map);
  for (int step = 0; step < 10; ++step) {
    consumer.output_wait_ns += 50'000'000;           // the consumer waits half the time
    map.busy_ns += 100'000'000 * knob->value.load();  // every map thread is busy
    tuner.Step(0.1);
  }
  EXPECT_EQ(knob->value.load(), 4);  // up to the CPU budget, not beyond
  for (int step = 0; step < 10; ++step) tuner.Step(0.1);  // idle, consumer never waits
  EXPECT_EQ(knob->value.load(), 1);
}

TEST(Autotuner, GrowsBuffersWithinTheRamBudget) {
  StageStats consumer, prefetch;
  Autotuner tuner(2, 1000);
  tuner.SetConsumer(&consumer);
  Knob* knob = tuner.Register(Knob::Kind::kBuffer, "prefetch", 1, 64, 1, &prefetch);
  knob->element_bytes = 100;
  for (int step = 0; step < 10; ++step) {
    consumer.output_wait_ns += 50'000'000;
    tuner.Step(0.1);
  }
  EXPECT_LE(knob->value.load() * 100, 1000);
  EXPECT_GE(knob->value.load(), 4);
}

// A shared knob is one knob for every caller; its bytes are what its users added to
// element_bytes, and it grows only while they fit the RAM budget.
TEST(Autotuner, SharedKnobIsOneAndGrowsWithinTheRamBudget) {
  for (const uint64_t budget : {uint64_t{100} << 20, uint64_t{60} << 20}) {
    SCOPED_TRACE(budget);
    StageStats consumer;
    Autotuner tuner(2, budget);
    tuner.SetConsumer(&consumer);
    Knob* knob = tuner.Shared(Knob::Kind::kBuffer, "read_ahead", 1, 4, 2);
    EXPECT_EQ(tuner.Shared(Knob::Kind::kBuffer, "read_ahead", 1, 4, 2), knob);
    knob->element_bytes += uint64_t{8} << 20;  // three readers of 8 MiB pieces
    knob->element_bytes += uint64_t{16} << 20;
    for (int step = 0; step < 5; ++step) {
      consumer.output_wait_ns += 50'000'000;
      tuner.Step(0.1);
    }
    // 2 pieces x 24 MiB = 48 MiB held; 4 need 96 MiB.
    EXPECT_EQ(knob->value.load(), budget >= (uint64_t{96} << 20) ? 4 : 2);
    const std::vector<KnobSnapshot> knobs = tuner.Snapshot();
    ASSERT_EQ(knobs.size(), 1u);
    EXPECT_EQ(knobs[0].name, "read_ahead");
    EXPECT_EQ(knobs[0].bytes, static_cast<uint64_t>(knob->value.load()) * (uint64_t{24} << 20));
  }
}

}  // namespace
}  // namespace imgpipe::pipeline
