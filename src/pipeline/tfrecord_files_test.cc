#include "pipeline/tfrecord_files.h"

#include <gtest/gtest.h>

#include "pipeline/pipeline_test_util.h"
#include "util/file.h"

namespace imgpipe::pipeline {
namespace {

TEST(TfRecordFilesTest, TensorFlowNamesMatch) {
  for (const char* name : {"a.tfrecord", "x.tfrecords", "train-00000-of-01024",
                           "validation-00127-of-00128", "mnist-train.tfrecord-00000-of-00001",
                           "train-00000-of-00004.tfrecord", "penguin-train-00000-of-00001.gz",
                           "b.tfrecord.gz", "imagenet2012-validation.tfrecord-00003-of-00064"}) {
    EXPECT_TRUE(HasTfRecordName(name)) << name;
  }
  for (const char* name : {"a.tfrecord.idx", ".a.tfrecord", "a.tfrecord.123.tmp", "labels.txt",
                           "dataset_info.json", "photo.jpg", "train-0-of-1", "README"}) {
    EXPECT_FALSE(HasTfRecordName(name)) << name;
  }
}

TEST(TfRecordFilesTest, SplitsComeFromTheNames) {
  EXPECT_EQ(SplitOfName("train-00000-of-01024"), "train");
  EXPECT_EQ(SplitOfName("validation-00000-of-00128"), "validation");
  EXPECT_EQ(SplitOfName("mnist-test.tfrecord-00000-of-00001"), "test");
  EXPECT_EQ(SplitOfName("imagenet_val.tfrecord"), "validation");
  EXPECT_EQ(SplitOfName("test_set-train.tfrecord-00000-of-00002"), "train");  // the last word
  EXPECT_EQ(SplitOfName("penguin-train-00000-of-00001.gz"), "train");
  EXPECT_EQ(SplitOfName("mnist.tfrecord"), "");
  EXPECT_EQ(SplitOfName("trainee.tfrecord"), "");
}

TEST(TfRecordFilesTest, FindsFilesByNameAndByContent) {
  const std::string dir = TestTempPath("find");
  MakeDirectories(JoinPath(dir, "sub.tfrecord"));
  WriteTestTfRecords(JoinPath(dir, "train-00000-of-00002"), {"a", "b"});
  WriteTestTfRecords(JoinPath(dir, "mystery.data"), {"c"});     // found by its first frame
  WriteTestTfRecords(JoinPath(dir, "labels.txt"), {"d"});       // never read
  WriteFileAtomic(JoinPath(dir, "notes.bin"), "not a record at all, just text");
  WriteFileAtomic(JoinPath(dir, "empty.bin"), "");
  WriteFileAtomic(JoinPath(dir, "validation-00000-of-00001"), "");  // by name, even empty
  std::vector<TfRecordFile> files = FindTfRecordFiles(dir);
  EXPECT_EQ(files, (std::vector<TfRecordFile>{{JoinPath(dir, "mystery.data"), ""},
                                              {JoinPath(dir, "train-00000-of-00002"), "train"},
                                              {JoinPath(dir, "validation-00000-of-00001"), "validation"}}));
}

TEST(TfRecordFilesTest, FrameCheckReadsCompressedFiles) {
  EXPECT_TRUE(HasTfRecordFrame(std::string(IMGPIPE_TESTDATA_DIR) + "/tfrecord/tfx/penguin-train-00000-of-00001.gz"));
  EXPECT_TRUE(HasTfRecordFrame(std::string(IMGPIPE_TESTDATA_DIR) + "/tfrecord/tfx/mnist.tfrecord"));
  EXPECT_FALSE(HasTfRecordFrame(std::string(IMGPIPE_TESTDATA_DIR) + "/images/LICENSE-DALI_extra"));
  EXPECT_FALSE(HasTfRecordFrame("/nonexistent/file"));
}

}  // namespace
}  // namespace imgpipe::pipeline
