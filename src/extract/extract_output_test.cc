#include "extract/extract_output.h"

#include <gtest/gtest.h>

#include "extract/extract_test_util.h"
#include "extract/npy_file.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe::extract {
namespace {

using nlohmann::json;

json TestPlan(const std::string& dtype, int shards) {
  json inputs = json::array();
  for (int i = 0; i < shards; ++i) inputs.push_back({{"images", {i * 2, 2}}, {"crc32c", 100 + i}});
  return {{"model", "m.pt"}, {"model_kind", "torchscript"}, {"layer", "penultimate"},
          {"layer_resolved", "input of fc (Linear)"}, {"dimension", 3}, {"dtype", dtype},
          {"image_size", 32}, {"data", "images"}, {"split", ""}, {"input_kind", "images"},
          {"shards", inputs}};
}

// Shard `index` with 2 rows; row 1 failed when `fail_row_1`.
void WriteTestShard(const ExtractOutput& output, size_t index, bool fail_row_1) {
  ShardResult result;
  result.index = index;
  result.rows = 2;
  if (fail_row_1) result.failures.push_back({1, "images/b,\"c\".jpg", 0, "b,\"c\".jpg", "not an image"});
  ShardArrays arrays;
  std::vector<float> f = {1, 2, 3, 0, 0, 0};
  arrays.features.assign(reinterpret_cast<const char*>(f.data()), 24);
  arrays.ids = {"a" + std::to_string(index) + ".jpg", "b,\"c\".jpg"};
  arrays.labels = {static_cast<int64_t>(index), -1};
  output.WriteShard(result, arrays);
}

TEST(ExtractOutput, ShardsThenSummaryWhenAllAreFinished) {
  std::string dir = FreshTestDir("output_summary");
  ExtractOutput output(dir, TestPlan("float32", 2));
  output.CheckOrWritePlan();
  EXPECT_FALSE(output.LoadFinishedShard(0));
  WriteTestShard(output, 0, false);
  std::optional<ShardResult> done = output.LoadFinishedShard(0);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->rows, 2u);
  EXPECT_FALSE(output.WriteSummaryIfComplete());
  EXPECT_FALSE(PathExists(JoinPath(dir, "features.json")));

  WriteTestShard(output, 1, true);
  ASSERT_TRUE(output.WriteSummaryIfComplete());
  json summary = json::parse(ReadFile(JoinPath(dir, "features.json")));
  EXPECT_EQ(summary["count"], 4);
  EXPECT_EQ(summary["dimension"], 3);
  EXPECT_EQ(summary["npy_dtype"], "<f4");
  ASSERT_EQ(summary["shards"].size(), 2u);
  EXPECT_EQ(summary["shards"][1]["features"], "features-00001.npy");
  EXPECT_EQ(summary["shards"][1]["ids"], "ids-00001.npy");
  EXPECT_EQ(summary["shards"][1]["rows"], 2);
  ASSERT_EQ(summary["failures"].size(), 1u);
  EXPECT_EQ(summary["failures"][0]["shard"], 1);
  EXPECT_EQ(summary["failures"][0]["row"], 1);
  EXPECT_EQ(summary["failures"][0]["reason"], "not an image");
  EXPECT_EQ(ReadFile(JoinPath(dir, "failures.csv")),
            "shard,row,file,offset,id,reason\n"
            "1,1,\"images/b,\"\"c\"\".jpg\",0,\"b,\"\"c\"\".jpg\",not an image\n");
  npy::ArrayInfo ids = npy::ReadHeader(JoinPath(dir, IdsFileName(1)));
  EXPECT_EQ(ids.descr, "<U9");
  std::string id_data = ReadFile(JoinPath(dir, IdsFileName(1))).substr(ids.data_offset);
  EXPECT_EQ(npy::DecodeUnicodeColumn(ids.descr, id_data), (std::vector<std::string>{"a1.jpg", "b,\"c\".jpg"}));
}

TEST(ExtractOutput, ShardIsFinishedOnlyWithItsRecordAndMatchingArrays) {
  std::string dir = FreshTestDir("output_finished");
  ExtractOutput output(dir, TestPlan("float32", 1));
  output.CheckOrWritePlan();
  WriteTestShard(output, 0, false);
  ASSERT_TRUE(output.LoadFinishedShard(0));
  // A missing array.
  std::string labels = ReadFile(JoinPath(dir, LabelsFileName(0)));
  RemoveFile(JoinPath(dir, LabelsFileName(0)));
  EXPECT_FALSE(output.LoadFinishedShard(0));
  // An array with another row count.
  std::vector<int64_t> three = {1, 2, 3};
  npy::WriteArray(JoinPath(dir, LabelsFileName(0)), "<i8", {3},
                  std::string_view(reinterpret_cast<const char*>(three.data()), 24));
  EXPECT_FALSE(output.LoadFinishedShard(0));
  WriteFileAtomic(JoinPath(dir, LabelsFileName(0)), labels);
  EXPECT_TRUE(output.LoadFinishedShard(0));
  // A record that is not one this code writes.
  std::string record_path = JoinPath(dir, ".imgpipe-extract/shard-00000.json");
  std::string record = ReadFile(record_path);
  json partial = json::parse(record);
  partial.erase("rows");
  WriteFileAtomic(record_path, partial.dump());
  EXPECT_FALSE(output.LoadFinishedShard(0));
  WriteFileAtomic(record_path, record);
  EXPECT_TRUE(output.LoadFinishedShard(0));
  // Another plan for the same folder (another dtype) does not take it.
  ExtractOutput half(dir, TestPlan("float16", 1));
  EXPECT_FALSE(half.LoadFinishedShard(0));
  EXPECT_THROW(half.CheckOrWritePlan(), Error);
  // ClearShard removes the record and a killed run's temporaries; then it is not finished.
  WriteFileAtomic(JoinPath(dir, FeaturesFileName(0) + ".99999.tmp"), "partial");
  WriteFileAtomic(JoinPath(dir, FeaturesFileName(1) + ".99999.tmp"), "another shard's");
  output.ClearShard(0);
  EXPECT_FALSE(output.LoadFinishedShard(0));
  EXPECT_FALSE(PathExists(JoinPath(dir, FeaturesFileName(0) + ".99999.tmp")));
  EXPECT_TRUE(PathExists(JoinPath(dir, FeaturesFileName(1) + ".99999.tmp")));
}

TEST(ExtractOutput, WriteShardChecksTheArrays) {
  std::string dir = FreshTestDir("output_check");
  ExtractOutput output(dir, TestPlan("float16", 1));
  output.CheckOrWritePlan();
  ShardResult result;
  result.rows = 2;
  ShardArrays arrays;
  arrays.features = std::string(2 * 3 * 4, '\0');  // float32 bytes for a float16 plan
  arrays.ids = {"a", "b"};
  arrays.labels = {0, 1};
  EXPECT_THROW(output.WriteShard(result, arrays), Error);
  arrays.features.resize(2 * 3 * 2);
  output.WriteShard(result, arrays);
  EXPECT_EQ(npy::ReadHeader(JoinPath(dir, FeaturesFileName(0))).descr, "<f2");
  EXPECT_TRUE(output.LoadFinishedShard(0));
  EXPECT_EQ(ExtractOutput::Open(dir).plan(), output.plan());
  EXPECT_THROW(ExtractOutput::Open(FreshTestDir("output_none")), Error);
}

}  // namespace
}  // namespace imgpipe::extract
