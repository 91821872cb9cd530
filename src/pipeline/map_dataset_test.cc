#include "pipeline/map_dataset.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "pipeline/pipeline_test_util.h"

namespace imgpipe::pipeline {
namespace {

// "e<i>" -> "e<i>:<seed-derived number>" after a little work, so results finish out of
// order on several threads and carry the per-element seed.
MapFunction<std::string, std::string> Tag() {
  return [](std::string&& s, const MapContext& c) {
    std::this_thread::sleep_for(std::chrono::microseconds((c.seed % 7) * 100));
    return s + ":" + std::to_string(c.seed % 1000);
  };
}


TEST(MapDataset, SameOrderForEveryThreadCount) {
  auto sequential = ElementViews(Collect(Map<std::string, std::string>(Numbers(200), Tag(), 1)));
  ASSERT_EQ(sequential.size(), 200u);
  EXPECT_EQ(sequential[3].substr(0, 3), "e3:");
  for (int threads : {2, 4, 7, kAutotune}) {
    EXPECT_EQ(ElementViews(Collect(Map<std::string, std::string>(Numbers(200), Tag(), threads))),
              sequential)
        << threads << " threads";
  }
}

TEST(MapDataset, NonDeterministicGivesTheSameElements) {
  PipelineOptions options;
  options.deterministic = false;
  auto out = Collect(Map<std::string, std::string>(Numbers(300), Tag(), 4),
                     std::numeric_limits<size_t>::max(), options);
  auto reference = Collect(Map<std::string, std::string>(Numbers(300), Tag(), 1));
  std::sort(out.begin(), out.end());
  std::sort(reference.begin(), reference.end());
  EXPECT_EQ(out, reference);
}

MapFunction<std::string, std::string> FailEveryTenth() {
  return [](std::string&& s, const MapContext& c) {
    if (c.index % 10 == 3) throw DataError("file.tfrecord", c.index * 100, "corrupt " + s);
    return s;
  };
}

TEST(MapDataset, BadElementsSkippedAndCounted) {
  for (int threads : {1, 3}) {
    auto ctx = MakeTestContext();
    auto it = Map<std::string, std::string>(Numbers(50), FailEveryTenth(), threads)->MakeIterator(ctx);
    auto out = Drain(*it);
    EXPECT_EQ(out.size(), 45u);
    EXPECT_EQ(std::count(out.begin(), out.end(), "e13"), 0);
    uint64_t errors = 0;
    for (auto& s : ctx.stats->Snapshot()) errors += s.errors;
    EXPECT_EQ(errors, 5u);
  }
}

TEST(MapDataset, FailPolicyThrowsAtTheBadElement) {
  PipelineOptions options;
  options.error_policy = ErrorPolicy::kFail;
  for (int threads : {1, 3}) {
    auto it = Map<std::string, std::string>(Numbers(50), FailEveryTenth(), threads)
                  ->MakeIterator(MakeTestContext(options));
    for (int i = 0; i < 3; ++i) EXPECT_EQ(*it->Next(), "e" + std::to_string(i));
    try {
      it->Next();
      FAIL() << "no error";
    } catch (const DataError& e) {
      EXPECT_EQ(e.offset(), 300u);
    }
  }
}

TEST(MapDataset, WorkerExceptionsReachTheCaller) {
  auto fn = [](std::string&& s, const MapContext& c) -> std::string {
    if (c.index == 17) throw std::runtime_error("boom");
    return s;
  };
  auto it = Map<std::string, std::string>(Numbers(100), fn, 4)->MakeIterator(MakeTestContext());
  EXPECT_THROW(Drain(*it), std::runtime_error);
}

TEST(MapDataset, InputExceptionsReachTheCaller) {
  auto input = std::make_shared<GeneratorDataset<std::string>>(100, [](uint64_t, size_t i) {
    if (i == 40) throw DataError("x", 1, "input broke");
    return std::to_string(i);
  });
  auto it = Map<std::string, std::string>(input, Tag(), 4)->MakeIterator(MakeTestContext());
  size_t seen = 0;
  try {
    while (it->Next()) ++seen;
    FAIL();
  } catch (const DataError&) {
  }
  EXPECT_EQ(seen, 40u);
}

TEST(MapDataset, SaveRestoreAtEveryCut) {
  for (int threads : {1, 4}) {
    SCOPED_TRACE(threads);
    CheckSaveRestoreAtEveryCut(
        [threads] { return Map<std::string, std::string>(Numbers(40), Tag(), threads); }, 40);
  }
}

TEST(MapDataset, RestoreWithAnotherThreadCount) {
  auto parallel = Map<std::string, std::string>(Numbers(60), Tag(), 4);
  auto it = parallel->MakeIterator(MakeTestContext());
  Drain(*it, 25);
  IteratorState state;
  it->Save(state);
  auto rest = Drain(*it);
  auto sequential = Map<std::string, std::string>(Numbers(60), Tag(), 1)->MakeIterator(MakeTestContext());
  sequential->Restore(IteratorState::Deserialize(state.Serialize()));
  EXPECT_EQ(Drain(*sequential), rest);
}

TEST(MapDataset, DestroyedMidStreamWithoutHanging) {
  auto input = std::make_shared<GeneratorDataset<std::string>>(-1, [](uint64_t, size_t i) {
    return std::to_string(i);
  });
  for (int i = 0; i < 20; ++i) {
    auto it = Map<std::string, std::string>(input, Tag(), 4)->MakeIterator(MakeTestContext());
    Drain(*it, 5);
  }
}

}  // namespace
}  // namespace imgpipe::pipeline
