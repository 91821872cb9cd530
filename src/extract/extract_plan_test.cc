#include "extract/extract_plan.h"

#include <gtest/gtest.h>

#include "extract/extract_test_util.h"
#include "record/example.h"
#include "record/tfrecord_writer.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe::extract {
namespace {

// A one-record TFRecord file at `path` (an Example with image/encoded); its size.
uint64_t WriteOneRecordFile(const std::string& path) {
  Example example;
  AddBytesFeature(example.mutable_features(), "image/encoded", "jpeg");
  std::unique_ptr<WritableFile> file = OpenWritableFile(path);
  TfRecordWriter writer(*file);
  writer.Write(SerializeExample(example));
  writer.Close();
  file->Close();
  return FileSize(path);
}

TEST(ExtractPlan, TfRecordFilesSortedOneShardEach) {
  std::string dir = FreshTestDir("plan_tfrecord");
  uint64_t bytes = 0;
  for (const char* name : {"validation-00000-of-00001.tfrecord", "train-00001-of-00002.tfrecord",
                           "train-00000-of-00002.tfrecord"}) {
    bytes = WriteOneRecordFile(JoinPath(dir, name));
  }
  for (const char* name : {"train-00000-of-00002.tfrecord.idx", "labels.txt",
                           "train-00000-of-00002.tfrecord.123.tmp"}) {
    WriteFileAtomic(JoinPath(dir, name), std::string(7, 'x'));
  }
  ExtractPlan all = MakeExtractPlan(dir, "", 10);
  EXPECT_EQ(all.kind, InputKind::kTfRecord);
  ASSERT_EQ(all.shards.size(), 3u);
  EXPECT_EQ(BaseName(all.shards[0].tfrecord_file), "train-00000-of-00002.tfrecord");
  EXPECT_EQ(BaseName(all.shards[1].tfrecord_file), "train-00001-of-00002.tfrecord");
  EXPECT_EQ(BaseName(all.shards[2].tfrecord_file), "validation-00000-of-00001.tfrecord");
  EXPECT_EQ(all.shards[2].index, 2u);
  EXPECT_EQ(all.shards[2].tfrecord_bytes, bytes);
  EXPECT_EQ(all.schema.image_key, "image/encoded");
  EXPECT_EQ(ShardInputJson(all, all.shards[1]),
            (nlohmann::json{{"tfrecord", "train-00001-of-00002.tfrecord"}, {"bytes", bytes}}));

  ExtractPlan validation = MakeExtractPlan(dir, "validation", 10);
  ASSERT_EQ(validation.shards.size(), 1u);
  EXPECT_EQ(BaseName(validation.shards[0].tfrecord_file), "validation-00000-of-00001.tfrecord");
  EXPECT_THROW(MakeExtractPlan(dir, "test", 10), Error);
}

TEST(ExtractPlan, ImageFolderInGroupsOfShardRows) {
  std::string dir = FreshTestDir("plan_images");
  MakeSynthImages(dir, 3, 4, 16, 16);
  ExtractPlan plan = MakeExtractPlan(dir, "", 5);
  EXPECT_EQ(plan.kind, InputKind::kImages);
  ASSERT_EQ(plan.images.size(), 12u);
  ASSERT_EQ(plan.shards.size(), 3u);
  EXPECT_EQ(plan.shards[0].first_image, 0u);
  EXPECT_EQ(plan.shards[0].image_count, 5u);
  EXPECT_EQ(plan.shards[2].first_image, 10u);
  EXPECT_EQ(plan.shards[2].image_count, 2u);
  EXPECT_EQ(plan.images.name(0), "class_000/img_000000.jpg");
  EXPECT_EQ(plan.images.label(11), 2);
  // The fingerprint follows the images: another listing gives another one.
  ExtractPlan other = MakeExtractPlan(dir, "", 4);
  EXPECT_NE(ShardInputJson(plan, plan.shards[0]), ShardInputJson(other, other.shards[0]));
  EXPECT_EQ(ShardInputJson(plan, plan.shards[0]), ShardInputJson(MakeExtractPlan(dir, "", 5), plan.shards[0]));
  EXPECT_THROW(MakeExtractPlan(dir, "train", 5), Error);
  EXPECT_THROW(MakeExtractPlan(dir, "", 0), Error);
  EXPECT_THROW(MakeExtractPlan(FreshTestDir("plan_empty"), "", 5), Error);
}

TEST(ExtractPlan, WorkersTakeShardsRoundRobin) {
  std::vector<size_t> of_worker_1;
  for (size_t i = 0; i < 7; ++i) {
    int owners = 0;
    for (int w = 0; w < 3; ++w) owners += ShardBelongsToWorker(i, w, 3);
    EXPECT_EQ(owners, 1);
    if (ShardBelongsToWorker(i, 1, 3)) of_worker_1.push_back(i);
  }
  EXPECT_EQ(of_worker_1, (std::vector<size_t>{1, 4}));
}

}  // namespace
}  // namespace imgpipe::extract
