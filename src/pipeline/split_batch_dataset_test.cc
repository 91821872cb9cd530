#include "pipeline/split_batch_dataset.h"

#include <gtest/gtest.h>

#include <cstring>

#include "pipeline/batch_dataset.h"
#include "pipeline/pipeline_test_util.h"
#include "util/error.h"

namespace imgpipe::pipeline {
namespace {

// Batches of `size` of n samples; sample i: 2 bytes 'a' + i % 26, label i.
DatasetPtr<Batch> LetterBatches(int64_t n, size_t size) {
  auto pool = BufferPool::Create();
  auto samples = std::make_shared<GeneratorDataset<Sample>>(n, [pool](uint64_t, size_t i) {
    Sample s;
    s.pixels = pool->Get(2);
    std::memset(s.pixels.data(), 'a' + static_cast<int>(i % 26), 2);
    s.label = static_cast<int64_t>(i);
    return s;
  });
  return BatchSamples(samples, size, false);
}

std::string Pixels(const Batch& b) {
  return std::string(reinterpret_cast<const char*>(b.data.data()), b.size * b.sample_bytes);
}

TEST(SplitBatch, SplitsOneBatchInTwoHalves) {
  std::vector<Batch> out = Collect(SplitBatch(LetterBatches(12, 5), 1));  // sizes 5 5 2
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].labels, (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(out[1].labels, (std::vector<int64_t>{5, 6, 7}));
  EXPECT_EQ(out[2].labels, (std::vector<int64_t>{8, 9}));
  EXPECT_EQ(out[3].labels, (std::vector<int64_t>{10, 11}));
  EXPECT_EQ(out[1].size, 3u);
  EXPECT_EQ(out[2].size, 2u);
  EXPECT_EQ(Pixels(out[1]), "ffgghh");
  EXPECT_EQ(Pixels(out[2]), "iijj");
  EXPECT_EQ(out[2].sample_bytes, 2u);
}

TEST(SplitBatch, AnIndexPastTheEndChangesNothing) {
  std::vector<Batch> out = Collect(SplitBatch(LetterBatches(6, 3), 2));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].size, 3u);
}

TEST(SplitBatch, OneSampleCannotBeSplit) {
  auto it = SplitBatch(LetterBatches(5, 2), 2)->MakeIterator(MakeTestContext());
  Drain(*it, 2);
  EXPECT_THROW(it->Next(), Error);
  EXPECT_THROW(SplitBatch(LetterBatches(5, 2), -1), Error);
}

TEST(SplitBatch, SaveRestoreAtEveryCut) {
  CheckSaveRestoreAtEveryCut([] { return SplitBatch(LetterBatches(11, 4), 1); }, 10);
  CheckSaveRestoreAtEveryCut([] { return SplitBatch(LetterBatches(8, 4), 1); }, 10);
}

}  // namespace
}  // namespace imgpipe::pipeline
