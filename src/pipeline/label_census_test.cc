#include "pipeline/label_census.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>

#include "pipeline/label_test_util.h"
#include "pipeline/pipeline_test_util.h"
#include "util/file.h"
#include "testing/unprivileged_test_util.h"

namespace imgpipe::pipeline {
namespace {

using ::testing::HasSubstr;

TEST(LabelCensusTest, ASampleReadsTheFirstRecordsAndKnowsItIsNotAll) {
  const LabelLessShards shape;
  const LabelLessFiles files = WriteLabelLessShards(TestTempPath("sample"), shape);
  LabelCensus sample = SampleLabels(files.paths, "image/class/label", 51);
  EXPECT_FALSE(sample.complete());
  EXPECT_EQ(sample.records(), 40 * 51);
  EXPECT_EQ(sample.min(), 1);
  EXPECT_EQ(sample.max(), shape.classes - 2);
  // Every record of each file: complete, the extremes found where they are.
  LabelCensus whole = SampleLabels(files.paths, "image/class/label", shape.records_per_file);
  EXPECT_TRUE(whole.complete());
  EXPECT_EQ(whole.min(), 0);
  EXPECT_EQ(whole.FileWithMax()->path, files.paths[shape.max_file]);
  EXPECT_EQ(whole.FileWithMax()->max_offset, files.max_offset);
  EXPECT_EQ(whole.FileWithMin()->path, files.paths[shape.min_file]);
  EXPECT_EQ(whole.FileWithMin()->min_offset, files.min_offset);
  EXPECT_EQ(whole.text.at(9), "class-9");
}

TEST(LabelCensusTest, AChangedFileIsReadAgainAndOtherFilesComeFromTheCache) {
  const LabelLessShards shape;
  const std::string dir = TestTempPath("changed");
  const LabelLessFiles files = WriteLabelLessShards(dir, shape);
  const std::string cache = LabelCensusCachePath(dir);
  EXPECT_EQ(cache, JoinPath(dir, "labels.scan.json"));
  EXPECT_FALSE(CachedLabelCensus(files.paths, "image/class/label", cache).complete());  // none yet
  LabelCensus first = CensusLabels(files.paths, "image/class/label", cache, 2, nullptr);
  EXPECT_EQ(first.files_from_cache, 0);
  EXPECT_EQ(first.records(), shape.files * shape.records_per_file);
  EXPECT_TRUE(CachedLabelCensus(files.paths, "image/class/label", cache).complete());
  EXPECT_FALSE(CachedLabelCensus(files.paths, "label", cache).complete());  // another key
  // File 0 rewritten with 3 records of label 20: read again; the 39 others from the cache.
  std::vector<std::string> records;
  for (int i = 0; i < 3; ++i) {
    Example e;
    AddBytesFeature(e.mutable_features(), "image/encoded", "x");
    AddInt64Feature(e.mutable_features(), "image/class/label", 20);
    records.push_back(SerializeExample(e));
  }
  WriteTestTfRecords(files.paths[0], records);
  EXPECT_FALSE(CachedLabelCensus(files.paths, "image/class/label", cache).complete());
  LabelCensus second = CensusLabels(files.paths, "image/class/label", cache, 2, nullptr);
  EXPECT_EQ(second.files_from_cache, shape.files - 1);
  EXPECT_EQ(second.max(), 20);
  EXPECT_EQ(second.records(), (shape.files - 1) * shape.records_per_file + 3);
  EXPECT_EQ(second.text.at(9), "class-9");  // the cached names kept
  // A subset (another pattern) is answered from the same file.
  EXPECT_TRUE(CachedLabelCensus({files.paths[5]}, "image/class/label", cache).complete());
  // A cache file that does not parse is no cache.
  WriteFileAtomic(cache, "{not json");
  EXPECT_FALSE(CachedLabelCensus(files.paths, "image/class/label", cache).complete());
  EXPECT_EQ(CensusLabels(files.paths, "image/class/label", cache, 1, nullptr).max(), 20);
}

TEST(LabelCensusTest, AFolderThatCannotBeWrittenKeepsItsCensusInTheUserCache) {
  const std::string dir = TestTempPath("read_only");
  const LabelLessFiles files = WriteLabelLessShards(dir);
  const std::string user_cache = TestTempPath("xdg");
  MakeDirectories(user_cache);
  MakeWritableByAnyone(user_cache);
  ASSERT_EQ(::chmod(dir.c_str(), 0555), 0);
  UnprivilegedResult r = RunUnprivileged([&](std::string* message) {
    ::setenv("XDG_CACHE_HOME", user_cache.c_str(), 1);
    const std::string cache = LabelCensusCachePath(dir);
    LabelCensus census = CensusLabels(files.paths, "image/class/label", cache, 2, nullptr);
    *message = census.cache_path;
    return census.complete() && CachedLabelCensus(files.paths, "image/class/label", cache).complete() ? 0 : 1;
  });
  ::chmod(dir.c_str(), 0755);
  EXPECT_EQ(r.status, 0) << r.message;
  EXPECT_THAT(r.message, HasSubstr(user_cache + "/imgpipe/label-scans/"));
  EXPECT_FALSE(PathExists(JoinPath(dir, "labels.scan.json")));
}

}  // namespace
}  // namespace imgpipe::pipeline
