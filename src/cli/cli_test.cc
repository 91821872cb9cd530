// End-to-end tests of the imgpipe binary, run as a real process.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "util/file.h"

extern char** environ;

namespace imgpipe {
namespace {

const std::string kBinary = IMGPIPE_BINARY;
const std::string kTestData = IMGPIPE_TESTDATA_DIR;

std::string FreshDir(const std::string& name) {
  std::string dir =
      JoinPath(::testing::TempDir(), "cli_test_" + std::to_string(::getpid()) + "_" + name);
  EXPECT_EQ(std::system(("rm -rf '" + dir + "'").c_str()), 0);
  MakeDirectories(dir);
  return dir;
}

// Starts imgpipe with `args`, stdout and stderr to files in `log_dir`.
pid_t Start(const std::vector<std::string>& args, const std::string& stdout_path) {
  std::vector<std::string> all = {kBinary};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, (stdout_path + ".err").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  EXPECT_EQ(posix_spawn(&pid, kBinary.c_str(), &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

int Wait(pid_t pid) {
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

struct Result {
  int status;
  std::string out;
  std::string err;
};

Result RunImgpipe(const std::vector<std::string>& args) {
  std::string out = JoinPath(::testing::TempDir(), "cli_test_out_" + std::to_string(::getpid()));
  int status = Wait(Start(args, out));
  return {status, ReadFile(out), ReadFile(out + ".err")};
}

std::vector<nlohmann::json> JsonLines(const std::string& text) {
  std::vector<nlohmann::json> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    out.push_back(nlohmann::json::parse(text.substr(pos, end - pos)));
    pos = end == std::string::npos ? text.size() : end + 1;
  }
  return out;
}

// Every regular file under `dir` (relative name -> contents), for byte comparisons.
void Snapshot(const std::string& dir, const std::string& prefix,
              std::map<std::string, std::string>* out) {
  for (const std::string& name : ListDirectory(dir)) {
    std::string path = JoinPath(dir, name);
    if (IsDirectory(path)) {
      Snapshot(path, JoinPath(prefix, name), out);
    } else {
      (*out)[JoinPath(prefix, name)] = ReadFile(path);
    }
  }
}

TEST(Inspect, ReadsTensorFlowFilesWithExactCounts) {
  const std::string t = kTestData + "/tfrecord/";
  Result r = RunImgpipe({"inspect", "--json", t + "pytorch-data/example.tfrecord",
                  t + "pytorch-data/sequence_example.tfrecord", t + "tfx/mnist.tfrecord",
                  t + "tfx/penguin-train-00000-of-00001.gz"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto files = JsonLines(r.out);
  ASSERT_EQ(files.size(), 4u);
  EXPECT_EQ(files[0]["records"], 4);
  EXPECT_EQ(files[0]["record_type"], "example");
  EXPECT_EQ(files[1]["records"], 4);
  EXPECT_EQ(files[1]["record_type"], "sequence_example");
  EXPECT_EQ(files[2]["records"], 1000);
  EXPECT_EQ(files[2]["label_key"], "image_class");
  uint64_t histogram_total = 0;
  for (auto& c : files[2]["classes"]) histogram_total += c["count"].get<uint64_t>();
  EXPECT_EQ(histogram_total, 1000u);
  EXPECT_EQ(files[3]["records"], 234);
  EXPECT_EQ(files[3]["compression"], "gzip");
  for (auto& f : files) EXPECT_EQ(f["crc_errors"], 0);
  // The schema of the first record.
  bool found = false;
  for (auto& f : files[0]["features"]) {
    if (f["key"] == "x_float") {
      EXPECT_EQ(f["kind"], "float");
      EXPECT_EQ(f["length"], 10);
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

TEST(Inspect, CorruptFileFailsNamingTheOffset) {
  std::string dir = FreshDir("corrupt");
  std::string data = ReadFile(kTestData + "/tfrecord/pytorch-data/example.tfrecord");
  data[200] ^= 0x40;
  WriteFileAtomic(dir + "/bad.tfrecord", data);
  Result fail = RunImgpipe({"inspect", "--json", dir + "/bad.tfrecord"});
  EXPECT_NE(fail.status, 0);
  auto f = JsonLines(fail.out).at(0);
  EXPECT_EQ(f["crc_errors"], 1);
  EXPECT_NE(f["error"].get<std::string>().find(dir + "/bad.tfrecord: offset "), std::string::npos);
  Result skip = RunImgpipe({"inspect", "--json", "--on-error", "skip", dir + "/bad.tfrecord"});
  auto s = JsonLines(skip.out).at(0);
  EXPECT_EQ(s["records"], 3);
  EXPECT_EQ(s["crc_errors"], 1);
}

TEST(Convert, KilledThenResumedIsByteIdentical) {
  std::string dir = FreshDir("kill");
  std::string input = dir + "/in";
  ASSERT_EQ(RunImgpipe({"synth", "--out", input, "--classes", "4", "--per-class", "60", "--size",
                 "128x96", "--seed", "3"}).status, 0);
  ASSERT_EQ(::symlink((kTestData + "/bad-images").c_str(), (input + "/class_001/bad").c_str()), 0);
  std::vector<std::string> args = {"convert", "--input", input, "--shard-size", "150KB",
                                   "--split", "train=0.8,validation=0.2", "--seed", "11",
                                   "--threads", "2", "--verify", "decode"};

  auto with_output = [&](const std::string& out, bool resume) {
    std::vector<std::string> a = args;
    a.insert(a.end(), {"--output", out});
    if (resume) a.push_back("--resume");
    return a;
  };
  auto started = std::chrono::steady_clock::now();
  Result reference = RunImgpipe(with_output(dir + "/reference", false));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_EQ(reference.status, 0) << reference.err;
  std::map<std::string, std::string> expected;
  Snapshot(dir + "/reference", "", &expected);
  ASSERT_GT(expected.size(), 20u);

  // Kill at several points through the run, resume each time, compare everything.
  for (double fraction : {0.15, 0.35, 0.55, 0.75, 0.9}) {
    std::string out = dir + "/killed_" + std::to_string(static_cast<int>(fraction * 100));
    pid_t pid = Start(with_output(out, false), out + ".log");
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds * fraction));
    ::kill(pid, SIGKILL);
    Wait(pid);
    Result resumed = RunImgpipe(with_output(out, true));
    ASSERT_EQ(resumed.status, 0) << resumed.err;
    std::map<std::string, std::string> actual;
    Snapshot(out, "", &actual);
    ASSERT_EQ(actual.size(), expected.size()) << "at " << fraction;
    for (auto& [name, bytes] : expected) {
      EXPECT_TRUE(actual[name] == bytes) << name << " differs after a kill at " << fraction;
    }
  }
  auto dataset = nlohmann::json::parse(expected["dataset.json"]);
  EXPECT_EQ(dataset["inputs"].get<int>(), dataset["written"].get<int>() + dataset["rejected"].get<int>());
  EXPECT_GT(dataset["rejected"].get<int>(), 0);
}

TEST(Convert, JsonSummaryAndInspectOfOurShards) {
  std::string dir = FreshDir("json");
  Result r = RunImgpipe({"convert", "--input", kTestData + "/images/photos-by-class", "--output",
                  dir + "/out", "--min-shards", "3", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary["written"], 47);
  EXPECT_EQ(summary["rejected"], 0);
  EXPECT_TRUE(summary["complete"].get<bool>());
  std::vector<std::string> args = {"inspect", "--json"};
  for (auto& s : summary["shards"]) args.push_back(dir + "/out/" + s["file"].get<std::string>());
  Result inspect = RunImgpipe(args);
  ASSERT_EQ(inspect.status, 0) << inspect.err;
  int records = 0;
  for (auto& f : JsonLines(inspect.out)) {
    records += f["records"].get<int>();
    EXPECT_EQ(f["index"], "ok");
    EXPECT_EQ(f["label_key"], "image/class/label");
  }
  EXPECT_EQ(records, 47);
}

TEST(Cli, BadArgumentsGiveUsageErrors) {
  EXPECT_NE(RunImgpipe({"convert", "--input", "x"}).status, 0);  // --output missing
  Result r = RunImgpipe({"convert", "--input", "/nonexistent", "--output", FreshDir("e") + "/o"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("/nonexistent"), std::string::npos);
  EXPECT_EQ(RunImgpipe({"--help"}).status, 0);
}

}  // namespace
}  // namespace imgpipe
