// The stages together, on real photos: the standard train pipeline is deterministic
// across thread counts, resumable at every batch, bounded in memory, and counts bad
// images instead of crashing.
#include "pipeline/pipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <unistd.h>

#include <map>
#include <optional>

#include "pipeline/image_samples.h"
#include "pipeline/input_list.h"
#include "pipeline/pipeline_test_util.h"
#include "record/example.h"
#include "record/image_feature_keys.h"
#include "record/index.h"

namespace imgpipe::pipeline {
namespace {

const std::string kTestData = IMGPIPE_TESTDATA_DIR;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif

// Resident set size of this process, from /proc/self/statm.
uint64_t ResidentBytes() {
  std::string statm = ReadFile("/proc/self/statm");
  uint64_t pages = std::stoull(statm.substr(statm.find(' ') + 1));
  return pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

std::string ImageExample(const std::string& bytes, int64_t label) {
  Example example;
  AddBytesFeature(example.mutable_features(), image_keys::kEncoded, bytes);
  AddInt64Feature(example.mutable_features(), image_keys::kLabel, label);
  return SerializeExample(example);
}

// The 47 photos as Examples in 3 TFRecord files, plus `extra` records in the last.
std::vector<std::string> WritePhotoShards(const std::vector<std::string>& extra = {}) {
  InputList photos = ListImageFolder(kTestData + "/images/photos-by-class");
  std::vector<std::vector<std::string>> shards(3);
  for (size_t i = 0; i < photos.size(); ++i) {
    shards[i % 3].push_back(ImageExample(ReadFile(photos.path(i)), photos.label(i)));
  }
  for (const std::string& e : extra) shards[2].push_back(e);
  std::vector<std::string> files;
  for (size_t s = 0; s < shards.size(); ++s) {
    files.push_back(TestTempPath("photos-" + std::to_string(s) + ".tfrecord"));
    WriteTestTfRecords(files.back(), shards[s], /*with_index=*/true);
  }
  return files;
}

TrainPreset SmallPreset() {
  TrainPreset preset;
  preset.size = 48;
  preset.layout = OutputLayout::kUint8Nhwc;
  return preset;
}

Pipeline<Batch> SmallTrainPipeline(const std::vector<std::string>& files, int map_threads,
                                   int64_t pad_to = 0, int64_t split_batch = -1) {
  ImagePipelineConfig config;
  config.pad_to = pad_to;
  config.split_batch = split_batch;
  config.patterns = files;
  config.batch_size = 8;
  config.drop_remainder = false;
  config.shuffle_buffer = 16;
  config.cycle_length = 2;
  config.map_parallelism = map_threads;
  config.prefetch = 2;
  return TrainPipeline(config, SmallPreset());
}

// SmallTrainPipeline over `files` run to the end under kSkip (the images delivered, the
// errors every stage counted), then under kFail up to its DataError.
struct PolicyRuns {
  size_t images = 0;     // samples that are not stand-ins
  size_t stand_ins = 0;  // samples marked as stand-ins
  size_t batches = 0;
  uint64_t errors = 0;
  uint64_t warnings = 0;  // decodes that accepted warnings
  std::optional<DataError> fail_error;  // none when the kFail run ended without one
};

PolicyRuns RunSkipThenFail(const std::vector<std::string>& files) {
  PolicyRuns runs;
  auto it = SmallTrainPipeline(files, 2).MakeIterator();
  while (auto b = it.Next()) {
    const size_t marked = static_cast<size_t>(std::count(b->stand_ins.begin(), b->stand_ins.end(), 1));
    runs.images += b->size - marked;
    runs.stand_ins += marked;
    runs.batches++;
  }
  uint64_t counted_stand_ins = 0;
  for (const StageSnapshot& s : it.Stats()) {
    runs.errors += s.errors;
    runs.warnings += s.warnings;
    counted_stand_ins += s.stand_ins;
  }
  EXPECT_EQ(counted_stand_ins, runs.stand_ins);
  PipelineOptions fail;
  fail.error_policy = ErrorPolicy::kFail;
  auto failing = SmallTrainPipeline(files, 2).MakeIterator(fail);
  try {
    while (failing.Next()) {
    }
  } catch (const DataError& e) {
    runs.fail_error = e;
  }
  return runs;
}

TEST(Pipeline, TrainPipelineIsDeterministicAcrossThreadCounts) {
  std::vector<std::string> files = WritePhotoShards();
  std::vector<std::string> reference;
  for (int threads : {1, 2, 4, kAutotune}) {
    SCOPED_TRACE(threads);
    PipelineOptions options;
    options.seed = 42;
    options.cpu_budget = 2;
    auto it = SmallTrainPipeline(files, threads).MakeIterator(options);
    std::vector<Batch> batches;
    while (auto b = it.Next()) batches.push_back(std::move(*b));
    ASSERT_EQ(batches.size(), 6u);  // 47 photos in batches of 8
    size_t images = 0;
    for (const Batch& b : batches) images += b.size;
    EXPECT_EQ(images, 47u);
    std::vector<std::string> views = ElementViews(batches);
    if (reference.empty()) {
      reference = views;
    } else {
      EXPECT_TRUE(views == reference);
    }
  }
  // Another seed gives another order.
  PipelineOptions other;
  other.seed = 43;
  auto it = SmallTrainPipeline(files, 2).MakeIterator(other);
  EXPECT_NE(ElementView(*it.Next()), reference[0]);
}

TEST(Pipeline, TrainPipelineResumesAtEveryBatch) {
  std::vector<std::string> files = WritePhotoShards();
  PipelineOptions options;
  options.seed = 7;
  CheckSaveRestoreAtEveryCut([&] { return SmallTrainPipeline(files, 2).dataset(); }, 6, options);
}

// The 47 photos padded to 56 (7 full batches; the 9 padded ones repeat the epoch's first
// 8, cyclically) and batch 2 split in two: sizes and labels as planned, resumable.
TEST(Pipeline, PaddedAndSplitTrainPipelineResumesAtEveryBatch) {
  std::vector<std::string> files = WritePhotoShards();
  PipelineOptions options;
  options.seed = 3;
  auto it = SmallTrainPipeline(files, 2, 56, 2).MakeIterator(options);
  std::vector<size_t> sizes;
  std::vector<int64_t> labels;
  while (auto batch = it.Next()) {
    sizes.push_back(batch->size);
    labels.insert(labels.end(), batch->labels.begin(), batch->labels.end());
  }
  EXPECT_EQ(sizes, (std::vector<size_t>{8, 8, 4, 4, 8, 8, 8, 8}));
  ASSERT_EQ(labels.size(), 56u);
  EXPECT_EQ(std::vector<int64_t>(labels.begin() + 47, labels.begin() + 55),
            std::vector<int64_t>(labels.begin(), labels.begin() + 8));
  EXPECT_EQ(labels[55], labels[0]);
  CheckSaveRestoreAtEveryCut([&] { return SmallTrainPipeline(files, 2, 56, 2).dataset(); }, 10, options);
}

// Undecodable images (and an Example without an image) get stand-ins: 51 records make
// 7 batches of 8 (the last of 3), as 51 good ones would.
TEST(Pipeline, BadImagesGetStandInsAndAreCounted) {
  std::vector<std::string> bad;
  for (const char* name : {"monkey12.jpg", "jpeg-lossless/0/cat-3449999_640_grayscale_8bit.jpg"}) {
    bad.push_back(ImageExample(ReadFile(kTestData + "/bad-images/" + name), 0));
  }
  bad.push_back(ImageExample("not an image at all", 0));
  bad.push_back("not even an Example");
  std::vector<std::string> files = WritePhotoShards(bad);
  PolicyRuns runs = RunSkipThenFail(files);
  EXPECT_EQ(runs.images, 47u);
  EXPECT_EQ(runs.stand_ins, 4u);
  EXPECT_EQ(runs.batches, 7u);
  EXPECT_EQ(runs.errors, 4u);
  ASSERT_TRUE(runs.fail_error.has_value()) << "no error under the fail policy";
  EXPECT_EQ(runs.fail_error->path(), files[2]);
  EXPECT_TRUE(runs.fail_error->offset().has_value());
}

// A camera JPEG with bytes before a marker ("2 extraneous bytes before marker 0xdb")
// is a good image: decoded, not stood in for, and counted in the map's warnings.
TEST(Pipeline, JpegWarningsAreCountedNotSkipped) {
  std::string jpeg = ReadFile(kTestData + "/images/hymenoptera/val/ants/10308379_1b6c72e180.jpg");
  const size_t dqt = jpeg.find(std::string("\xFF\xDB", 2));
  ASSERT_NE(dqt, std::string::npos);
  jpeg.insert(dqt, std::string("\0\0", 2));
  std::vector<std::string> files = WritePhotoShards({ImageExample(jpeg, 0)});
  PolicyRuns runs = RunSkipThenFail(files);
  EXPECT_EQ(runs.images, 48u);
  EXPECT_EQ(runs.stand_ins, 0u);
  EXPECT_EQ(runs.errors, 0u);
  EXPECT_EQ(runs.warnings, 1u);
  EXPECT_FALSE(runs.fail_error.has_value()) << runs.fail_error->what();
}

// Damaged shards under the whole train pipeline (interleave threads, shuffle, map,
// prefetch): a flipped byte in one record of shard 0 and shard 1 cut inside its last
// record. kSkip: every other photo arrives and both are counted; kFail: a DataError
// naming one of the two files and the damaged record's offset.
TEST(Pipeline, FlippedByteAndTruncatedShardAreSkippedAndCountedOrFail) {
  std::vector<std::string> files = WritePhotoShards();
  std::map<std::string, uint64_t> damaged;  // file -> offset of its damaged record
  {
    std::vector<IndexEntry> entries = ReadIndexFile(IndexPathFor(files[0]));
    std::string bytes = ReadFile(files[0]);
    bytes[entries[2].offset + 12 + entries[2].size / 2] ^= 0x10;
    WriteFileAtomic(files[0], bytes);
    damaged[files[0]] = entries[2].offset;
  }
  {
    std::vector<IndexEntry> entries = ReadIndexFile(IndexPathFor(files[1]));
    WriteFileAtomic(files[1], ReadFile(files[1]).substr(0, entries.back().offset + 100));
    damaged[files[1]] = entries.back().offset;
  }
  PolicyRuns runs = RunSkipThenFail(files);
  EXPECT_EQ(runs.images, 45u);
  EXPECT_EQ(runs.stand_ins, 0u);  // records the reader cannot frame are left out
  EXPECT_EQ(runs.errors, 2u);
  ASSERT_TRUE(runs.fail_error.has_value()) << "no error under the fail policy";
  const DataError& e = *runs.fail_error;
  ASSERT_TRUE(damaged.count(e.path())) << e.what();
  EXPECT_EQ(e.offset(), damaged[e.path()]) << e.what();
}

TEST(Pipeline, BatchBuffersAreRecycledAcrossEpochs) {
  std::vector<std::string> files = WritePhotoShards();
  ImagePipelineConfig config;
  config.patterns = files;
  config.batch_size = 8;
  config.repeat = true;
  config.map_parallelism = 2;
  config.prefetch = 2;
  PipelineOptions options;
  options.autotune = false;  // fixed buffer sizes: a fixed number of buffers in use
  auto it = TrainPipeline(config, SmallPreset()).MakeIterator(options);
  // The first epoch fills the pool; later epochs reuse its buffers: 36 batches of 8
  // (one buffer each: samples are written in place) allocate only a few more, as
  // in-flight counts peak.
  for (int i = 0; i < 12; ++i) ASSERT_TRUE(it.Next());
  size_t allocated = it.pool().allocations();
  size_t reused = it.pool().reuses();
  uint64_t resident = ResidentBytes();
  size_t images = 0;
  for (int i = 0; i < 36; ++i) images += it.Next()->size;
  EXPECT_EQ(images, 36u * 8);
  // Six more epochs: the process does not grow (the slack covers allocator noise).
  // Not under AddressSanitizer, whose quarantine holds on to freed memory (up to 256 MB);
  // the pool's counts below still hold there.
  if (!kAddressSanitizer) {
    EXPECT_LT(ResidentBytes(), resident + (32u << 20));
  }
  // In-flight counts peak with timing (a loaded machine reaches a new peak now and then),
  // so a few more allocations are allowed: 36 requests, at most 4 new buffers.
  EXPECT_LE(it.pool().allocations(), allocated + 4);
  EXPECT_GE(it.pool().reuses() - reused, 36u - 4);
}

}  // namespace
}  // namespace imgpipe::pipeline
