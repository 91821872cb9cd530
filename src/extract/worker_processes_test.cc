#include "extract/worker_processes.h"

#include <gtest/gtest.h>

#include "util/error.h"

namespace imgpipe::extract {
namespace {

TEST(WorkerProcesses, WorkerCommandLine) {
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
