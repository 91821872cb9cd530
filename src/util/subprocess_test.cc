#include "util/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>

#include "util/error.h"
#include "util/file.h"

namespace imgpipe {
namespace {

// A new folder of this test process for `name`'s files.
std::string TestDir(const std::string& name) {
  std::string dir = JoinPath(::testing::TempDir(), "subprocess_test_" + std::to_string(::getpid()) + "_" + name);
  MakeDirectories(dir);
  return dir;
}

TEST(Subprocess, RunForOutputReturnsStandardOutputAndStatus) {
  ProgramOutput out = RunForOutput({"/bin/sh", "-c", "printf 'one\\ntwo'; exit 3"});
  EXPECT_EQ(out.status, 3);
  EXPECT_EQ(out.output, "one\ntwo");
}

TEST(Subprocess, RunForOutputReadsMoreThanAPipeHolds) {
  // 1 MiB, more than the pipe's 64 KiB: the reader must drain while the child writes.
  ProgramOutput out = RunForOutput({"/bin/sh", "-c", "head -c 1048576 /dev/zero"});
  EXPECT_EQ(out.status, 0);
  EXPECT_EQ(out.output.size(), 1048576u);
}

TEST(Subprocess, RunForOutputReportsASignal) {
  ProgramOutput out = RunForOutput({"/bin/sh", "-c", "kill -9 $$"});
  EXPECT_EQ(out.status, 128 + 9);
}

TEST(Subprocess, RunForOutputOfAMissingProgramThrows) {
  try {
    RunForOutput({"/nonexistent/program"});
    FAIL() << "no Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/program"), std::string::npos);
  }
}

TEST(Subprocess, StartWaitAndDescribe) {
  const std::string dir = TestDir("subprocess_start");
  pid_t ok = StartProcess({"/bin/sh", "-c", "echo out; echo err >&2"}, JoinPath(dir, "o"), JoinPath(dir, "e"));
  EXPECT_EQ(DescribeExit(WaitProcess(ok)), "");
  EXPECT_EQ(ReadFile(JoinPath(dir, "o")), "out\n");
  EXPECT_EQ(ReadFile(JoinPath(dir, "e")), "err\n");
  EXPECT_EQ(DescribeExit(WaitProcess(StartProcess({"/bin/sh", "-c", "exit 3"}))), "exited with status 3");
  pid_t sleeper = StartProcess({"/bin/sleep", "30"});
  ::kill(sleeper, SIGKILL);
  const int raw = WaitProcess(sleeper);
  EXPECT_EQ(DescribeExit(raw).rfind("killed by signal 9", 0), 0u);
  EXPECT_EQ(ExitStatus(raw), 128 + 9);
  EXPECT_THROW(StartProcess({JoinPath(dir, "no-such-program")}), IoError);
}

TEST(Subprocess, StartProcessAddsTheEnvironmentGiven) {
  const std::string dir = TestDir("subprocess_env");
  pid_t p = StartProcess({"/bin/sh", "-c", "echo \"$IMGPIPE_A $HOME\""}, JoinPath(dir, "o"), "",
                         {{"IMGPIPE_A", "one"}});
  EXPECT_EQ(ExitStatus(WaitProcess(p)), 0);
  EXPECT_EQ(ReadFile(JoinPath(dir, "o")), std::string("one ") + std::getenv("HOME") + "\n");
}

TEST(Subprocess, OwnCommandLineAndCommandLineWithout) {
  std::vector<std::string> own = OwnCommandLine();
  ASSERT_FALSE(own.empty());
  EXPECT_EQ(own[0], CurrentExecutable());
  EXPECT_NE(own[0].find("util_test"), std::string::npos);
  EXPECT_EQ(CommandLineWithout({"prog", "train", "--nproc", "2", "--data", "d", "--nproc=3", "--threads=4", "-v"},
                               {"--nproc", "--threads"}),
            (std::vector<std::string>{"prog", "train", "--data", "d", "-v"}));
  EXPECT_EQ(CommandLineWithout({"--nproc", "a"}, {"--nproc"}), (std::vector<std::string>{"--nproc", "a"}));
}

// Worker i writes its index and its RANK variable to file i.
WorkerLaunch EchoWorker(const std::string& dir, int i, const std::string& then) {
  return {{"/bin/sh", "-c", "echo \"$RANK\"; " + then}, {{"RANK", std::to_string(i)}},
          JoinPath(dir, std::to_string(i))};
}

TEST(LocalWorkers, StartsEachWithItsEnvironmentAndWaitsForAll) {
  const std::string dir = TestDir("local_workers_ok");
  LocalWorkers workers(1, 3, [&](int i) { return EchoWorker(dir, i, "exit 0"); });
  std::vector<WorkerResult> results = workers.Wait(WhenOneFails::kStopTheOthers);
  ASSERT_EQ(results.size(), 3u);
  for (int i = 1; i <= 3; ++i) {
    EXPECT_EQ(results[i - 1].index, i);
    EXPECT_EQ(results[i - 1].status, 0);
    EXPECT_EQ(ReadFile(JoinPath(dir, std::to_string(i))), std::to_string(i) + "\n");
  }
  EXPECT_EQ(FirstWorkerFailure(results, 4), "");
}

TEST(LocalWorkers, AFailureStopsTheOthersOrLetsThemEnd) {
  const std::string dir = TestDir("local_workers_fail");
  auto launch = [&](int i) { return EchoWorker(dir, i, i == 1 ? "exit 3" : "sleep 0.5; exit 0"); };
  const auto start = std::chrono::steady_clock::now();
  std::vector<WorkerResult> stopped = LocalWorkers(0, 3, launch).Wait(WhenOneFails::kStopTheOthers);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(450));
  EXPECT_EQ(stopped[1].status, 3);
  EXPECT_EQ(stopped[0].status, 128 + SIGTERM);
  EXPECT_EQ(FirstWorkerFailure(stopped, 3), "worker 0 of 3 killed by signal 15 (Terminated)");
  std::vector<WorkerResult> ended = LocalWorkers(0, 3, launch).Wait(WhenOneFails::kLetTheOthersEnd);
  EXPECT_EQ(ended[0].status, 0);
  EXPECT_EQ(ended[2].status, 0);
  EXPECT_EQ(FirstWorkerFailure(ended, 3), "worker 1 of 3 exited with status 3");
}

TEST(LocalWorkers, TheDestructorStopsWorkersStillRunning) {
  const std::string dir = TestDir("local_workers_destructor");
  const auto start = std::chrono::steady_clock::now();
  { LocalWorkers workers(0, 2, [&](int i) { return EchoWorker(dir, i, "exec sleep 30"); }); }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(LocalWorkers, AWorkerThatCannotStartNamesItself) {
  const std::string dir = TestDir("local_workers_missing");
  try {
    LocalWorkers workers(0, 2, [&](int i) {
      return i == 0 ? EchoWorker(dir, i, "exec sleep 30") : WorkerLaunch{{JoinPath(dir, "no-such")}, {}, ""};
    });
    FAIL() << "no IoError";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("worker 1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace imgpipe
