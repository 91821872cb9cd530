#include "pipeline/data_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "image/presets.h"
#include "pipeline/image_samples.h"
#include "pipeline/label_test_util.h"
#include "pipeline/pipeline_test_util.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe::pipeline {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Shards written by scripts/make_tf_datasets.py (Python's protobuf; fixture tf_datasets).
const std::string kSlim = std::string(IMGPIPE_TF_DATASETS_DIR) + "/tf-slim";
const std::string kTfds = std::string(IMGPIPE_TF_DATASETS_DIR) + "/tfds";
const std::string kJpeg = std::string(IMGPIPE_TESTDATA_DIR) + "/images/hymenoptera/val/bees/10870992_eebeeb3a12.jpg";

// A copy of folder `from` under a fresh temp path, without the files named in `leave_out`.
std::string CopyFolder(const std::string& from, const std::set<std::string>& leave_out = {}) {
  const std::string to = TestTempPath("copy");
  MakeDirectories(to);
  for (const std::string& name : ListDirectory(from)) {
    if (!leave_out.count(name)) std::filesystem::copy_file(JoinPath(from, name), JoinPath(to, name));
  }
  return to;
}

// An Example with `bytes_key` = the test JPEG and `label_key` = `label`.
std::string ImageRecord(const std::string& bytes_key, const std::string& label_key, int64_t label) {
  Example e;
  AddBytesFeature(e.mutable_features(), bytes_key, ReadFile(kJpeg));
  AddInt64Feature(e.mutable_features(), label_key, label);
  AddBytesFeature(e.mutable_features(), "note", "text");
  return SerializeExample(e);
}

TEST(DataSourceTest, TfSlimShardsAreRecognisedAndTheirLabelsShifted) {
  DataSource s = ResolveDataSource(kSlim);
  EXPECT_EQ(s.layout, DataLayout::kTfSlim);
  EXPECT_EQ(s.schema.image_key, "image/encoded");
  EXPECT_EQ(s.schema.label_key, "image/class/label");
  EXPECT_EQ(s.min_label, 1);
  EXPECT_EQ(s.max_label, 2);
  EXPECT_EQ(s.schema.label_offset, 1);
  EXPECT_EQ(s.schema.num_classes, 2);
  EXPECT_THAT(s.class_names, ElementsAre("ant, emmet, pismire", "bee"));
  EXPECT_EQ(s.class_names_from, "image/class/text");
  EXPECT_EQ(s.Paths("train").size(), 2u);
  EXPECT_THAT(s.Paths("validation"), ElementsAre(kSlim + "/validation-00000-of-00001"));
  EXPECT_THAT(s.Describe(), HasSubstr("layout tf-slim"));
  EXPECT_THAT(s.Describe(), HasSubstr("TF-slim's 1-based labels"));
}

TEST(DataSourceTest, TfSlimShardsWithAHandWrittenLabelsFileAreStillShifted) {
  const std::string dir = CopyFolder(kSlim);
  WriteFileAtomic(JoinPath(dir, "labels.txt"), "ant\nbee\n");
  DataSource s = ResolveDataSource(dir);
  EXPECT_EQ(s.schema.label_offset, 1);  // labels 1..2 of 2 names
  EXPECT_THAT(s.class_names, ElementsAre("ant", "bee"));
  EXPECT_EQ(s.class_names_from, "labels.txt");
  // Three names (with TF-slim's "background" at 0): labels 1..2 are 0-based indices.
  WriteFileAtomic(JoinPath(dir, "labels.txt"), "background\nant\nbee\n");
  s = ResolveDataSource(dir);
  EXPECT_EQ(s.schema.label_offset, 0);
  EXPECT_EQ(s.schema.num_classes, 3);
}

TEST(DataSourceTest, TfdsShardsUseTheirKeysAndLabelsFile) {
  DataSource s = ResolveDataSource(kTfds);
  EXPECT_EQ(s.layout, DataLayout::kTfds);
  EXPECT_EQ(s.schema.image_key, "image");
  EXPECT_EQ(s.schema.label_key, "label");
  EXPECT_EQ(s.schema.label_offset, 0);
  EXPECT_THAT(s.class_names, ElementsAre("ants", "bees"));
  EXPECT_EQ(s.class_names_from, "label.labels.txt");
  EXPECT_EQ(s.schema.num_classes, 2);
  EXPECT_TRUE(s.HasSplit("train"));
  EXPECT_TRUE(s.HasSplit("test"));
  EXPECT_FALSE(s.HasSplit("validation"));
  EXPECT_THAT([&] { s.Paths("validation"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("splits found: test, train")));
}

TEST(DataSourceTest, TfdsClassCountComesFromDatasetInfoWithoutLabelsFile) {
  DataSource s = ResolveDataSource(CopyFolder(kTfds, {"label.labels.txt"}));
  EXPECT_EQ(s.class_names_from, "dataset_info.json");
  EXPECT_THAT(s.class_names, ElementsAre("0", "1"));
  EXPECT_EQ(s.schema.num_classes, 2);
}

TEST(DataSourceTest, ImgpipeShardsKeepZeroBasedLabels) {
  const std::string dir = TestTempPath("imgpipe_layout");
  MakeDirectories(dir);
  // Labels 1 and 2 only (no 0 in the records) with image/class/text: imgpipe's layout
  // (dataset.json, labels.txt) is never shifted.
  Example e;
  AddBytesFeature(e.mutable_features(), "image/encoded", ReadFile(kJpeg));
  AddInt64Feature(e.mutable_features(), "image/class/label", 2);
  AddBytesFeature(e.mutable_features(), "image/class/text", "c");
  WriteTestTfRecords(JoinPath(dir, "train-00000-of-00001.tfrecord"), {SerializeExample(e)});
  WriteFileAtomic(JoinPath(dir, "labels.txt"), "a\nb\nc\n");
  WriteFileAtomic(JoinPath(dir, "dataset.json"), "{}");
  DataSource s = ResolveDataSource(dir);
  EXPECT_EQ(s.layout, DataLayout::kImgpipe);
  EXPECT_EQ(s.schema.label_offset, 0);
  EXPECT_EQ(s.schema.num_classes, 3);
  EXPECT_EQ(s.class_names_from, "labels.txt");
}

TEST(DataSourceTest, OptionsOverrideDetection) {
  DataSourceOptions options;
  options.label_offset = 0;
  DataSource s = ResolveDataSource(kSlim, options);
  EXPECT_EQ(s.schema.label_offset, 0);
  EXPECT_EQ(s.schema.num_classes, 3);  // 0 (unseen: named "0"), 1, 2
  EXPECT_THAT(s.class_names, ElementsAre("0", "ant, emmet, pismire", "bee"));

  options = {};
  options.label_key = "none";
  options.image_key = "image/encoded";
  s = ResolveDataSource(kSlim, options);
  EXPECT_EQ(s.schema.label_key, "");
  EXPECT_EQ(s.schema.num_classes, 0);
}

TEST(DataSourceTest, AWrongKeyListsTheKeysFoundAndTheFlags) {
  DataSourceOptions options;
  options.image_key = "image/jpeg";
  try {
    ResolveDataSource(kTfds, options);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("hymenoptera-test.tfrecord-00000-of-00001: offset 0: no bytes "
                                    "feature 'image/jpeg' (--image-key)"));
    EXPECT_THAT(e.what(), HasSubstr("file_name (bytes), image (bytes), label (int64)"));
    EXPECT_THAT(e.what(), HasSubstr("--label-key"));
  }
  options = {};
  options.label_key = "class";
  EXPECT_THAT([&] { ResolveDataSource(kTfds, options); },
              ::testing::ThrowsMessage<Error>(HasSubstr("no int64 feature 'class' (--label-key)")));
}

TEST(DataSourceTest, RecordsWithoutAnImageSayWhichKeysTheyHave) {
  EXPECT_THAT([] { ResolveDataSource(std::string(IMGPIPE_TESTDATA_DIR) + "/tfrecord/tfx/mnist.tfrecord"); },
              ::testing::ThrowsMessage<Error>(AllOf(HasSubstr("no feature holds an encoded image"),
                                                    HasSubstr("image_floats (float)"),
                                                    HasSubstr("--image-key KEY"))));
}

TEST(DataSourceTest, ImageKeyIsFoundByContentAndLabelByName) {
  const std::string dir = TestTempPath("by_content");
  MakeDirectories(dir);
  WriteTestTfRecords(JoinPath(dir, "data.bin"), {ImageRecord("pixels_jpeg", "class_id", 0)});
  DataSource s = ResolveDataSource(dir);
  EXPECT_EQ(s.layout, DataLayout::kTfRecord);
  EXPECT_EQ(s.schema.image_key, "pixels_jpeg");
  EXPECT_EQ(s.schema.label_key, "class_id");
  EXPECT_EQ(s.schema.num_classes, 1);
  EXPECT_EQ(s.class_names_from, "");
}

TEST(DataSourceTest, FoldersWithoutShardsAreImageFoldersOrErrors) {
  EXPECT_EQ(ResolveDataSource(std::string(IMGPIPE_TESTDATA_DIR) + "/images/photos-by-class").layout,
            DataLayout::kImageFolder);
  const std::string tfds_root = TestTempPath("tfds_root");  // NAME/VERSION/ of TFDS
  MakeDirectories(tfds_root);
  std::filesystem::copy(kTfds, JoinPath(tfds_root, "1.0.0"));
  EXPECT_THAT([&] { ResolveDataSource(tfds_root); },
              ::testing::ThrowsMessage<Error>(HasSubstr("pass --data " + JoinPath(tfds_root, "1.0.0"))));
  const std::string corrupt = TestTempPath("corrupt");
  MakeDirectories(corrupt);
  WriteFileAtomic(JoinPath(corrupt, "train-00000-of-00002.tfrecord"), std::string(200, 'Z'));
  WriteFileAtomic(JoinPath(corrupt, "train-00001-of-00002.tfrecord"), "");
  EXPECT_THAT([&] { ResolveDataSource(corrupt); },
              ::testing::ThrowsMessage<Error>(
                  AllOf(HasSubstr(corrupt + "/train-00000-of-00002.tfrecord: offset 0: "),
                        HasSubstr("no good record in any of the 2 TFRecord file(s)"))));
  const std::string empty = TestTempPath("empty");
  MakeDirectories(empty);
  EXPECT_THAT([&] { ResolveDataSource(empty); },
              ::testing::ThrowsMessage<Error>(HasSubstr("no TFRecord files")));
}

TEST(DataSourceTest, ALabelOutsideTheClassesNamesFileOffsetAndLabel) {
  Example e;
  AddBytesFeature(e.mutable_features(), "image", "jpeg bytes");
  AddInt64Feature(e.mutable_features(), "label", 5);
  RecordSchema schema{"image", "label", 1, 3};
  EXPECT_THAT([&] { ViewImage(e.features(), schema, "f.tfrecord", 120); },
              ::testing::ThrowsMessage<Error>(
                  HasSubstr("f.tfrecord: offset 120: label 5 (label, label offset 1) is outside")));
  schema.num_classes = 5;
  EXPECT_EQ(ViewImage(e.features(), schema, "f.tfrecord", 120).label, 4);
  schema.label_key = "image/class/label";  // labelled data without that label
  EXPECT_THAT([&] { ViewImage(e.features(), schema, "f.tfrecord", 120); },
              ::testing::ThrowsMessage<DataError>(HasSubstr("no int64 feature image/class/label")));
  schema.num_classes = 0;  // classes unknown: still labelled data, so still a bad record
  EXPECT_THROW(ViewImage(e.features(), schema, "f.tfrecord", 120), DataError);
  schema.label_key = "";  // unlabelled use (--label-key none): label -1
  EXPECT_EQ(ViewImage(e.features(), schema, "f.tfrecord", 120).label, -1);
  schema.image_key = "image/encoded";
  EXPECT_THROW(ViewImage(e.features(), schema, "f.tfrecord", 120), DataError);
}

// Every label of `paths` read through the eval pipeline under `schema`, with fail policy.
std::multiset<int64_t> PipelineLabels(const std::vector<std::string>& paths, const RecordSchema& schema) {
  ImagePipelineConfig config;
  config.patterns = paths;
  config.schema = schema;
  config.batch_size = 4;
  EvalPreset preset;
  preset.crop_size = 32;
  preset.resize_size = 36;
  PipelineOptions options;
  options.error_policy = ErrorPolicy::kFail;
  auto batches = EvalPipeline(config, preset).MakeIterator(options);
  std::multiset<int64_t> labels;
  while (auto batch = batches.Next()) labels.insert(batch->labels.begin(), batch->labels.end());
  return labels;
}

TEST(DataSourceTest, ThePipelineReadsTfSlimShardsWithShiftedLabels) {
  const DataSource s = ResolveDataSource(kSlim);
  const std::multiset<int64_t> labels = PipelineLabels(s.Paths("train"), s.schema);
  EXPECT_EQ(labels.size(), 12u);  // 6 per class
  EXPECT_EQ(labels.count(0), 6u);
  EXPECT_EQ(labels.count(1), 6u);
}

TEST(DataSourceTest, WithTheClassCountUnknownLabelsAreAsStoredAndOnlyAnOffsetIsChecked) {
  Example e;
  AddBytesFeature(e.mutable_features(), "image", "jpeg bytes");
  AddInt64Feature(e.mutable_features(), "label", 0);
  RecordSchema schema{"image", "label", 0, 0};
  EXPECT_EQ(ViewImage(e.features(), schema, "f.tfrecord", 7).label, 0);
  schema.label_offset = 1;  // label 0 under offset 1: class -1, wrong whatever the count
  EXPECT_THAT([&] { ViewImage(e.features(), schema, "f.tfrecord", 7); },
              ::testing::ThrowsMessage<LabelOutOfRange>(
                  HasSubstr("f.tfrecord: offset 7: label 0 (label, label offset 1) is below the label offset")));
}

// Issue 44: the sample (51 records of each of 40 files) sees labels 1..8 with
// image/class/text; labels 0 and 9 come later. Neither an offset nor a class count is
// guessed from it, and every record reads with its stored label.
TEST(DataSourceTest, ASampleThatMissesTheExtremeLabelsDecidesNeitherOffsetNorClasses) {
  const LabelLessShards shape;
  const std::string dir = TestTempPath("label_less");
  const LabelLessFiles files = WriteLabelLessShards(dir, shape);
  DataSource s = ResolveDataSource(dir);
  EXPECT_EQ(s.layout, DataLayout::kTfRecord);
  EXPECT_EQ(s.min_label, 1);
  EXPECT_EQ(s.max_label, shape.classes - 2);
  EXPECT_FALSE(s.labels.complete());
  EXPECT_EQ(s.schema.label_offset, 0);
  EXPECT_EQ(s.schema.num_classes, 0);  // unknown
  EXPECT_EQ(s.classes_from, "");
  EXPECT_TRUE(s.class_names.empty());
  EXPECT_THAT(s.Describe(), HasSubstr("classes: unknown: no labels.txt"));
  EXPECT_THAT(s.Describe(), HasSubstr("--label-offset 1 if they are TF-slim's"));
  EXPECT_FALSE(PathExists(JoinPath(dir, "labels.scan.json")));  // nothing read beyond the sample
  std::multiset<int64_t> expected;
  for (int f = 0; f < shape.files; ++f) {
    for (int r = 0; r < shape.records_per_file; ++r) expected.insert(shape.Label(f, r));
  }
  EXPECT_EQ(PipelineLabels(s.Paths(), s.schema), expected);
}

TEST(DataSourceTest, ScanLabelsReadsEveryLabelOnceAndTheNextResolveUsesTheCache) {
  const LabelLessShards shape;
  const std::string dir = TestTempPath("label_scan");
  const LabelLessFiles files = WriteLabelLessShards(dir, shape);
  DataSourceOptions options;
  options.scan_labels = true;
  uint64_t progress_calls = 0, last_done = 0, last_total = 0;
  options.scan_progress = [&](uint64_t done, uint64_t total) {
    ++progress_calls, last_done = done, last_total = total;
  };
  DataSource s = ResolveDataSource(dir, options);
  EXPECT_TRUE(s.labels.complete());
  EXPECT_EQ(s.scanned_records, shape.files * shape.records_per_file);
  EXPECT_EQ(s.min_label, 0);
  EXPECT_EQ(s.max_label, shape.classes - 1);
  EXPECT_EQ(s.schema.label_offset, 0);
  EXPECT_EQ(s.schema.num_classes, shape.classes);
  EXPECT_EQ(s.classes_from, "records");
  EXPECT_EQ(s.class_names.front(), "class-0");
  EXPECT_EQ(s.class_names.back(), "class-" + std::to_string(shape.classes - 1));
  EXPECT_EQ(s.labels.cache_path, JoinPath(dir, "labels.scan.json"));
  EXPECT_GT(progress_calls, 0u);
  EXPECT_EQ(last_done, last_total);
  EXPECT_THAT(s.Describe(), HasSubstr("classes: 10 from every record's label"));
  EXPECT_THAT(s.Describe(), HasSubstr("kept in " + JoinPath(dir, "labels.scan.json")));
  // The next resolve, without scan_labels, finds the census.
  DataSource again = ResolveDataSource(dir);
  EXPECT_EQ(again.labels.files_from_cache, shape.files);
  EXPECT_EQ(again.schema.num_classes, shape.classes);
  EXPECT_EQ(again.class_names, s.class_names);
  EXPECT_THAT(again.Describe(), HasSubstr("read from there"));
  // --num-classes below the labels' needs names the highest label, its file and record.
  EXPECT_THAT([&] { again.SetClassCount(shape.classes - 1, "--num-classes"); },
              ::testing::ThrowsMessage<LabelOutOfRange>(HasSubstr(
                  files.paths[shape.max_file] + ": offset " + std::to_string(files.max_offset) +
                  ": label 9 (image/class/label, label offset 0) is outside the 9 classes [0, 9) of --num-classes")));
  again.SetClassCount(shape.classes + 2, "--num-classes");
  EXPECT_EQ(again.schema.num_classes, shape.classes + 2);
  EXPECT_THAT(again.Describe(), HasSubstr("classes: 12 from --num-classes"));
}

TEST(DataSourceTest, TfSlimOffsetNeedsCertainEvidence) {
  // TF-slim's file names, labels 1..2 with text: 1-based (make_tf_datasets.py's shards).
  EXPECT_EQ(ResolveDataSource(kSlim).schema.label_offset, 1);
  // The same records under another name with no names file: labels 1..2 read whole, no
  // 0, but no certain evidence: kept as stored, the reason says what to pass.
  const std::string renamed = TestTempPath("slim_renamed");
  MakeDirectories(renamed);
  std::filesystem::copy_file(kSlim + "/train-00000-of-00002", JoinPath(renamed, "shard.tfrecord"));
  DataSource s = ResolveDataSource(renamed);
  EXPECT_EQ(s.schema.label_offset, 0);
  EXPECT_THAT(s.label_offset_reason, HasSubstr("--label-offset 1"));
  // A labels.txt of 2 names beside them, and label 2 read: certain.
  WriteFileAtomic(JoinPath(renamed, "labels.txt"), "ant\nbee\n");
  s = ResolveDataSource(renamed);
  EXPECT_EQ(s.schema.label_offset, 1);
  EXPECT_THAT(s.label_offset_reason, HasSubstr("label 2 with 2 names in labels.txt"));
}

}  // namespace
}  // namespace imgpipe::pipeline
