#include "pipeline/repeat_take_dataset.h"

#include <gtest/gtest.h>

#include "pipeline/pipeline_test_util.h"

namespace imgpipe::pipeline {
namespace {

// Elements that name their epoch: "<epoch>:<index>".
std::shared_ptr<GeneratorDataset<std::string>> EpochNumbers(int64_t n) {
  return std::make_shared<GeneratorDataset<std::string>>(
      n, [](uint64_t epoch, size_t i) { return std::to_string(epoch) + ":" + std::to_string(i); });
}

TEST(RepeatTake, RepeatCountsPassesAndSetsTheEpoch) {
  EXPECT_EQ(Collect<std::string>(Repeat<std::string>(EpochNumbers(2), 3)),
            (std::vector<std::string>{"0:0", "0:1", "1:0", "1:1", "2:0", "2:1"}));
  EXPECT_TRUE(Collect<std::string>(Repeat<std::string>(EpochNumbers(2), 0)).empty());
  EXPECT_EQ(Collect<std::string>(Repeat<std::string>(EpochNumbers(3), 1)).size(), 3u);
}

TEST(RepeatTake, RepeatForeverWithTake) {
  auto source = EpochNumbers(3);
  std::vector<std::string> out = Collect(Take(Repeat<std::string>(source), 10));
  ASSERT_EQ(out.size(), 10u);
  EXPECT_EQ(out[9], "3:0");
  EXPECT_EQ(source->iterators_made(), 4);
}

TEST(RepeatTake, EmptyInputEndsTheRepeat) {
  auto source = EpochNumbers(0);
  EXPECT_TRUE(Collect<std::string>(Repeat<std::string>(source)).empty());
  EXPECT_LE(source->iterators_made(), 1);
}

TEST(RepeatTake, TakeStopsWithoutReadingFurther) {
  auto source = EpochNumbers(100);
  std::vector<std::string> out = Collect(Take<std::string>(source, 5));
  EXPECT_EQ(out, (std::vector<std::string>{"0:0", "0:1", "0:2", "0:3", "0:4"}));
  EXPECT_EQ(source->next_calls(), 5);
  EXPECT_EQ(Collect(Take<std::string>(EpochNumbers(3), 10)).size(), 3u);
  EXPECT_TRUE(Collect(Take<std::string>(EpochNumbers(3), 0)).empty());
  EXPECT_EQ(Collect(Take<std::string>(EpochNumbers(3), -1)).size(), 3u);
}

TEST(RepeatTake, SaveRestoreAtEveryCut) {
  CheckSaveRestoreAtEveryCut([] { return Repeat<std::string>(EpochNumbers(4), 3); }, 20);
  CheckSaveRestoreAtEveryCut([] { return Take(Repeat<std::string>(EpochNumbers(3)), 11); }, 20);
  CheckSaveRestoreAtEveryCut([] { return Repeat(Take<std::string>(EpochNumbers(5), 2), 4); }, 20);
  CheckSaveRestoreAtEveryCut([] { return Repeat<std::string>(EpochNumbers(0)); }, 5);
}

TEST(RepeatTake, StateKeysArePerStage) {
  auto ctx = MakeTestContext();
  auto it = Take(Repeat<std::string>(EpochNumbers(3), 2), 4)->MakeIterator(ctx);
  Drain(*it, 4);
  IteratorState state;
  it->Save(state);
  EXPECT_EQ(state.GetInt("0.test:taken"), 4);
  EXPECT_EQ(state.GetInt("0.test/1.repeat:epoch"), 1);
  EXPECT_EQ(state.GetInt("0.test/1.repeat/2.generator:index"), 1);
}

TEST(RepeatTake, Statistics) {
  auto ctx = MakeTestContext();
  auto it = Repeat<std::string>(EpochNumbers(2), 2)->MakeIterator(ctx);
  Drain(*it);
  for (const StageSnapshot& s : ctx.stats->Snapshot()) {
    if (s.name == "repeat") {
      EXPECT_EQ(s.elements, 4u);
    }
  }
}

}  // namespace
}  // namespace imgpipe::pipeline
