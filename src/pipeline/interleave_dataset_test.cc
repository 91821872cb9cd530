#include "pipeline/interleave_dataset.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "pipeline/pipeline_test_util.h"
#include "pipeline/source_datasets.h"
#include "pipeline/source_test_util.h"
#include "util/error.h"

namespace imgpipe::pipeline {
namespace {

using StringList = std::vector<std::string>;

// "a3" -> a dataset of "a0", "a1", "a2": the letter, then the count.
DatasetPtr<std::string> Expand(const std::string& element) {
  std::string letter = element.substr(0, 1);
  size_t count = std::stoul(element.substr(1));
  return MakeVectorDataset(NumberedStrings(count, letter), "expand");
}

// As Expand, but each element takes a little time that differs by slot and element,
// so that worker threads finish in varying order.
DatasetPtr<std::string> SlowExpand(const std::string& element) {
  std::string letter = element.substr(0, 1);
  int64_t count = std::stol(element.substr(1));
  return std::make_shared<GeneratorDataset<std::string>>(count, [letter](uint64_t, size_t i) {
    std::this_thread::sleep_for(std::chrono::microseconds(((letter[0] * 7 + i * 13) % 5) * 200));
    return letter + std::to_string(i);
  });
}

const StringList kInput = {"a3", "b1", "c4", "d2", "e0", "f3"};

DatasetPtr<std::string> MakeInterleave(const StringList& input, int cycle, int block, int parallelism,
                                       DatasetPtr<std::string> (*fn)(const std::string&) = Expand) {
  return Interleave<std::string, std::string>(MakeVectorDataset(input), fn, cycle, block,
                                              parallelism);
}

PipelineOptions NonDeterministic() {
  PipelineOptions options;
  options.deterministic = false;
  return options;
}

StringList Sorted(StringList v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(InterleaveDatasetTest, OrderMatchesHandComputedCycles) {
  // cycle 2, block 1: slots {a, b}; b ends and c takes its place, then d replaces a,
  // e is empty, f comes last.
  const StringList cycle2 = {"a0", "b0", "a1", "a2", "c0", "c1", "d0",
                          "c2", "d1", "c3", "f0", "f1", "f2"};
  // cycle 3, block 2: slots {a, b, c}; b ends after one element, d replaces it; e
  // (empty) replaces a, f replaces e.
  const StringList cycle3 = {"a0", "a1", "b0", "c0", "c1", "a2", "d0",
                          "d1", "c2", "c3", "f0", "f1", "f2"};
  // cycle 1: a flat map.
  const StringList cycle1 = {"a0", "a1", "a2", "b0", "c0", "c1", "c2",
                          "c3", "d0", "d1", "f0", "f1", "f2"};
  for (int parallelism : {1, 2, 4, kAutotune}) {
    SCOPED_TRACE("parallelism " + std::to_string(parallelism));
    EXPECT_EQ(Collect(MakeInterleave(kInput, 2, 1, parallelism)), cycle2);
    EXPECT_EQ(Collect(MakeInterleave(kInput, 3, 2, parallelism)), cycle3);
    EXPECT_EQ(Collect(MakeInterleave(kInput, 1, 1, parallelism)), cycle1);
    EXPECT_EQ(Collect(MakeInterleave(kInput, 2, 1, parallelism, SlowExpand)), cycle2);
    // More slots than input elements, long blocks.
    EXPECT_EQ(Collect(MakeInterleave({"a2", "b3"}, 5, 2, parallelism)),
              (StringList{"a0", "a1", "b0", "b1", "b2"}));
    EXPECT_TRUE(Collect(MakeInterleave({}, 3, 1, parallelism)).empty());
    EXPECT_TRUE(Collect(MakeInterleave({"a0", "b0"}, 3, 1, parallelism)).empty());
  }
}

TEST(InterleaveDatasetTest, ParallelDeterministicEqualsSequentialOnTfRecordFiles) {
  std::vector<std::string> files =
      WriteRecordFolder(TestTempPath("interleave_files"), {7, 0, 12, 3, 9, 1, 15, 4, 6}, 0);
  auto make = [&](int parallelism) {
    return Interleave<std::string, Record>(
        ListFiles({DirName(files[0]) + "/*.tfrecord"}),
        [](const std::string& file) {
          return TfRecordFiles(MakeVectorDataset(StringList{file}, "file"));
        },
        4, 3, parallelism);
  };
  StringList sequential = ElementViews(Collect(make(1)));
  EXPECT_EQ(sequential.size(), 57u);
  for (int run = 0; run < 5; ++run) {
    EXPECT_EQ(ElementViews(Collect(make(4))), sequential);
    EXPECT_EQ(ElementViews(Collect(make(kAutotune))), sequential);
  }
  // Non-deterministic: the same records, in some order.
  EXPECT_EQ(Sorted(ElementViews(Collect(make(4), SIZE_MAX, NonDeterministic()))),
            Sorted(sequential));
  // State, with worker threads reading ahead.
  EXPECT_EQ(CheckSaveRestoreAtEveryCut([&] { return make(4); }, 100), sequential);
}

TEST(InterleaveDatasetTest, NonDeterministicGivesTheSameMultiset) {
  StringList want = Collect(MakeInterleave(kInput, 3, 2, 1));
  for (int run = 0; run < 5; ++run) {
    StringList got =
        Collect(MakeInterleave(kInput, 3, 2, 4, SlowExpand), SIZE_MAX, NonDeterministic());
    EXPECT_EQ(Sorted(got), Sorted(want));
  }
  // Parallelism 1 ignores the flag: the deterministic order.
  EXPECT_EQ(Collect(MakeInterleave(kInput, 3, 2, 1), SIZE_MAX, NonDeterministic()), want);
}

TEST(InterleaveDatasetTest, SaveRestoreAtEveryCut) {
  for (int parallelism : {1, 4}) {
    SCOPED_TRACE("parallelism " + std::to_string(parallelism));
    CheckSaveRestoreAtEveryCut([&] { return MakeInterleave(kInput, 2, 1, parallelism); }, 100);
    CheckSaveRestoreAtEveryCut(
        [&] { return MakeInterleave(kInput, 3, 2, parallelism, SlowExpand); }, 100);
  }
}

TEST(InterleaveDatasetTest, NonDeterministicSaveRestoreLosesAndRepeatsNothing) {
  StringList all = Sorted(Collect(MakeInterleave(kInput, 3, 2, 1)));
  for (size_t cut = 0; cut <= all.size(); ++cut) {
    SCOPED_TRACE("cut " + std::to_string(cut));
    IteratorState state;
    StringList seen;
    {
      auto it = MakeInterleave(kInput, 3, 2, 4, SlowExpand)
                    ->MakeIterator(MakeTestContext(NonDeterministic()));
      seen = Drain(it, cut);
      it->Save(state);
    }
    auto it = MakeInterleave(kInput, 3, 2, 4, SlowExpand)
                  ->MakeIterator(MakeTestContext(NonDeterministic()));
    it->Restore(IteratorState::Deserialize(state.Serialize()));
    StringList rest = Drain(it);
    seen.insert(seen.end(), rest.begin(), rest.end());
    EXPECT_EQ(Sorted(seen), all);
  }
}

// "x5" makes a dataset whose element 2 throws; other elements expand normally.
DatasetPtr<std::string> ExpandOrThrow(const std::string& element) {
  if (element == "bad") throw Error("the map function rejects 'bad'");
  if (element[0] != 'x') return Expand(element);
  return std::make_shared<GeneratorDataset<std::string>>(5, [](uint64_t, size_t i) -> std::string {
    if (i == 2) throw DataError("x.tfrecord", 42, "corrupt");
    return "x" + std::to_string(i);
  });
}

TEST(InterleaveDatasetTest, ExceptionsReachTheCaller) {
  for (int parallelism : {1, 3}) {
    SCOPED_TRACE("parallelism " + std::to_string(parallelism));
    // 1. From an inner dataset, after the elements before it, in order.
    auto it = MakeInterleave({"a3", "x5", "b2"}, 2, 1, parallelism, ExpandOrThrow)
                  ->MakeIterator(MakeTestContext());
    EXPECT_EQ(Drain(it, 5), (StringList{"a0", "x0", "a1", "x1", "a2"}));
    try {
      it->Next();
      FAIL() << "no error";
    } catch (const DataError& e) {
      EXPECT_EQ(e.path(), "x.tfrecord");
      EXPECT_EQ(e.offset(), 42u);
    }
    // 2. From the map function.
    auto it2 = MakeInterleave({"a1", "bad"}, 2, 1, parallelism, ExpandOrThrow)
                   ->MakeIterator(MakeTestContext());
    EXPECT_THROW(Drain(it2), Error);
    // 3. Non-deterministic mode.
    auto it3 = MakeInterleave({"a3", "x5", "b2"}, 2, 1, parallelism, ExpandOrThrow)
                   ->MakeIterator(MakeTestContext(NonDeterministic()));
    EXPECT_THROW(Drain(it3), DataError);
  }
}

TEST(InterleaveDatasetTest, DestructionMidStreamDoesNotHang) {
  // Endless inner datasets: workers always have something to read.
  auto endless = [](const std::string& element) -> DatasetPtr<std::string> {
    return std::make_shared<GeneratorDataset<std::string>>(-1, [element](uint64_t, size_t i) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      return element + std::to_string(i);
    });
  };
  for (bool deterministic : {true, false}) {
    PipelineOptions options;
    options.deterministic = deterministic;
    auto dataset = Interleave<std::string, std::string>(MakeVectorDataset(NumberedStrings(100)),
                                                        endless, 4, 2, 4);
    {
      auto it = dataset->MakeIterator(MakeTestContext(options));
      EXPECT_EQ(Drain(it, 25).size(), 25u);
    }  // destroyed while workers read ahead
    {
      auto it = dataset->MakeIterator(MakeTestContext(options));
    }  // destroyed before the first Next
    {
      auto it = dataset->MakeIterator(MakeTestContext(options));
      it->Next();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // queues fill up
    }
  }
}

TEST(InterleaveDatasetTest, StatisticsAndArguments) {
  PipelineOptions options;
  options.cpu_budget = 2;
  for (auto [parallelism, threads] : {std::pair{1, 1}, {4, 3}, {kAutotune, 2}}) {
    IteratorContext ctx = MakeTestContext(options);
    Drain(MakeInterleave(kInput, 3, 2, parallelism)->MakeIterator(ctx));
    StageSnapshot stats = StatsOf(ctx, "interleave");
    EXPECT_EQ(stats.elements, 13u);
    EXPECT_EQ(stats.bytes, 26u);
    EXPECT_EQ(stats.parallelism, threads) << "parallelism " << parallelism;
    EXPECT_EQ(stats.buffer_fill, 0);
  }
  auto input = MakeVectorDataset(kInput);
  EXPECT_THROW((Interleave<std::string, std::string>(input, Expand, 0)), Error);
  EXPECT_THROW((Interleave<std::string, std::string>(input, Expand, 2, 0)), Error);
  EXPECT_THROW((Interleave<std::string, std::string>(input, Expand, 2, 1, 0)), Error);
  EXPECT_THROW((Interleave<std::string, std::string>(input, nullptr, 2)), Error);
  EXPECT_THROW((Interleave<std::string, std::string>(nullptr, Expand, 2)), Error);
}

}  // namespace
}  // namespace imgpipe::pipeline
