// End-to-end tests of the imgpipe binary, run as a real process.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>
#include <sys/mount.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/cli_test_util.h"
#include "image/augment_policy.h"
#include "image/codec.h"
#include "image/jpeg_test_util.h"
#include "util/file.h"
#include "testing/unprivileged_test_util.h"

extern char** environ;

namespace imgpipe {
namespace {

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

// A truncated shard, a zero-length file, a folder and an unreadable file (read by
// 'nobody' when the test runs as root): each named with its offset or its reason.
TEST(Inspect, DamagedAndUnreadableFilesNameThePathAndOffset) {
  std::string dir = FreshDir("damaged");
  std::string data = ReadFile(kTestData + "/tfrecord/tfx/mnist.tfrecord");
  // 1. Cut inside a record (mnist's records are 3,000+ bytes; the cut is in the second).
  std::string truncated = dir + "/truncated.tfrecord";
  WriteFileAtomic(truncated, data.substr(0, 5000));
  Result fail = RunImgpipe({"inspect", "--json", truncated});
  EXPECT_EQ(fail.status, 2);
  auto f = JsonLines(fail.out).at(0);
  EXPECT_EQ(f["records"], 1);
  std::string error = f["error"].get<std::string>();
  std::string offset = std::to_string(f["errors"][0]["offset"].get<uint64_t>());
  EXPECT_NE(offset, "0");
  EXPECT_EQ(error.rfind(truncated + ": offset " + offset + ": truncated record", 0), 0u) << error;
  Result skip = RunImgpipe({"inspect", "--json", "--on-error", "skip", truncated});
  EXPECT_EQ(skip.status, 2);
  auto s = JsonLines(skip.out).at(0);
  EXPECT_EQ(s["records"], 1);
  ASSERT_EQ(s["errors"].size(), 1u);
  EXPECT_EQ(s["errors"][0]["offset"], f["errors"][0]["offset"]);
  // 2. Zero length: an empty, clean file.
  WriteFileAtomic(dir + "/empty.tfrecord", "");
  Result empty = RunImgpipe({"inspect", "--json", dir + "/empty.tfrecord"});
  EXPECT_EQ(empty.status, 0) << empty.out << empty.err;
  EXPECT_EQ(JsonLines(empty.out).at(0)["records"], 0);
  // 3. A folder, and 4. an unreadable file: an error naming the path, and the other
  //    files are still inspected.
  MakeDirectories(dir + "/folder.tfrecord");
  WriteFileAtomic(dir + "/unreadable.tfrecord", data);
  MakeUnreadable(dir + "/unreadable.tfrecord");
  Result r = RunImgpipe({"inspect", "--json", dir + "/folder.tfrecord", dir + "/unreadable.tfrecord",
                         kTestData + "/tfrecord/tfx/mnist.tfrecord"},
                        /*unprivileged=*/true);
  EXPECT_EQ(r.status, 2) << r.err;
  auto files = JsonLines(r.out);
  ASSERT_EQ(files.size(), 3u) << r.out << r.err;
  EXPECT_EQ(files[0]["error"], dir + "/folder.tfrecord: size: Is a directory");
  EXPECT_EQ(files[1]["error"], dir + "/unreadable.tfrecord: open: Permission denied");
  EXPECT_EQ(files[2]["records"], 1000);
}

// Unmounts on scope exit.
struct MountGuard {
  std::string dir;
  ~MountGuard() {
    if (!dir.empty()) ::umount2(dir.c_str(), MNT_DETACH);
  }
};

// A disk that fills during convert: a 2 MB tmpfs (when the test may mount one; the
// ENOSPC path is also covered without one by RunConvert.DiskFullFailsCleanlyAndResumes)
// gets 12 MB of photos. The run fails naming the file and "No space left on device";
// every .tfrecord left is complete (inspect finds its records and index clean, and its
// part file agrees); after the disk grows, --resume gives what an uninterrupted run does.
TEST(Convert, DiskFullOnTmpfsFailsCleanlyAndResumes) {
  std::string dir = FreshDir("tmpfs");
  std::string out = dir + "/out";
  MakeDirectories(out);
  if (::mount("tmpfs", out.c_str(), "tmpfs", 0, "size=2m") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs here (" << std::strerror(errno) << ")";
  }
  MountGuard guard{out};
  std::vector<std::string> args = {"convert", "--input", kTestData + "/images/photos-by-class",
                                   "--shard-size", "512KB", "--threads", "2", "--output"};
  auto with = [&](const std::string& output, std::vector<std::string> more = {}) {
    std::vector<std::string> a = args;
    a.push_back(output);
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  Result full = RunImgpipe(with(out));
  EXPECT_EQ(full.status, 1) << full.err;
  EXPECT_NE(full.err.find("imgpipe: error: " + out + "/"), std::string::npos) << full.err;
  EXPECT_NE(full.err.find(": No space left on device"), std::string::npos) << full.err;

  std::vector<std::string> inspect = {"inspect", "--json"};
  for (const std::string& name : ListDirectory(out)) {
    EXPECT_EQ(name.find(kTemporarySuffix), std::string::npos) << "leftover " << name;
    if (name.size() > 9 && name.substr(name.size() - 9) == ".tfrecord") {
      inspect.push_back(out + "/" + name);
    }
  }
  ASSERT_GT(inspect.size(), 2u) << "no shard was finished before the disk filled";
  Result check = RunImgpipe(inspect);
  EXPECT_EQ(check.status, 0) << check.out << check.err;
  for (auto& f : JsonLines(check.out)) {
    EXPECT_EQ(f["index"], "ok") << f.dump();
    auto part = nlohmann::json::parse(ReadFile(out + "/.imgpipe/" + BaseName(f["path"].get<std::string>()) + ".json"));
    EXPECT_EQ(part["records"], f["records"]) << f.dump();
  }
  for (const std::string& name : ListDirectory(out + "/.imgpipe")) {
    EXPECT_EQ(name.find(kTemporarySuffix), std::string::npos) << "leftover .imgpipe/" << name;
  }

  ASSERT_EQ(::mount("tmpfs", out.c_str(), "tmpfs", MS_REMOUNT, "size=64m"), 0) << std::strerror(errno);
  Result resumed = RunImgpipe(with(out, {"--resume"}));
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  Result reference = RunImgpipe(with(dir + "/reference"));
  ASSERT_EQ(reference.status, 0) << reference.err;
  std::map<std::string, std::string> expected, actual;
  Snapshot(dir + "/reference", "", &expected);
  Snapshot(out, "", &actual);
  ASSERT_EQ(actual.size(), expected.size());
  for (auto& [name, bytes] : expected) EXPECT_TRUE(actual[name] == bytes) << name << " differs";
  auto dataset = nlohmann::json::parse(actual["dataset.json"]);
  EXPECT_EQ(dataset["inputs"].get<int>(), dataset["written"].get<int>() + dataset["rejected"].get<int>());
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

  // Kill at several points through the run, resume each time, compare everything: five
  // spread evenly, and three more drawn from a seeded generator (printed on failure).
  std::vector<double> fractions = {0.15, 0.35, 0.55, 0.75, 0.9};
  std::mt19937 rng(20240229);
  for (int i = 0; i < 3; ++i) fractions.push_back(std::uniform_real_distribution<double>(0.05, 0.98)(rng));
  for (double fraction : fractions) {
    std::string out = dir + "/killed_" + std::to_string(static_cast<int>(fraction * 1000));
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

// The records of the shards a `convert --json` summary lists (in `output`), in shard
// order, decoded independently of our codec: src/record/testdata_check_example.py parses
// the framing itself and decodes with a message class built from TensorFlow's field
// numbers. Fails the test if it cannot.
std::vector<nlohmann::json> RecordsDecodedWithProtobuf(const std::string& output,
                                                       const nlohmann::json& summary) {
  const std::string script = std::string(IMGPIPE_SOURCE_DIR) + "/src/record/testdata_check_example.py";
  std::vector<nlohmann::json> records;
  for (const auto& shard : summary["shards"]) {
    const std::string path = JoinPath(output, shard["file"].get<std::string>());
    const std::string json_path = path + ".decoded.json";
    EXPECT_EQ(std::system(("/usr/bin/python3 '" + script + "' '" + path + "' > '" + json_path + "'").c_str()), 0);
    for (auto& r : nlohmann::json::parse(ReadFile(json_path))) records.push_back(r);
  }
  return records;
}

// The first value of a bytes feature as the script prints it (hex), as bytes.
std::string FirstBytes(const nlohmann::json& feature) {
  std::string hex = feature["values"][0].get<std::string>(), out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

// `imgpipe bench` reads the shards in `data` with `preset` (a short run, one thread).
void ExpectThePipelineReads(const std::string& data, const std::string& preset) {
  Result bench = RunImgpipe({"bench", "--data", data, "--preset", preset, "--seconds", "1",
                             "--warmup", "0", "--threads", "1", "--json"});
  ASSERT_EQ(bench.status, 0) << bench.err;
  EXPECT_GT(nlohmann::json::parse(bench.out)["images_per_s"].get<double>(), 0) << preset;
}

// Our shards, decoded with TensorFlow's field numbers (RecordsDecodedWithProtobuf).
TEST(Convert, ShardsDecodeWithTensorFlowsFieldNumbers) {
  std::string dir = FreshDir("reflection");
  ASSERT_EQ(RunImgpipe({"synth", "--out", dir + "/in", "--classes", "2", "--per-class", "3",
                        "--size", "64x48"}).status, 0);
  Result convert = RunImgpipe({"convert", "--input", dir + "/in", "--output", dir + "/out", "--json"});
  ASSERT_EQ(convert.status, 0) << convert.err;
  std::vector<nlohmann::json> records =
      RecordsDecodedWithProtobuf(dir + "/out", nlohmann::json::parse(convert.out));
  ASSERT_EQ(records.size(), 6u);
  const auto text = FirstBytes;
  for (auto& r : records) {
    EXPECT_EQ(r["image/encoded"]["kind"], "bytes");
    EXPECT_EQ(text(r["image/encoded"]).substr(0, 2), "\xff\xd8");
    EXPECT_EQ(text(r["image/format"]), "JPEG");
    EXPECT_EQ(r["image/height"]["values"][0], 48);
    EXPECT_EQ(r["image/width"]["values"][0], 64);
    EXPECT_EQ(r["image/channels"]["values"][0], 3);
    int64_t label = r["image/class/label"]["values"][0].get<int64_t>();
    std::string filename = text(r["image/filename"]);
    EXPECT_EQ(filename.substr(0, filename.find('/')), text(r["image/class/text"]));
    EXPECT_EQ(text(r["image/class/text"]), label == 0 ? "class_000" : "class_001");
  }
}

// --max-resolution through the binary, with --verify decode: every photo-by-class photo
// (640 px and wider) stored at 320 px on its longer side; the records decode with
// protobuf in Python (TensorFlow's field numbers) and hold the original size.
TEST(Convert, MaxResolutionShardsDecodeWithProtobuf) {
  std::string dir = FreshDir("max_resolution");
  Result convert = RunImgpipe({"convert", "--input", kTestData + "/images/photos-by-class",
                               "--output", dir + "/out", "--max-resolution", "320",
                               "--verify", "decode", "--min-shards", "3", "--json"});
  ASSERT_EQ(convert.status, 0) << convert.err;
  auto summary = nlohmann::json::parse(convert.out);
  EXPECT_EQ(summary["written"], 47);
  int records = 0;
  for (const nlohmann::json& r : RecordsDecodedWithProtobuf(dir + "/out", summary)) {
    ++records;
    ImageInfo info = ReadImageInfo(FirstBytes(r["image/encoded"]), "image/encoded");
    int64_t height = r["image/height"]["values"][0], width = r["image/width"]["values"][0];
    EXPECT_EQ(height, info.height);
    EXPECT_EQ(width, info.width);
    EXPECT_EQ(std::max(height, width), 320);
    EXPECT_EQ(r["image/original_height"]["kind"], "int64");
    int64_t original_height = r["image/original_height"]["values"][0];
    int64_t original_width = r["image/original_width"]["values"][0];
    EXPECT_GE(std::max(original_height, original_width), 640);
    // The same shape: the stored width is the original's scaled, within rounding.
    double scale = 320.0 / std::max(original_height, original_width);
    EXPECT_LE(std::abs(width - original_width * scale), 0.5 + 1e-9);
    EXPECT_LE(std::abs(height - original_height * scale), 0.5 + 1e-9);
  }
  EXPECT_EQ(records, 47);
  ExpectThePipelineReads(dir + "/out", "train");
}

// --jpeg-restart-interval 1 through the binary, on 24 hymenoptera photos (a manifest):
// every stored JPEG has a restart marker every MCU and decodes to exactly the input
// file's pixels; the records decode with protobuf in Python (TensorFlow's field
// numbers); the summary counts the rewritten JPEGs, also when every shard is resumed;
// the pipeline reads the shards.
TEST(Convert, JpegRestartIntervalShardsKeepThePixelsAndDecodeWithProtobuf) {
  std::string dir = FreshDir("restart");
  std::string manifest = "path,label\n";
  for (const std::string cls : {"ants", "bees"}) {
    const std::string folder = kTestData + "/images/hymenoptera/val/" + cls;
    std::vector<std::string> names = ListDirectory(folder);
    std::sort(names.begin(), names.end());
    for (size_t i = 0; i < 12; ++i) manifest += JoinPath(folder, names[i]) + "," + cls + "\n";
  }
  WriteFileAtomic(dir + "/photos.csv", manifest);
  const std::vector<std::string> args = {"convert", "--input", dir + "/photos.csv", "--output",
                                         dir + "/out", "--jpeg-restart-interval", "1",
                                         "--min-shards", "2"};
  std::vector<std::string> with_json = args;
  with_json.push_back("--json");
  Result convert = RunImgpipe(with_json);
  ASSERT_EQ(convert.status, 0) << convert.err;
  auto summary = nlohmann::json::parse(convert.out);
  EXPECT_EQ(summary["written"], 24);
  EXPECT_EQ(summary["restart_markers_added"], 24);
  int records = 0;
  for (const nlohmann::json& r : RecordsDecodedWithProtobuf(dir + "/out", summary)) {
    ++records;
    const std::string jpeg = FirstBytes(r["image/encoded"]);
    const std::string input = FirstBytes(r["image/filename"]);  // the manifest's path
    EXPECT_EQ(JpegLayoutOf(jpeg).restart_interval, 1) << input;
    const Image stored = DecodeImage(jpeg, input), original = DecodeImage(ReadFile(input), input);
    EXPECT_TRUE(stored.width == original.width && stored.height == original.height &&
                stored.pixels == original.pixels) << input;
  }
  EXPECT_EQ(records, 24);
  std::vector<std::string> resumed = args;
  resumed.push_back("--resume");
  Result again = RunImgpipe(resumed);
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_NE(again.out.find("restart markers (every 1 MCUs) added to 24 of 24 JPEGs"),
            std::string::npos) << again.out;
  ExpectThePipelineReads(dir + "/out", "train");
  ExpectThePipelineReads(dir + "/out", "eval");
}

// imgpipe bench --json: the documented fields, and --layout sets the output's bytes per
// image (uint8 NHWC: size*size*3; float32 NCHW: 4 times that).
TEST(Bench, JsonReportsRatesStagesAndHonoursTheLayout) {
  std::string dir = FreshDir("bench");
  ASSERT_EQ(RunImgpipe({"synth", "--out", dir + "/in", "--classes", "2", "--per-class", "8",
                        "--size", "64x48"}).status, 0);
  ASSERT_EQ(RunImgpipe({"convert", "--input", dir + "/in", "--output", dir + "/out"}).status, 0);
  for (const std::string layout : {"uint8", "float32"}) {
    SCOPED_TRACE(layout);
    Result r = RunImgpipe({"bench", "--data", dir + "/out", "--seconds", "0.5", "--warmup", "0.1",
                           "--threads", "1", "--batch-size", "4", "--image-size", "32",
                           "--layout", layout, "--json"});
    ASSERT_EQ(r.status, 0) << r.err;
    auto report = nlohmann::json::parse(r.out);
    EXPECT_GT(report["images_per_s"].get<double>(), 0);
    EXPECT_EQ(report["threads"], 1);
    EXPECT_GE(report["cpu_utilization"].get<double>(), 0);
    bool found_batch = false;
    for (auto& stage : report["stages"]) {
      if (stage["name"] != "batch") continue;
      found_batch = true;
      double per_image = stage["mb_per_s"].get<double>() * 1e6 /
                         (stage["elements_per_s"].get<double>() * 4);
      EXPECT_NEAR(per_image, (layout == "uint8" ? 1 : 4) * 32 * 32 * 3, 1) << stage.dump();
    }
    EXPECT_TRUE(found_batch) << r.out;
  }
  // The ladder: four rows, and the pipeline against its ceiling.
  Result r = RunImgpipe({"bench", "--data", dir + "/out", "--images", dir + "/in", "--ladder",
                         "--seconds", "0.3", "--warmup", "0.1", "--threads", "1",
                         "--batch-size", "4", "--image-size", "32", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto ladder = nlohmann::json::parse(r.out);
  ASSERT_EQ(ladder["ladder"].size(), 4u);
  for (auto& row : ladder["ladder"]) EXPECT_GT(row["images_per_s"].get<double>(), 0) << row.dump();
  EXPECT_DOUBLE_EQ(ladder["ladder"][0]["ratio_to_row_1"].get<double>(), 1.0);
  for (const char* key : {"single_thread_preset_images_per_s", "parallel_preset_loops_images_per_s",
                          "ceiling_check_pipeline_images_per_s", "pipeline_of_single_times_threads",
                          "pipeline_of_parallel_loops"}) {
    EXPECT_GT(ladder[key].get<double>(), 0) << key;
  }
}

// imgpipe bench takes torchvision's augmentation flags: the train preset runs the policy
// and random erasing, whose time the cost breakdown shows; a bad policy name fails
// listing the names; the eval preset refuses a policy.
TEST(Bench, AutoAugmentAndRandomErase) {
  const std::string data = kTestData + "/images/hymenoptera/val";
  const std::vector<std::string> quick = {"--seconds", "0.5", "--warmup", "0.1", "--threads", "1",
                                          "--batch-size", "4", "--image-size", "64", "--json"};
  std::vector<std::string> args = {"bench", "--data", data, "--auto-augment", "ta_wide", "--random-erase",
                                   "0.1", "--cost-images", "8", "--cost-rounds", "1"};
  args.insert(args.end(), quick.begin(), quick.end());
  Result r = RunImgpipe(args);
  ASSERT_EQ(r.status, 0) << r.err;
  auto report = nlohmann::json::parse(r.out);
  EXPECT_GT(report["images_per_s"].get<double>(), 0);
  EXPECT_GT(report["per_image_costs"]["augment_ms"].get<double>(), 0) << r.out;
  Result bad = RunImgpipe({"bench", "--data", data, "--auto-augment", "autoaugment"});
  EXPECT_NE(bad.status, 0);
  for (const std::string& name : AugmentPolicyNames()) {
    EXPECT_NE(bad.err.find(name), std::string::npos) << name << " in: " << bad.err;
  }
  args = {"bench", "--data", data, "--preset", "eval", "--auto-augment", "ra"};
  args.insert(args.end(), quick.begin(), quick.end());
  Result eval = RunImgpipe(args);
  EXPECT_EQ(eval.status, 1);
  EXPECT_NE(eval.err.find("preset 'eval' takes neither"), std::string::npos) << eval.err;
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
