// `imgpipe doctor` run as a real process: on this machine, and on fake system trees
// (--root) built by the test.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/cli_test_util.h"
#include "env/env_test_util.h"
#include "record/index.h"

namespace imgpipe {
namespace {

// Whether this machine has an NVIDIA driver the real loader would find.
bool MachineHasNvidiaDriver() {
  env::DlopenLibraryLoader loader;
  std::string error;
  return loader.Open("libnvidia-ml.so.1", &error) != nullptr ||
         loader.Open("libcuda.so.1", &error) != nullptr;
}

TEST(DoctorCli, JsonOnThisMachine) {
  Result run = RunImgpipe({"doctor", "--json", "--batch-size", "8", "--shuffle-buffer", "16"});
  nlohmann::json report = nlohmann::json::parse(run.out);
  ASSERT_TRUE(report["checks"].is_array());
  ASSERT_FALSE(report["checks"].empty());
  for (const nlohmann::json& check : report["checks"]) {
    for (const char* key : {"layer", "name", "status", "detail", "fix"}) {
      EXPECT_TRUE(check[key].is_string()) << key << " in " << check.dump();
    }
  }
  EXPECT_EQ(run.status, report["ok"].get<bool>() ? 0 : 2);
  EXPECT_TRUE(report["gpus"].is_array());
  EXPECT_TRUE(report["torch"]["linked"].is_boolean());
  EXPECT_GE(report["cpus"]["usable"].get<int>(), 1);
  if (report["gpus"].empty() && report["driver"]["gpu_count"] == 0) {
    EXPECT_EQ(run.status, 0) << run.out;  // no GPU: training runs on CPU, that is fine
  }
}

TEST(DoctorCli, FakeGpuLessContainerIsOk) {
  if (MachineHasNvidiaDriver())
    GTEST_SKIP() << "this machine's NVIDIA libraries are loaded whatever --root says";
  env::FakeSystemTree tree("cli_container");
  tree.AddLinuxHost();
  tree.Write("/.dockerenv", "");
  std::string data = JoinPath(tree.root(), "data");
  MakeDirectories(data);
  for (int i = 0; i < 8; ++i) {
    std::string shard = JoinPath(data, "train-0000" + std::to_string(i) + "-of-00008.tfrecord");
    WriteFileAtomic(shard, std::string(300, 'x'), false);
    WriteIndexFile(IndexPathFor(shard), {{0, 100}, {100, 200}});
  }
  Result run = RunImgpipe({"doctor", "--json", "--root", tree.root(), "--data", data});
  nlohmann::json report = nlohmann::json::parse(run.out);
  EXPECT_EQ(run.status, 0) << run.out;
  EXPECT_TRUE(report["ok"].get<bool>());
  EXPECT_EQ(report["platform"]["container"], "docker");
  EXPECT_EQ(report["cpus"]["usable"], 32);  // from the fake /proc/self/status
  bool advised = false, counted = false;
  for (const nlohmann::json& check : report["checks"]) {
    if (check["name"] == "NVIDIA driver")
      advised = check["fix"].get<std::string>().find("--gpus all") != std::string::npos;
    if (check["name"] == "shards")
      counted = check["detail"].get<std::string>().find("8 shards") == 0;
  }
  EXPECT_TRUE(advised) << run.out;
  EXPECT_TRUE(counted) << run.out;
}

TEST(DoctorCli, FakeGpuWithoutDriverFailsWithTheFix) {
  if (MachineHasNvidiaDriver())
    GTEST_SKIP() << "this machine's NVIDIA libraries are loaded whatever --root says";
  env::FakeSystemTree tree("cli_no_driver");
  tree.AddLinuxHost();
  tree.AddPciGpu("0000:01:00.0");
  Result run = RunImgpipe({"doctor", "--root", tree.root()});
  EXPECT_EQ(run.status, 2) << run.out;
  EXPECT_NE(run.out.find("driver\n  error    NVIDIA driver: 1 NVIDIA GPU is on the PCI bus but no "
                         "NVIDIA driver is loaded"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("fix: install the NVIDIA driver"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("training cannot use this machine as it is"), std::string::npos)
      << run.out;
}

TEST(DoctorCli, RejectsAMissingRoot) {
  Result run = RunImgpipe({"doctor", "--root", "/no/such/imgpipe/root"});
  EXPECT_NE(run.status, 0);
  EXPECT_NE(run.status, 2);  // a usage error, not a verdict
  EXPECT_NE(run.err.find("/no/such/imgpipe/root"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace imgpipe
