// End-to-end tests of `imgpipe extract` and `imgpipe classify`, run as real processes.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "extract/extract_output.h"
#include "extract/extract_test_util.h"
#include "extract/npy_file.h"
#include "util/subprocess.h"
#include "testing/nginx_test_server.h"
#include "util/file.h"

namespace imgpipe::extract {
namespace {

const std::string kBinary = IMGPIPE_BINARY;
const std::string kPhotos = std::string(IMGPIPE_TESTDATA_DIR) + "/images/photos-by-class";

struct Result {
  int status;  // exit status, or 128 + signal
  std::string out;
  std::string err;
};

Result RunImgpipe(std::vector<std::string> args) {
  static int calls = 0;
  std::string base = JoinPath(FreshTestDir("cli_run_" + std::to_string(calls++)), "out");
  args.insert(args.begin(), kBinary);
  int raw = WaitProcess(StartProcess(args, base, base + ".err"));
  int status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  return {status, ReadFile(base), ReadFile(base + ".err")};
}

// 3 x `per_class` synthetic JPEGs as TFRecord shards (at least `min_shards`): their folder.
std::string Shards(const std::string& name, int per_class, int min_shards) {
  std::string root = FreshTestDir(name);
  MakeSynthImages(JoinPath(root, "images"), 3, per_class, 72, 64);
  ConvertToShards(JoinPath(root, "images"), JoinPath(root, "shards"), min_shards);
  return JoinPath(root, "shards");
}

TEST(ExtractCli, JsonSummaryAndTwoProcessesWriteWhatOneWrites) {
  if (!PythonHasTorch()) GTEST_SKIP() << "/usr/bin/python3 has no torch/torchvision";
  std::string shards = Shards("cli_nproc", 4, 3);
  std::string model = TorchScriptResnet18(true);
  std::string one = FreshTestDir("cli_nproc_one");
  std::string two = FreshTestDir("cli_nproc_two");
  std::vector<std::string> common = {"extract", "--data", shards, "--model", model,
                                     "--image-size", "64", "--batch-size", "5", "--json"};
  std::vector<std::string> single = common;
  single.insert(single.end(), {"--out", one});
  Result r1 = RunImgpipe(single);
  ASSERT_EQ(r1.status, 0) << r1.err;
  nlohmann::json s1 = nlohmann::json::parse(r1.out);
  EXPECT_EQ(s1["complete"], true);
  EXPECT_EQ(s1["rows"], 12);
  EXPECT_EQ(s1["dimension"], 512);
  EXPECT_EQ(s1["shards_this_run"], 3);
  EXPECT_GT(s1["images_per_s"].get<double>(), 0);
  EXPECT_GE(s1["input_wait_fraction"].get<double>(), 0);
  EXPECT_LE(s1["input_wait_fraction"].get<double>(), 1);

  std::vector<std::string> parallel = common;
  parallel.insert(parallel.end(), {"--out", two, "--nproc", "2"});
  Result r2 = RunImgpipe(parallel);
  ASSERT_EQ(r2.status, 0) << r2.err;
  nlohmann::json s2 = nlohmann::json::parse(r2.out);
  EXPECT_EQ(s2["rows"], 12);
  EXPECT_EQ(s2["shards_this_run"], 3);
  EXPECT_EQ(OutputFiles(two), OutputFiles(one));
  EXPECT_EQ(OutputFiles(one).size(), 11u);
}

// The features of every row of an output folder, in shard order, and their columns.
std::vector<float> FeatureRows(const std::string& dir, uint64_t* columns) {
  nlohmann::json summary = nlohmann::json::parse(ReadFile(JoinPath(dir, "features.json")));
  std::vector<float> out;
  for (const nlohmann::json& shard : summary["shards"]) {
    uint64_t rows = 0;
    std::vector<float> f = ReadFeatureRows(JoinPath(dir, shard["features"].get<std::string>()), &rows, columns);
    out.insert(out.end(), f.begin(), f.end());
  }
  return out;
}

// --data at a URL (nginx serving the shards, listed by their dataset.json): the features
// of the local shards, row for row.
TEST(ExtractCli, UrlDataGivesTheLocalFeatures) {
  if (!PythonHasTorch()) GTEST_SKIP() << "/usr/bin/python3 has no torch/torchvision";
  const std::string shards = Shards("cli_url", 3, 2);
  const std::string model = TorchScriptResnet18(true);
  NginxTestServer server(DirName(shards), FreshTestDir("cli_url_nginx"));
  const std::string local = FreshTestDir("cli_url_local"), remote = FreshTestDir("cli_url_remote");
  for (const auto& [data, out] : {std::pair{shards, local}, std::pair{server.Url("shards"), remote}}) {
    const Result r = RunImgpipe({"extract", "--data", data, "--model", model, "--image-size", "64", "--batch-size",
                                 "4", "--out", out, "--json"});
    ASSERT_EQ(r.status, 0) << data << ": " << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["rows"], 9) << data;
  }
  uint64_t local_columns = 0, remote_columns = 0;
  EXPECT_EQ(FeatureRows(remote, &remote_columns), FeatureRows(local, &local_columns));
  EXPECT_EQ(remote_columns, local_columns);
}

// torchvision's resnet18 with fc = Identity, scripted (a feature extractor made the
// common way): --layer penultimate uses its output, says so, and gives what the same
// weights with their fc give at fc's input.
TEST(ExtractCli, HeadlessModelGivesItsOutputAsPenultimate) {
  if (!PythonHasTorch()) GTEST_SKIP() << "/usr/bin/python3 has no torch/torchvision";
  std::string shards = Shards("cli_headless", 2, 1);
  std::string models = FreshTestDir("cli_headless_models");
  RunPython(
      "import sys, torch, torchvision\n"
      "torch.manual_seed(11)\n"
      "m = torchvision.models.resnet18().eval()\n"
      "torch.jit.script(m).save(sys.argv[1] + '/full.pt')\n"
      "m.fc = torch.nn.Identity()\n"
      "torch.jit.script(m).save(sys.argv[1] + '/headless.pt')\n",
      {models});
  std::vector<float> features[2];
  uint64_t columns[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    std::string out = FreshTestDir("cli_headless_out_" + std::to_string(i));
    Result r = RunImgpipe({"extract", "--data", shards, "--model",
                           JoinPath(models, i == 0 ? "full.pt" : "headless.pt"), "--image-size", "64",
                           "--batch-size", "3", "--out", out, "--json"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err.find("no classifier head") != std::string::npos, i == 1) << r.err;
    nlohmann::json summary = nlohmann::json::parse(ReadFile(JoinPath(out, "features.json")));
    EXPECT_EQ(summary["layer_resolved"], i == 0 ? "input of fc (Linear)" : "forward (no classifier head)")
        << summary.dump();
    features[i] = FeatureRows(out, &columns[i]);
  }
  EXPECT_EQ(columns[0], 512u);
  EXPECT_EQ(columns[1], 512u);
  ASSERT_EQ(features[0].size(), features[1].size());
  ASSERT_EQ(features[0].size(), 6u * 512);
  for (size_t k = 0; k < features[0].size(); ++k) {
    ASSERT_NEAR(features[0][k], features[1][k], 1e-5) << k;
  }
}

TEST(ExtractCli, AFailedWorkerIsNamed) {
  if (!PythonHasTorch()) GTEST_SKIP() << "/usr/bin/python3 has no torch/torchvision";
  std::string shards = Shards("cli_worker_fails", 2, 2);
  // Shard 1 (worker 1's) gets a flipped byte: a CRC error stops that worker.
  std::string victim = JoinPath(shards, "train-00001-of-00002.tfrecord");
  std::string bytes = ReadFile(victim);
  bytes[bytes.size() / 2] ^= 0x20;
  WriteFileAtomic(victim, bytes);
  std::string out = FreshTestDir("cli_worker_fails_out");
  Result r = RunImgpipe({"extract", "--data", shards, "--model", TorchScriptResnet18(true),
                         "--image-size", "32", "--out", out, "--nproc", "2"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("worker 1 of 2 exited with status 1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(victim + ": offset "), std::string::npos) << r.err;  // the worker's own error
  EXPECT_TRUE(PathExists(JoinPath(out, FeaturesFileName(0))));  // worker 0 finished its shard
  EXPECT_FALSE(PathExists(JoinPath(out, "features.json")));
}

// SIGKILL after the first shard appears: no partial file under a final name, and
// --resume finishes with exactly the bytes of an uninterrupted run.
TEST(ExtractCli, KilledThenResumedIsByteIdentical) {
  if (!PythonHasTorch()) GTEST_SKIP() << "/usr/bin/python3 has no torch/torchvision";
  std::string root = FreshTestDir("cli_kill");
  std::string images = JoinPath(root, "images");
  MakeSynthImages(images, 4, 60, 96, 96);  // 240 images, 30 shards of 8
  std::string reference = JoinPath(root, "reference");
  std::string killed = JoinPath(root, "killed");
  auto args = [&](const std::string& out) {
    return std::vector<std::string>{kBinary, "extract", "--data", images, "--model",
                                    TorchScriptResnet18(false), "--image-size", "96",
                                    "--shard-rows", "8", "--batch-size", "4", "--threads", "1",
                                    "--out", out};
  };
  pid_t pid = StartProcess(args(killed), JoinPath(root, "killed.out"), JoinPath(root, "killed.err"));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  // The first shard is finished when its record is written (after its three arrays).
  const std::string first_shard = JoinPath(killed, ".imgpipe-extract/shard-00000.json");
  while (!PathExists(first_shard) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ::kill(pid, SIGKILL);
  int raw = WaitProcess(pid);
  ASSERT_TRUE(WIFSIGNALED(raw)) << "the run ended before the kill: " << DescribeExit(raw)
                                << ReadFile(JoinPath(root, "killed.err"));
  EXPECT_FALSE(PathExists(JoinPath(killed, "features.json")));
  // Every array under its final name is whole (its size is what its header says).
  size_t finished = 0;
  for (const std::string& name : ListDirectory(killed)) {
    if (name.size() > 4 && name.substr(name.size() - 4) == ".npy") {
      EXPECT_NO_THROW(npy::ReadHeader(JoinPath(killed, name))) << name;
      finished += name.rfind("features-", 0) == 0;
    }
  }
  EXPECT_GE(finished, 1u);
  EXPECT_LT(finished, 30u);

  std::vector<std::string> resume = args(killed);
  resume.erase(resume.begin());
  resume.insert(resume.end(), {"--resume", "--json"});
  Result resumed = RunImgpipe(resume);
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  nlohmann::json summary = nlohmann::json::parse(resumed.out);
  EXPECT_EQ(summary["rows"], 240);
  EXPECT_GE(summary["shards_resumed"].get<int>(), 1);
  EXPECT_EQ(summary["shards_resumed"].get<int>() + summary["shards_this_run"].get<int>(), 30);

  std::vector<std::string> uninterrupted = args(reference);
  uninterrupted.erase(uninterrupted.begin());
  Result ref = RunImgpipe(uninterrupted);
  ASSERT_EQ(ref.status, 0) << ref.err;
  auto expected = OutputFiles(reference);
  EXPECT_EQ(expected.size(), 30u * 3 + 2);
  auto got = OutputFiles(killed);
  std::vector<std::string> temporaries;
  for (auto it = got.begin(); it != got.end();) {
    if (it->first.find(".tmp") != std::string::npos) {
      temporaries.push_back(it->first);  // the killed process's, of a shard it had started
      it = got.erase(it);
    } else {
      ++it;
    }
  }
  EXPECT_TRUE(temporaries.empty()) << "a resumed run clears the temporaries of the shards it redoes";
  EXPECT_EQ(got, expected);
}

TEST(ClassifyCli, TopKPerImageAndAnErrorLineForABadOne) {
  if (!PythonHasTorch()) GTEST_SKIP() << "/usr/bin/python3 has no torch/torchvision";
  std::string model = TorchScriptResnet18(true, 1000);
  std::string swan = kPhotos + "/100/swan-3584559_640.jpg";
  std::string ship = kPhotos + "/510/ship-1083562_640.jpg";
  std::string bad = std::string(IMGPIPE_TESTDATA_DIR) + "/bad-images/monkey12.jpg";
  std::string dir = FreshTestDir("cli_classify");
  std::string text = "";
  for (int i = 0; i < 1000; ++i) text += "class " + std::to_string(i) + "\n";
  WriteFileAtomic(JoinPath(dir, "labels.txt"), text);

  Result plain = RunImgpipe({"classify", "--model", model, "--top-k", "3", "--image-size", "96",
                             "--labels", JoinPath(dir, "labels.txt"), swan, bad, ship});
  EXPECT_EQ(plain.status, 2);
  EXPECT_NE(plain.err.find(bad), std::string::npos) << plain.err;
  EXPECT_NE(plain.out.find(swan + "\n  0."), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find(ship + "\n  0."), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find(" class "), std::string::npos) << plain.out;
  EXPECT_EQ(plain.out.find(bad), std::string::npos);

  Result json = RunImgpipe({"classify", "--model", model, "--top-k", "4", "--image-size", "96",
                            "--json", swan, bad, ship});
  EXPECT_EQ(json.status, 2);
  std::vector<nlohmann::json> lines;
  size_t start = 0;
  while (start < json.out.size()) {
    size_t end = json.out.find('\n', start);
    lines.push_back(nlohmann::json::parse(json.out.substr(start, end - start)));
    start = end + 1;
  }
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1]["path"], bad);
  EXPECT_TRUE(lines[1].contains("error"));
  for (size_t i : {0u, 2u}) {
    ASSERT_EQ(lines[i]["top"].size(), 4u);
    double previous = 1.0;
    for (const nlohmann::json& c : lines[i]["top"]) {
      EXPECT_LE(c["probability"].get<double>(), previous);
      previous = c["probability"].get<double>();
      EXPECT_EQ(c["label"], std::to_string(c["index"].get<int>()));
    }
  }
  Result ok = RunImgpipe({"classify", "--model", model, "--top-k", "1", "--image-size", "96", swan});
  EXPECT_EQ(ok.status, 0) << ok.err;
}

}  // namespace
}  // namespace imgpipe::extract
