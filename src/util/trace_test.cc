#include "util/trace.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

#include "util/file.h"

namespace imgpipe::trace {
namespace {

TEST(Trace, WritesChromeTraceEventsPerThread) {
  std::string path = JoinPath(::testing::TempDir(), "trace_" + std::to_string(::getpid()) + ".json");
  { ScopedTrace ignored("before-enable"); }
  Enable();
  std::thread worker([] {
    SetThreadName("worker \"1\"");
    ScopedTrace t("decode");
  });
  worker.join();
  { ScopedTrace t("read"); }
  Disable();
  { ScopedTrace ignored("after-disable"); }
  EXPECT_EQ(WriteChromeTrace(path), 2u);
  std::string json = ReadFile(path);
  EXPECT_NE(json.find("\"name\":\"decode\""), std::string::npos);
  EXPECT_NE(json.find("\"name\":\"read\""), std::string::npos);
  EXPECT_NE(json.find("worker \\\"1\\\""), std::string::npos);
  EXPECT_EQ(json.find("before-enable"), std::string::npos);
  EXPECT_EQ(json.find("after-disable"), std::string::npos);
  EXPECT_EQ(json.find(",\n]"), std::string::npos);  // valid JSON: no trailing comma
}

}  // namespace
}  // namespace imgpipe::trace
