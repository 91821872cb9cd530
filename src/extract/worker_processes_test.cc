#include "extract/worker_processes.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include "extract/extract_test_util.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe::extract {
namespace {

TEST(WorkerProcesses, StartWaitAndDescribe) {
  std::string dir = FreshTestDir("processes");
  pid_t ok = StartProcess({"/bin/sh", "-c", "echo out; echo err >&2"}, JoinPath(dir, "o"), JoinPath(dir, "e"));
  EXPECT_EQ(DescribeExit(WaitProcess(ok)), "");
  EXPECT_EQ(ReadFile(JoinPath(dir, "o")), "out\n");
  EXPECT_EQ(ReadFile(JoinPath(dir, "e")), "err\n");
  EXPECT_EQ(DescribeExit(WaitProcess(StartProcess({"/bin/sh", "-c", "exit 3"}))), "exited with status 3");
  pid_t sleeper = StartProcess({"/bin/sleep", "30"});
  ::kill(sleeper, SIGKILL);
  EXPECT_EQ(DescribeExit(WaitProcess(sleeper)).rfind("killed by signal 9", 0), 0u);
  EXPECT_THROW(StartProcess({JoinPath(dir, "no-such-program")}), IoError);
}

TEST(WorkerProcesses, OwnCommandLineAndWorkerCommandLine) {
  std::vector<std::string> own = OwnCommandLine();
  ASSERT_FALSE(own.empty());
  EXPECT_NE(own[0].find("extract_test"), std::string::npos);
  std::vector<std::string> args = {"/proc/self/exe", "extract", "--data", "d", "--nproc", "3",
                                   "--out", "o", "--nproc=3", "--threads=4", "--resume"};
  EXPECT_EQ(WorkerCommandLine(args, 2, 3, 1),
            (std::vector<std::string>{"/proc/self/exe", "extract", "--data", "d", "--out", "o",
                                      "--resume", "--threads", "1", "--worker", "2",
                                      "--num-workers", "3"}));
  EXPECT_THROW(WorkerCommandLine({"x", "--worker", "1"}, 1, 2, 1), Error);
}

}  // namespace
}  // namespace imgpipe::extract
