#include "pipeline/prefetch_dataset.h"

#include <gtest/gtest.h>

#include "pipeline/map_dataset.h"
#include "pipeline/pipeline_test_util.h"

namespace imgpipe::pipeline {
namespace {

TEST(PrefetchDataset, SameElementsInOrder) {
  auto input = MakeVectorDataset(NumberedStrings(100));
  for (int buffer : {1, 3, kAutotune}) {
    EXPECT_EQ(Collect(Prefetch<std::string>(input, buffer)), NumberedStrings(100));
  }
}

TEST(PrefetchDataset, RunsAheadOfTheConsumer) {
  auto input = MakeVectorDataset(NumberedStrings(100));
  auto it = Prefetch<std::string>(input, 8)->MakeIterator(MakeTestContext());
  EXPECT_EQ(*it->Next(), "e0");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (input->next_calls() < 9 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(input->next_calls(), 9);  // 1 consumed + 8 buffered, and no more
}

TEST(PrefetchDataset, SaveRestoreAtEveryCut) {
  CheckSaveRestoreAtEveryCut(
      [] { return Prefetch<std::string>(MakeVectorDataset(NumberedStrings(30)), 4); }, 30);
  // Behind a parallel map, as pipelines use it.
  CheckSaveRestoreAtEveryCut(
      [] {
        auto map = Map<std::string, std::string>(
            MakeVectorDataset(NumberedStrings(30)),
            [](std::string&& s, const MapContext& c) { return s + std::to_string(c.seed % 97); }, 3);
        return Prefetch<std::string>(map, 2);
      },
      30);
}

TEST(PrefetchDataset, ErrorsArriveAfterTheElementsBeforeThem) {
  auto input = std::make_shared<GeneratorDataset<std::string>>(100, [](uint64_t, size_t i) {
    if (i == 5) throw DataError("f", 9, "bad");
    return std::to_string(i);
  });
  auto it = Prefetch<std::string>(input, 4)->MakeIterator(MakeTestContext());
  for (int i = 0; i < 5; ++i) EXPECT_EQ(*it->Next(), std::to_string(i));
  EXPECT_THROW(it->Next(), DataError);
}

TEST(PrefetchDataset, DestroyedMidStreamWithoutHanging) {
  auto input = std::make_shared<GeneratorDataset<std::string>>(-1, [](uint64_t, size_t i) {
    return std::to_string(i);
  });
  for (int i = 0; i < 20; ++i) {
    auto it = Prefetch<std::string>(input, 3)->MakeIterator(MakeTestContext());
    Drain(*it, 2);
  }
  auto unused = Prefetch<std::string>(input, 3)->MakeIterator(MakeTestContext());
}

}  // namespace
}  // namespace imgpipe::pipeline
