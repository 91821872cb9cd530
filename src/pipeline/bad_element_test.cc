#include "pipeline/bad_element.h"

#include <gtest/gtest.h>

#include <limits>
#include <regex>

#include "pipeline/pipeline.h"
#include "pipeline/pipeline_test_util.h"

namespace imgpipe::pipeline {
namespace {

// A map function that fails on every element whose number is not a multiple of `good_every`
// (0: on every element).
MapFunction<std::string, std::string> FailingMap(int good_every) {
  return [good_every](std::string&& s, const MapContext& c) {
    if (good_every == 0 || c.index % good_every != 0) {
      throw DataError("shard-" + s, c.index, "bad element " + s);
    }
    return s;
  };
}

Pipeline<std::string> Strings(size_t n) {
  return Pipeline<std::string>(FromVector<std::string>(NumberedStrings(n)));
}

// The Error message of draining `it`, or "(no error)".
template <typename T>
std::string DrainError(PipelineIterator<T>& it, size_t max = 100000) {
  try {
    for (size_t i = 0; i < max && it.Next(); ++i) {
    }
  } catch (const DataError& e) {
    return std::string("DataError: ") + e.what();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(BadElementsTest, LimitFollowsTheLargestPass) {
  BadElements bad;
  EXPECT_EQ(bad.ConsecutiveLimit(), std::numeric_limits<uint64_t>::max());
  bad.PassEnded(3);
  EXPECT_EQ(bad.ConsecutiveLimit(), kMinConsecutiveSkips);
  bad.PassEnded(500);
  bad.PassEnded(20);
  EXPECT_EQ(bad.ConsecutiveLimit(), 500 * kPassesOfSkips);
}

TEST(BadElementsTest, SummaryNamesTheCountAndTheFirstReasons) {
  BadElements bad;
  EXPECT_NO_THROW(bad.ThrowIfOnlySkips());
  for (int i = 0; i < 5; ++i) bad.Add("r" + std::to_string(i));
  EXPECT_EQ(bad.Summary(), "5 elements skipped; the first: r0; r1; r2");
  try {
    bad.ThrowIfOnlySkips();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "no good element in a whole pass over the input: 5 elements skipped; "
                           "the first: r0; r1; r2");
  }
}

TEST(BadElementGuardTest, FailPolicyRethrowsTheSameError) {
  StageStats stats;
  BadElementGuard guard(ErrorPolicy::kFail, &stats, std::make_shared<BadElements>());
  try {
    try {
      throw DataError("a.tfrecord", 12, "bad");
    } catch (const DataError& e) {
      guard.SkipOrRethrow(e);
    }
    ADD_FAILURE() << "not rethrown";
  } catch (const DataError& e) {
    EXPECT_EQ(e.path(), "a.tfrecord");
    EXPECT_EQ(e.offset(), 12u);
  }
  EXPECT_EQ(stats.errors, 0u);
}

// Skips in a row past the limit throw; a good element restarts the count; without a
// finished pass there is no limit.
TEST(BadElementGuardTest, StopsAfterTheLimitOfSkipsInARow) {
  StageStats stats;
  stats.name = "map(x)";
  auto all = std::make_shared<BadElements>();
  BadElementGuard guard(ErrorPolicy::kSkip, &stats, all);
  auto skip = [&] {
    try {
      throw DataError("f", 0, "bad");
    } catch (const DataError& e) {
      guard.SkipOrRethrow(e);
    }
  };
  for (int i = 0; i < 3000; ++i) skip();  // no pass finished yet: no limit
  guard.Good();
  all->PassEnded(10);
  for (uint64_t i = 0; i < kMinConsecutiveSkips; ++i) skip();
  guard.Good();
  for (uint64_t i = 0; i < kMinConsecutiveSkips; ++i) skip();
  EXPECT_EQ(stats.errors, 3000 + 2 * kMinConsecutiveSkips);
  try {
    skip();
    ADD_FAILURE() << "no stop";
  } catch (const DataError&) {
    ADD_FAILURE() << "a DataError, not the stop";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "stopped: 1001 bad elements in a row in stage map(x) and no good one (the limit "
              "is max(1000, 10 x the largest pass over the input) = 1000 elements); 5001 "
              "elements skipped; the first: f: offset 0: bad; f: offset 0: bad; f: offset 0: bad");
  }
}

// The original bug: repeat below a map whose every element fails spun forever.
TEST(BadElementPipelineTest, RepeatedInputThatIsAllBadStops) {
  for (int parallelism : {1, 3}) {
    SCOPED_TRACE(parallelism);
    auto it = Strings(3).Repeat().Map(FailingMap(0), parallelism, "map(decode)").MakeIterator();
    std::string error = DrainError(it);
    EXPECT_NE(error.find(" bad elements in a row in stage map(decode) and no good one"),
              std::string::npos) << error;
    if (parallelism == 1) {
      EXPECT_NE(error.find("the first: shard-e0: offset 0: bad element e0"), std::string::npos) << error;
    } else {  // parallel workers record their failures in the order they finish, not input order
      EXPECT_TRUE(std::regex_search(error, std::regex("the first: (shard-e([0-2]): offset [0-9]+: bad element e\\2(; |$)){3}")))
          << error;
    }
  }
}

TEST(BadElementPipelineTest, PassWithOnlyBadElementsIsAnError) {
  auto it = Strings(4).Map(FailingMap(0), 2, "map(decode)").MakeIterator();
  std::string error = DrainError(it);
  EXPECT_EQ(error.rfind("no good element in a whole pass over the input: 4 elements skipped; the first: ", 0), 0u)
      << error;
  // Under the fail policy the first bad element's DataError comes out instead.
  PipelineOptions fail;
  fail.error_policy = ErrorPolicy::kFail;
  auto failing = Strings(4).Map(FailingMap(0), 1, "map(decode)").MakeIterator(fail);
  EXPECT_EQ(DrainError(failing).rfind("DataError: shard-e0", 0), 0u);
}

TEST(BadElementPipelineTest, SomeGoodElementsGoOn) {
  // One good element in 7, repeated: runs as long as asked.
  auto it = Strings(7).Repeat().Map(FailingMap(7), 2, "map(decode)").Take(500).MakeIterator();
  EXPECT_EQ(DrainError(it), "(no error)");
  // An empty input is not an error.
  auto empty = Strings(0).Repeat().Map(FailingMap(0), 1).MakeIterator();
  EXPECT_EQ(DrainError(empty), "(no error)");
}

// Bad records below the repeat: each pass gives nothing, so the repeat ends and the
// pipeline says why.
TEST(BadElementPipelineTest, CorruptFilesBelowARepeatAreAnError) {
  const std::string path = TestTempPath("bad_element_corrupt.tfrecord");
  WriteFileAtomic(path, std::string(100, '\x42'), false);
  auto it = Pipeline<Record>(TfRecordFiles(FromVector<std::string>({path, path})))
                .Repeat()
                .MakeIterator();
  std::string error = DrainError(it);
  EXPECT_EQ(error.rfind("no good element in a whole pass over the input: 2 elements skipped; the first: " + path, 0), 0u)
      << error;
}

}  // namespace
}  // namespace imgpipe::pipeline
