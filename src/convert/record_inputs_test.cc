// imgpipe convert on TFRecord input: the TF-slim and TFDS shards that
// scripts/make_tf_datasets.py writes with TensorFlow's conventions (fixture tf_datasets)
// become imgpipe shards with the same pixels, 0-based labels, class names and the
// other features kept; workers, finalize and corrupt records as for image inputs.
#include "convert/record_inputs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <set>

#include "convert/converter.h"
#include "image/codec.h"
#include "pipeline/data_source.h"
#include "record/example.h"
#include "record/image_feature_keys.h"
#include "record/tfrecord_reader.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe {
namespace {

const std::string kSlim = std::string(IMGPIPE_TF_DATASETS_DIR) + "/tf-slim";
const std::string kTfds = std::string(IMGPIPE_TF_DATASETS_DIR) + "/tfds";

std::string FreshDir(const std::string& name) {
  std::string dir = JoinPath(::testing::TempDir(),
                             "record_inputs_" + std::to_string(::getpid()) + "_" + name);
  EXPECT_EQ(std::system(("rm -rf '" + dir + "'").c_str()), 0);
  return dir;
}

// Every record of the TFRecord files in `dir`, by split: (split, Example).
std::vector<std::pair<std::string, Example>> Records(const std::string& dir) {
  std::vector<std::pair<std::string, Example>> out;
  for (const pipeline::TfRecordFile& file : pipeline::FindTfRecordFiles(dir)) {
    TfRecordReader reader(file.path);
    std::string data;
    while (reader.Next(&data)) {
      out.emplace_back(file.split, ParseExample(data, file.path, reader.record_offset()));
    }
  }
  return out;
}

std::string Bytes(const Example& e, const std::string& key) {
  std::optional<std::string_view> v = GetBytesFeature(e.features(), key);
  return v ? std::string(*v) : std::string("<none>");
}

std::vector<uint8_t> Pixels(const std::string& jpeg) {
  return DecodeImage(jpeg, "record", DecodeOptions{}).pixels;
}

ConvertOptions Options(const std::string& input, const std::string& output) {
  ConvertOptions o;
  o.input = input;
  o.output = output;
  o.threads = 2;
  o.plan.shard_bytes = 400'000;  // re-sharded: several shards per split
  return o;
}

std::vector<std::string> NonEmptyLinesOf(const std::string& text) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    if (end > pos) lines.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return lines;
}

// Each source record has one output record: same split, same pixels, the class index
// the resolver maps its label to, its class name, and its other features.
void ExpectSameRecords(const std::string& source_dir, const std::string& output,
                       const std::string& source_filename_key) {
  pipeline::DataSource source = pipeline::ResolveDataSource(source_dir);
  std::map<std::string, std::pair<std::string, Example>> by_name;
  for (auto& [split, e] : Records(source_dir)) {
    by_name[Bytes(e, source_filename_key)] = {split.empty() ? "train" : split, e};
  }
  std::vector<std::pair<std::string, Example>> converted = Records(output);
  ASSERT_EQ(converted.size(), by_name.size());
  std::vector<std::string> class_names = NonEmptyLinesOf(ReadFile(JoinPath(output, "labels.txt")));
  for (auto& [split, e] : converted) {
    std::string name = Bytes(e, image_keys::kFilename);
    ASSERT_TRUE(by_name.count(name)) << name;
    const auto& [source_split, original] = by_name[name];
    EXPECT_EQ(split, source_split) << name;
    pipeline::ImageView view =
        pipeline::ViewImage(original.features(), source.schema, source_dir, 0);
    EXPECT_EQ(*GetInt64Feature(e.features(), image_keys::kLabel), view.label) << name;
    EXPECT_EQ(Bytes(e, image_keys::kClassText), class_names.at(view.label)) << name;
    EXPECT_EQ(Pixels(Bytes(e, image_keys::kEncoded)), Pixels(std::string(view.bytes))) << name;
    for (const auto& [key, feature] : original.features().feature()) {
      if (key == source.schema.image_key || key.rfind("image/", 0) == 0) continue;
      ASSERT_TRUE(e.features().feature().count(key)) << key << " lost: " << name;
      EXPECT_EQ(e.features().feature().at(key).SerializeAsString(), feature.SerializeAsString())
          << key;
    }
  }
}

TEST(RecordInputs, TfSlimShardsBecomeImgpipeShards) {
  std::string out = FreshDir("slim");
  ConvertSummary summary = RunConvert(Options(kSlim, out));
  ASSERT_TRUE(summary.complete);
  EXPECT_EQ(summary.rejected, 0u);
  EXPECT_EQ(summary.restart_markers_added, summary.written);
  std::set<std::string> splits;
  for (const ShardSummary& s : summary.shards) splits.insert(s.split);
  EXPECT_EQ(splits, (std::set<std::string>{"train", "validation"}));
  ExpectSameRecords(kSlim, out, image_keys::kFilename);
  // What the resolver reads back: imgpipe's layout, 0-based labels, the class names.
  pipeline::DataSource again = pipeline::ResolveDataSource(out);
  EXPECT_EQ(again.layout, pipeline::DataLayout::kImgpipe);
  EXPECT_EQ(again.schema.label_offset, 0);
  EXPECT_EQ(again.class_names, pipeline::ResolveDataSource(kSlim).class_names);
}

TEST(RecordInputs, TfdsShardsKeepTheirFeaturesAndTakeMaxResolution) {
  std::string out = FreshDir("tfds");
  ConvertOptions o = Options(kTfds, out);
  o.image.max_resolution = 200;
  ConvertSummary summary = RunConvert(o);
  ASSERT_TRUE(summary.complete);
  std::vector<std::pair<std::string, Example>> records = Records(out);
  ASSERT_EQ(records.size(), summary.written);
  for (auto& [split, e] : records) {
    EXPECT_FALSE(e.features().feature().count("image")) << "the source's image key stays";
    EXPECT_TRUE(GetInt64Feature(e.features(), "label"));
    EXPECT_EQ(Bytes(e, image_keys::kFilename), Bytes(e, "file_name"));
    EXPECT_LE(std::max(*GetInt64Feature(e.features(), image_keys::kHeight),
                       *GetInt64Feature(e.features(), image_keys::kWidth)),
              200);
    EXPECT_TRUE(GetInt64Feature(e.features(), image_keys::kOriginalWidth));
  }
  std::set<std::string> splits;
  for (const ShardSummary& s : summary.shards) splits.insert(s.split);
  EXPECT_EQ(splits, (std::set<std::string>{"test", "train"}));
}

TEST(RecordInputs, WorkersThenFinalizeWriteWhatOneProcessWrites) {
  std::string one = FreshDir("one");
  ASSERT_TRUE(RunConvert(Options(kSlim, one)).complete);
  std::string shared = FreshDir("workers");
  ConvertOptions o = Options(kSlim, shared);
  o.num_workers = 2;
  for (o.worker = 1; o.worker >= 0; --o.worker) EXPECT_FALSE(RunConvert(o).complete);
  o.worker = 0;
  o.finalize = true;
  ConvertSummary final_summary = RunConvert(o);
  ASSERT_TRUE(final_summary.complete);
  for (const ShardSummary& s : final_summary.shards) {
    EXPECT_EQ(ReadFile(JoinPath(shared, s.file_name)), ReadFile(JoinPath(one, s.file_name)));
  }
  EXPECT_EQ(ReadFile(JoinPath(shared, "dataset.json")), ReadFile(JoinPath(one, "dataset.json")));
}

TEST(RecordInputs, ACorruptRecordIsRejectedWithItsFileAndOffset) {
  std::string in = FreshDir("corrupt_in");
  MakeDirectories(in);
  std::string name = pipeline::FindTfRecordFiles(kSlim).front().path;
  std::string bytes = ReadFile(name);
  bytes[bytes.size() / 2] ^= 0x20;  // inside some record's data: its CRC no longer matches
  WriteFileAtomic(JoinPath(in, "train-00000-of-00001"), bytes);
  std::string out = FreshDir("corrupt_out");
  ConvertSummary summary = RunConvert(Options(in, out));
  ASSERT_TRUE(summary.complete);
  EXPECT_EQ(summary.rejected, 1u);
  std::string rejects = ReadFile(JoinPath(out, "rejects.csv"));
  EXPECT_NE(rejects.find(JoinPath(in, "train-00000-of-00001@")), std::string::npos) << rejects;
  EXPECT_NE(rejects.find("data CRC mismatch"), std::string::npos) << rejects;
}

TEST(RecordInputs, AGlobPatternConvertsTheFilesItMatches) {
  std::string out = FreshDir("glob");
  ConvertSummary summary = RunConvert(Options(kSlim + "/train-*", out));
  ASSERT_TRUE(summary.complete);
  uint64_t train_records = 0;
  for (const auto& [split, e] : Records(kSlim)) train_records += split == "train";
  EXPECT_EQ(summary.written, train_records);
  for (const ShardSummary& s : summary.shards) EXPECT_EQ(s.split, "train");
  // A pattern may match files of several folders: each record is named by its file's
  // path (here in rejects.csv, one corrupt record in each folder).
  std::string root = FreshDir("glob_folders");
  std::vector<pipeline::TfRecordFile> train;
  for (const pipeline::TfRecordFile& f : pipeline::FindTfRecordFiles(kSlim)) {
    if (f.split == "train") train.push_back(f);
  }
  ASSERT_EQ(train.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    std::string bytes = ReadFile(train[i].path);
    bytes[bytes.size() / 2] ^= 0x20;
    std::string folder = JoinPath(root, i == 0 ? "a" : "b");
    MakeDirectories(folder);
    WriteFileAtomic(JoinPath(folder, BaseName(train[i].path)), bytes);
  }
  std::string corrupt_out = FreshDir("glob_folders_out");
  ConvertSummary corrupt = RunConvert(Options(root + "/*/train-*", corrupt_out));
  ASSERT_TRUE(corrupt.complete);
  EXPECT_EQ(corrupt.rejected, 2u);
  std::string rejects = ReadFile(JoinPath(corrupt_out, "rejects.csv"));
  for (size_t i = 0; i < 2; ++i) {
    std::string path = JoinPath(JoinPath(root, i == 0 ? "a" : "b"), BaseName(train[i].path));
    EXPECT_NE(rejects.find(path + "@"), std::string::npos) << rejects;
  }
}

TEST(RecordInputs, SplitOptionAndCompressedFilesAreRefused) {
  ConvertOptions o = Options(kSlim, FreshDir("split"));
  o.plan.splits = {{"train", 0.5}, {"validation", 0.5}};
  try {
    RunConvert(o);
    FAIL() << "--split was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("keeps its own splits (train, validation)"),
              std::string::npos)
        << e.what();
  }
  std::string gz = FreshDir("gz");
  MakeDirectories(gz);
  std::string first = pipeline::FindTfRecordFiles(kSlim).front().path;
  ASSERT_EQ(std::system(("gzip -c '" + first + "' > '" + gz + "/train-00000-of-00001.gz'").c_str()), 0);
  try {
    RunConvert(Options(gz, FreshDir("gz_out")));
    FAIL() << "a compressed file was converted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("compressed"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace imgpipe
