#include "convert/summary_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "convert/convert_test_util.h"
#include "util/file.h"

namespace imgpipe {
namespace {

TEST(SummaryJsonTest, ConvertSummaryHasTheCountsShardsAndRate) {
  ConvertSummary s;
  s.inputs = 7;
  s.written = 5;
  s.rejected = 2;
  s.restart_markers_added = 4;
  s.complete = true;
  s.shards_total = s.shards_done = s.shards_this_run = 1;
  s.input_bytes_this_run = 3'000'000;
  s.seconds = 2;
  s.shards.push_back({"train-00000-of-00001.tfrecord", "train", 5, 1234});
  const nlohmann::json j = nlohmann::json::parse(ConvertSummaryJson(s));
  EXPECT_EQ(j["inputs"], 7);
  EXPECT_EQ(j["written"], 5);
  EXPECT_EQ(j["rejected"], 2);
  EXPECT_EQ(j["restart_markers_added"], 4);
  EXPECT_EQ(j["complete"], true);
  EXPECT_DOUBLE_EQ(j["input_mb_per_s"].get<double>(), 1.5);
  ASSERT_EQ(j["shards"].size(), 1u);
  EXPECT_EQ(j["shards"][0]["file"], "train-00000-of-00001.tfrecord");
  EXPECT_EQ(j["shards"][0]["bytes"], 1234);
}

TEST(SummaryJsonTest, InspectionOfARealFileHasItsRecordsFeaturesAndClasses) {
  const std::string path = JoinPath(kTestData, "tfrecord/tfx/mnist.tfrecord");
  const nlohmann::json j = nlohmann::json::parse(InspectionJson(InspectTfRecordFile(path)));
  EXPECT_EQ(j["path"], path);
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["records"], 1000);
  EXPECT_EQ(j["record_type"], "example");
  EXPECT_EQ(j["label_key"], "image_class");
  uint64_t counted = 0;
  for (const auto& c : j["classes"]) counted += c["count"].get<uint64_t>();
  EXPECT_EQ(counted, 1000u);
  EXPECT_FALSE(j.contains("feature_lists"));
}

TEST(SummaryJsonTest, SequenceExamplesListTheirFeatureLists) {
  const std::string path = JoinPath(kTestData, "tfrecord/pytorch-data/sequence_example.tfrecord");
  const nlohmann::json j = nlohmann::json::parse(InspectionJson(InspectTfRecordFile(path)));
  EXPECT_EQ(j["record_type"], "sequence_example");
  EXPECT_FALSE(j["feature_lists"].empty());
}

TEST(SummaryJsonTest, AFileIsItsOwnTargetAndAnImageFolderHasNoShards) {
  const std::string file = JoinPath(kTestData, "tfrecord/tfx/mnist.tfrecord");
  InspectTarget t = ResolveInspectTarget(file, {});
  EXPECT_FALSE(t.source.has_value());
  EXPECT_EQ(t.files, std::vector<std::string>{file});
  t = ResolveInspectTarget(JoinPath(kTestData, "images/photos-by-class"), {});
  ASSERT_TRUE(t.source.has_value());
  EXPECT_TRUE(t.files.empty());
  const nlohmann::json j = nlohmann::json::parse(DataSourceJson(*t.source));
  EXPECT_EQ(j["layout"], "image-folder");
  EXPECT_FALSE(j.contains("files"));
}

}  // namespace
}  // namespace imgpipe
