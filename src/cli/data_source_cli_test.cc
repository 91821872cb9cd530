// imgpipe bench, train, extract and inspect on TF-slim- and TFDS-style shards written by
// Python's protobuf (scripts/make_tf_datasets.py, fixture tf_datasets), not by imgpipe.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <tuple>

#include "cli/cli_test_util.h"
#include "pipeline/label_test_util.h"

namespace imgpipe {
namespace {

using ::testing::HasSubstr;

const std::string kSlim = std::string(IMGPIPE_TF_DATASETS_DIR) + "/tf-slim";
const std::string kTfds = std::string(IMGPIPE_TF_DATASETS_DIR) + "/tfds";

// The args of a tiny one-epoch training run on `data`.
std::vector<std::string> TinyTraining(const std::string& data, const std::string& checkpoints) {
  return {"train", "--data", data, "--model", "simple-cnn", "--no-augment", "--image-size", "32",
          "--batch-size", "4", "--epochs", "1", "--threads", "1", "--checkpoint-dir", checkpoints,
          "--json"};
}

// The int64 values of a '<i8' .npy file (header, then little-endian values).
std::vector<int64_t> ReadInt64Npy(const std::string& path) {
  std::string bytes = ReadFile(path);
  const uint16_t header = static_cast<uint8_t>(bytes[8]) | static_cast<uint8_t>(bytes[9]) << 8;
  std::vector<int64_t> values((bytes.size() - 10 - header) / 8);
  std::memcpy(values.data(), bytes.data() + 10 + header, values.size() * 8);
  return values;
}

TEST(DataSourceCliTest, InspectNamesTheLayoutItRecognised) {
  for (const auto& [dir, layout, offset, image_key] :
       {std::tuple{kSlim, "tf-slim", 1, "image/encoded"}, std::tuple{kTfds, "tfds", 0, "image"}}) {
    Result r = RunImgpipe({"inspect", "--json", dir});
    ASSERT_EQ(r.status, 0) << r.err;
    std::vector<nlohmann::json> lines = JsonLines(r.out);
    ASSERT_EQ(lines.size(), dir == kSlim ? 4u : 3u) << r.out;  // the folder, then its files
    EXPECT_EQ(lines[0]["layout"], layout);
    EXPECT_EQ(lines[0]["label_offset"], offset);
    EXPECT_EQ(lines[0]["image_key"], image_key);
    EXPECT_EQ(lines[0]["classes"], 2);
  }
  Result text = RunImgpipe({"inspect", kSlim});
  EXPECT_THAT(text.out, HasSubstr("layout tf-slim"));
  EXPECT_THAT(text.out, HasSubstr("names from image/class/text"));
}

TEST(DataSourceCliTest, BenchReadsBothLayoutsWithoutErrors) {
  for (const std::string& dir : {kSlim, kTfds}) {
    Result r = RunImgpipe({"bench", "--data", dir, "--seconds", "1", "--warmup", "0.2", "--batch-size",
                           "4", "--image-size", "32", "--threads", "1", "--json"});
    ASSERT_EQ(r.status, 0) << r.err;
    nlohmann::json out = nlohmann::json::parse(r.out);
    EXPECT_GT(out["images"].get<int64_t>(), 0) << dir;
    for (const nlohmann::json& stage : out["stages"]) EXPECT_EQ(stage["errors"], 0) << stage.dump();
    EXPECT_THAT(r.err, HasSubstr("data " + dir + ": layout"));
  }
}

TEST(DataSourceCliTest, TrainAndExtractWorkOnBothLayouts) {
  struct Case {
    std::string data, split, layout;
    std::vector<int64_t> labels;  // extract's labels of `split`, 0-based
  };
  for (const Case& c : {Case{kSlim, "validation", "tf-slim", {0, 0, 0, 1, 1, 1}},
                        Case{kTfds, "test", "tfds", {0, 0, 0, 1, 1, 1}}}) {
    const std::string dir = FreshDir("train_" + c.layout);
    Result train = RunImgpipe(TinyTraining(c.data, JoinPath(dir, "checkpoints")));
    ASSERT_EQ(train.status, 0) << train.err;
    nlohmann::json summary = JsonLines(train.out).back();
    EXPECT_EQ(summary["event"], "summary");
    EXPECT_EQ(summary["val_records"], 6) << c.layout;  // validation, else test
    EXPECT_THAT(train.err, HasSubstr("layout " + c.layout));

    Result extract = RunImgpipe({"extract", "--data", c.data, "--split", c.split, "--model",
                                 JoinPath(dir, "checkpoints/last.pt"), "--out", JoinPath(dir, "features"),
                                 "--image-size", "32", "--threads", "1", "--json"});
    ASSERT_EQ(extract.status, 0) << extract.err;
    EXPECT_EQ(nlohmann::json::parse(extract.out)["failures"], 0);
    EXPECT_EQ(ReadInt64Npy(JoinPath(dir, "features/labels-00000.npy")), c.labels) << c.layout;
  }
}

TEST(DataSourceCliTest, ClassifyTakesClassNamesFromADataFolder) {
  const std::string dir = FreshDir("classify_names");
  ASSERT_EQ(RunImgpipe(TinyTraining(kTfds, dir)).status, 0);
  const std::string image = std::string(IMGPIPE_TESTDATA_DIR) + "/images/hymenoptera/val/bees/10870992_eebeeb3a12.jpg";
  Result r = RunImgpipe({"classify", "--model", JoinPath(dir, "last.pt"), "--labels", kSlim,
                         "--image-size", "32", "--json", image});
  ASSERT_EQ(r.status, 0) << r.err;
  std::set<std::string> labels;
  const nlohmann::json out = nlohmann::json::parse(r.out);
  for (const nlohmann::json& c : out["top"]) labels.insert(c["label"].get<std::string>());
  EXPECT_EQ(labels, (std::set<std::string>{"ant, emmet, pismire", "bee"})) << r.out;  // image/class/text
}

TEST(DataSourceCliTest, AWrongImageKeyListsTheKeysAndFlags) {
  Result r = RunImgpipe({"bench", "--data", kTfds, "--image-key", "image/encoded", "--seconds", "1"});
  EXPECT_NE(r.status, 0);
  EXPECT_THAT(r.err, HasSubstr("no bytes feature 'image/encoded' (--image-key)"));
  EXPECT_THAT(r.err, HasSubstr("file_name (bytes), image (bytes), label (int64)"));
  EXPECT_THAT(r.err, HasSubstr("--label-key"));
}

TEST(DataSourceCliTest, ALabelOutsideTheClassesStopsTrainingNamingFileOffsetAndLabel) {
  const std::string dir = FreshDir("label_outside");
  std::vector<std::string> args = TinyTraining(kTfds, JoinPath(dir, "checkpoints"));
  args.insert(args.end(), {"--label-offset", "-1"});
  Result r = RunImgpipe(args);
  EXPECT_NE(r.status, 0);
  EXPECT_THAT(r.err, HasSubstr("hymenoptera-"));
  EXPECT_THAT(r.err, HasSubstr(": offset "));
  EXPECT_THAT(r.err, HasSubstr("label 1 (label, label offset -1) is outside the 2 classes"));
}

// Issue 44: 40 files without labels.txt whose first records (the resolver's sample) hold
// neither label 0 nor the highest, 9.
TEST(DataSourceCliTest, InspectOfShardsWithoutLabelMetadataSaysTheClassesAreUnknown) {
  const std::string dir = JoinPath(FreshDir("inspect_label_less"), "data");
  pipeline::WriteLabelLessShards(dir);
  Result r = RunImgpipe({"inspect", "--json", dir});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json folder = JsonLines(r.out).front();
  EXPECT_TRUE(folder["classes"].is_null()) << folder.dump();
  EXPECT_EQ(folder["classes_from"], "");
  EXPECT_EQ(folder["label_offset"], 0);
  EXPECT_EQ(folder["labels_read"]["all"], false);
  EXPECT_EQ(folder["labels_read"]["records"], 40 * 51);
  Result text = RunImgpipe({"inspect", dir});
  EXPECT_THAT(text.out, HasSubstr("classes: unknown: no labels.txt, dataset.json or dataset_info.json"));
  EXPECT_THAT(text.out, HasSubstr("stored 1..8 in the 2040 record(s) read (the first of each file, not all)"));
}

// The args of a two-step training run on `data` (no validation split).
std::vector<std::string> TwoSteps(const std::string& data) {
  return {"train", "--data", data, "--model", "simple-cnn", "--no-augment", "--image-size", "32",
          "--batch-size", "8", "--max-steps", "2", "--threads", "1", "--intra-op-threads", "1", "--json"};
}

TEST(DataSourceCliTest, TrainReadsEveryLabelOnceWhenNothingNamesTheClasses) {
  const std::string dir = JoinPath(FreshDir("train_label_less"), "data");
  pipeline::WriteLabelLessShards(dir);
  Result r = RunImgpipe(TwoSteps(dir));
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<nlohmann::json> events = JsonLines(r.out);
  EXPECT_EQ(events.front()["event"], "start");
  EXPECT_EQ(events.front()["classes"], 10);
  EXPECT_EQ(events.back()["steps"], 2);
  EXPECT_THAT(r.err, HasSubstr("classes: 10 from every record's label"));
  EXPECT_THAT(r.err, HasSubstr("stored 0..9 in all 2400 record(s)"));
  EXPECT_TRUE(PathExists(JoinPath(dir, "labels.scan.json")));
  // The next run reads the kept labels, not the data.
  Result again = RunImgpipe(TwoSteps(dir));
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_THAT(again.err, HasSubstr("kept in " + JoinPath(dir, "labels.scan.json") + ", read from there"));
}

TEST(DataSourceCliTest, TrainWithTooFewNumClassesStopsBeforeTheFirstStepNamingLabelAndFile) {
  const std::string dir = JoinPath(FreshDir("train_wrong_classes"), "data");
  const pipeline::LabelLessShards shape;
  const pipeline::LabelLessFiles files = pipeline::WriteLabelLessShards(dir, shape);
  std::vector<std::string> args = TwoSteps(dir);
  args.insert(args.end(), {"--num-classes", "9"});
  Result r = RunImgpipe(args);
  EXPECT_NE(r.status, 0);
  EXPECT_THAT(r.err, HasSubstr(files.paths[shape.max_file] + ": offset " + std::to_string(files.max_offset) +
                               ": label 9 (image/class/label, label offset 0) is outside the 9 classes [0, 9) "
                               "of --num-classes"));
  for (const nlohmann::json& e : JsonLines(r.out)) EXPECT_NE(e["event"], "step") << e.dump();
  // A right count (or a larger one) trains, and says where the count came from.
  args.back() = "12";
  Result right = RunImgpipe(args);
  ASSERT_EQ(right.status, 0) << right.err;
  EXPECT_EQ(JsonLines(right.out).front()["classes"], 12);
  EXPECT_THAT(right.err, HasSubstr("classes: 12 from --num-classes"));
}

}  // namespace
}  // namespace imgpipe
