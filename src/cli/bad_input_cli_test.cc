// imgpipe bench and train on input whose every element is bad end with the pipeline's
// stop error (pipeline/bad_element.h) within seconds, instead of skipping the same
// records forever; train on input with some bad images runs its epochs; and a GIF goes
// through convert and bench.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "cli/cli_test_util.h"
#include "image/codec.h"
#include "record/example.h"
#include "record/tfrecord_writer.h"

namespace imgpipe {
namespace {

using Clock = std::chrono::steady_clock;

// What the shards of a test data set hold.
enum class BadRecords {
  kCorruptFraming,      // bytes that are no TFRecord (every CRC fails)
  kUndecodableImages,   // Examples whose image/encoded is not an image
  kWithoutImageKey,     // Examples without image/encoded
};

// A folder of three train-0000N-of-00003.tfrecord shards of 8 bad records each, and a
// labels.txt of two classes.
std::string BadDataSet(const std::string& name, BadRecords kind) {
  std::string dir = FreshDir(name);
  for (int shard = 0; shard < 3; ++shard) {
    const std::string path = JoinPath(dir, "train-0000" + std::to_string(shard) + "-of-00003.tfrecord");
    if (kind == BadRecords::kCorruptFraming) {
      WriteFileAtomic(path, std::string(200 + shard, static_cast<char>(0x5A + shard)), false);
      continue;
    }
    std::unique_ptr<WritableFile> file = OpenWritableFile(path);
    TfRecordWriter writer(*file);
    for (int i = 0; i < 8; ++i) {
      Example example;
      const std::string key = kind == BadRecords::kWithoutImageKey ? "picture" : "image/encoded";
      AddBytesFeature(example.mutable_features(), key, "not an image " + std::to_string(i));
      AddInt64Feature(example.mutable_features(), "image/class/label", i % 2);
      writer.Write(SerializeExample(example));
    }
    writer.Close();
    file->Close();
  }
  WriteFileAtomic(JoinPath(dir, "labels.txt"), "a\nb\n", false);
  return dir;
}

// Runs imgpipe with `args`; expects a non-zero exit within 60 s (the run would go on
// for `--seconds`/epochs far longer) whose stderr has `expected`.
void ExpectStopsWithin(const std::vector<std::string>& args, const std::string& expected) {
  const Clock::time_point start = Clock::now();
  Result r = RunImgpipe(args);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_LT(seconds, 60);
  EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
}

std::vector<std::string> BenchArgs(const std::string& data) {
  return {"bench", "--data", data, "--seconds", "600", "--warmup", "1", "--threads", "2",
          "--batch-size", "4", "--image-size", "32"};
}

std::vector<std::string> TrainArgs(const std::string& data) {
  return {"train", "--data", data, "--model", "simple-cnn", "--image-size", "32",
          "--batch-size", "4", "--epochs", "1000", "--threads", "2", "--intra-op-threads", "1",
          "--checkpoint-dir", data + "/checkpoints"};
}

// Two shards of 10 records, 3 of them undecodable (one the last of its shard): train
// runs its epochs to the end, each batch full (the bad records get stand-ins), and the
// summary counts them.
TEST(BadInputCli, TrainWithSomeUndecodableImagesRunsEveryEpoch) {
  std::string dir = FreshDir("train_some_bad");
  const std::set<int> bad = {2, 9, 14};
  for (int shard = 0; shard < 2; ++shard) {
    std::unique_ptr<WritableFile> file =
        OpenWritableFile(JoinPath(dir, "train-0000" + std::to_string(shard) + "-of-00002.tfrecord"));
    TfRecordWriter writer(*file);
    for (int i = 10 * shard; i < 10 * shard + 10; ++i) {
      Image image;
      image.width = image.height = 24;
      image.channels = 3;
      image.pixels.assign(24 * 24 * 3, static_cast<uint8_t>(40 * (i % 4) + 20));
      Example example;
      AddBytesFeature(example.mutable_features(), "image/encoded",
                      bad.count(i) ? "not an image " + std::to_string(i) : EncodeJpeg(image));
      AddInt64Feature(example.mutable_features(), "image/class/label", i % 4);
      writer.Write(SerializeExample(example));
    }
    writer.Close();
    file->Close();
  }
  WriteFileAtomic(JoinPath(dir, "labels.txt"), "a\nb\nc\nd\n", false);
  std::vector<std::string> args = TrainArgs(dir);
  args[std::find(args.begin(), args.end(), "--epochs") - args.begin() + 1] = "3";
  args.push_back("--json");
  Result r = RunImgpipe(args);
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json summary = JsonLines(r.out).back();
  EXPECT_EQ(summary["event"], "summary");
  EXPECT_EQ(summary["epochs"], 3);
  EXPECT_EQ(JsonLines(r.out).front()["steps_per_epoch"], 5);  // 20 records in batches of 4
  EXPECT_EQ(summary["steps"], 15);
  // 3 passes over the 20 records: 9 stand-ins at least (the pipeline runs ahead of the
  // steps, so it may have made more, and its workers may have met more bad records).
  EXPECT_GE(summary["stand_ins"].get<int64_t>(), 9);
  EXPECT_GE(summary["bad_records"].get<int64_t>(), summary["stand_ins"].get<int64_t>());
}

// The original bug: bench on a folder of three corrupt shards ran for 30 minutes. Now
// resolving --data (pipeline/data_source.h) finds no good record to read the keys from
// and says so, naming the first corrupt one.
TEST(BadInputCli, BenchOnCorruptShardsStops) {
  std::string data = BadDataSet("bench_corrupt", BadRecords::kCorruptFraming);
  ExpectStopsWithin(BenchArgs(data), data + "/train-00000-of-00003.tfrecord: offset 0: ");
  ExpectStopsWithin(BenchArgs(data), "no good record in any of the 3 TFRecord file(s)");
}

TEST(BadInputCli, BenchOnUndecodableImagesStops) {
  std::string data = BadDataSet("bench_undecodable", BadRecords::kUndecodableImages);
  // An epoch of 24 bad records ends before the 'in a row' rule's count: the pass rule.
  ExpectStopsWithin(BenchArgs(data), "no good element in a whole pass over the input: 24 elements skipped");
  ExpectStopsWithin(BenchArgs(data), "not an image (unknown signature");
}

// Records without an image key stop at resolving --data, which lists the keys found and
// the flags (the pipeline's stop rule for bad elements is the undecodable tests').
TEST(BadInputCli, BenchOnRecordsWithoutTheImageKeyStops) {
  std::string data = BadDataSet("bench_no_key", BadRecords::kWithoutImageKey);
  ExpectStopsWithin(BenchArgs(data), "no feature holds an encoded image; the record's keys: "
                                     "image/class/label (int64), picture (bytes)");
}

TEST(BadInputCli, TrainOnUndecodableImagesStops) {
  std::string data = BadDataSet("train_undecodable", BadRecords::kUndecodableImages);
  ExpectStopsWithin(TrainArgs(data), "no good element in a whole pass over the input: 24 elements skipped");
}

TEST(BadInputCli, TrainOnRecordsWithoutTheImageKeyStops) {
  std::string data = BadDataSet("train_no_key", BadRecords::kWithoutImageKey);
  ExpectStopsWithin(TrainArgs(data), "Name the image feature with --image-key KEY");
}

// Train counts the records of its shards first: corrupt framing stops it there, naming
// the file and offset.
TEST(BadInputCli, TrainOnCorruptShardsStops) {
  std::string data = BadDataSet("train_corrupt", BadRecords::kCorruptFraming);
  ExpectStopsWithin(TrainArgs(data), data + "/train-00000-of-00003.tfrecord: offset 0: ");
}

// The photograph set's GIF is converted (re-encoded as JPEG), not rejected, and both its
// shard and the image folder (the GIF decoded in the pipeline) go through bench.
TEST(BadInputCli, GifGoesThroughConvertAndBench) {
  std::string dir = FreshDir("gif");
  const std::string ants = JoinPath(dir, "in/ants");
  MakeDirectories(ants);
  const std::string gif = kTestData + "/images/hymenoptera/train/ants/imageNotFound.gif";
  WriteFileAtomic(JoinPath(ants, "imageNotFound.gif"), ReadFile(gif), false);
  Result convert = RunImgpipe({"convert", "--input", dir + "/in", "--output", dir + "/out",
                               "--verify", "decode", "--json"});
  ASSERT_EQ(convert.status, 0) << convert.err;
  auto summary = nlohmann::json::parse(convert.out);
  EXPECT_EQ(summary["written"], 1) << convert.out;
  EXPECT_EQ(summary["rejected"], 0) << convert.out;
  for (const std::string& data : {dir + "/out", dir + "/in"}) {
    SCOPED_TRACE(data);
    Result bench = RunImgpipe({"bench", "--data", data, "--seconds", "0.3", "--warmup", "0.1",
                               "--threads", "1", "--batch-size", "1", "--image-size", "32", "--json"});
    ASSERT_EQ(bench.status, 0) << bench.err;
    auto report = nlohmann::json::parse(bench.out);
    EXPECT_GT(report["images_per_s"].get<double>(), 0);
    for (auto& stage : report["stages"]) EXPECT_EQ(stage.value("errors", 0), 0) << stage.dump();
  }
}

}  // namespace
}  // namespace imgpipe
