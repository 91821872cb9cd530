#include "util/subprocess.h"

#include <gtest/gtest.h>

#include "util/error.h"

namespace imgpipe {
namespace {

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

}  // namespace
}  // namespace imgpipe
