#include "util/worker_shards.h"

#include <gtest/gtest.h>

namespace imgpipe {
namespace {

TEST(ShardBelongsToWorker, RoundRobin) {
  EXPECT_TRUE(ShardBelongsToWorker(0, 0, 3));
  EXPECT_TRUE(ShardBelongsToWorker(4, 1, 3));
  EXPECT_FALSE(ShardBelongsToWorker(4, 0, 3));
  EXPECT_TRUE(ShardBelongsToWorker(7, 0, 1));
}

TEST(ShardProblemReport, NamesEachBadShardWithItsWorkerAndTheWorkersToRerun) {
  std::vector<std::string> names = {"a", "b", "c", "d", "e"};
  std::vector<std::string> problems = {"", "missing", "", "changed", "missing"};
  std::string report = ShardProblemReport("out", names, problems, 3, "hint");
  EXPECT_NE(report.find("out: 3 of 5 shards do not check out"), std::string::npos) << report;
  EXPECT_NE(report.find("b (worker 1): missing"), std::string::npos) << report;
  EXPECT_NE(report.find("d (worker 0): changed"), std::string::npos) << report;
  EXPECT_NE(report.find("e (worker 1): missing"), std::string::npos) << report;
  EXPECT_NE(report.find("rerun workers 0, 1 of --num-workers 3 (hint)"), std::string::npos)
      << report;
  EXPECT_EQ(report.find("\n  a"), std::string::npos) << report;  // good shards are not listed
}

TEST(ShardProblemReport, WithoutTheSplitNoWorkerIsNamed) {
  std::string report = ShardProblemReport("out", {"a", "b"}, {"missing", ""}, 1, "hint");
  EXPECT_NE(report.find("\n  a: missing"), std::string::npos) << report;
  EXPECT_EQ(report.find("(worker"), std::string::npos) << report;
  EXPECT_NE(report.find("give it --num-workers"), std::string::npos) << report;
}

TEST(ShardProblemReport, ListsTwentyAndCountsTheRest) {
  std::vector<std::string> names(25, "s"), problems(25, "missing");
  std::string report = ShardProblemReport("out", names, problems, 2, "hint");
  EXPECT_NE(report.find("... and 5 more"), std::string::npos) << report;
}

}  // namespace
}  // namespace imgpipe
