#include "pipeline/batch_dataset.h"

#include <gtest/gtest.h>

#include <cstring>

#include "pipeline/pipeline_test_util.h"
#include "pipeline/repeat_take_dataset.h"
#include "pipeline/shuffle_dataset.h"
#include "util/error.h"

namespace imgpipe::pipeline {
namespace {

// Sample i: `bytes` pixel bytes all equal to 'a' + i % 26, label i.
std::shared_ptr<GeneratorDataset<Sample>> Samples(int64_t n, size_t bytes = 12) {
  auto pool = BufferPool::Create();
  return std::make_shared<GeneratorDataset<Sample>>(n, [pool, bytes](uint64_t, size_t i) {
    Sample s;
    s.pixels = pool->Get(bytes);
    std::memset(s.pixels.data(), 'a' + static_cast<int>(i % 26), bytes);
    s.label = static_cast<int64_t>(i);
    s.source = "sample-source";
    s.offset = i;
    return s;
  });
}

TEST(BatchDataset, SizesLabelsAndRemainder) {
  std::vector<Batch> batches = Collect(BatchSamples(Samples(10, 3), 4, false));
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[0].size, 4u);
  EXPECT_EQ(batches[2].size, 2u);
  EXPECT_EQ(batches[0].sample_bytes, 3u);
  EXPECT_EQ(batches[0].data.size(), 12u);
  EXPECT_EQ(batches[2].data.size(), 6u);
  EXPECT_EQ(batches[0].labels, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(batches[2].labels, (std::vector<int64_t>{8, 9}));
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(batches[1].data.data()), 12), "eeefffggghhh");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(batches[1].data.data()) % 64, 0u);
}

TEST(BatchDataset, DropRemainder) {
  std::vector<Batch> batches = Collect(BatchSamples(Samples(10), 4, true));
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[1].labels, (std::vector<int64_t>{4, 5, 6, 7}));
  EXPECT_EQ(Collect(BatchSamples(Samples(8), 4, true)).size(), 2u);
  EXPECT_TRUE(Collect(BatchSamples(Samples(3), 4, true)).empty());
  EXPECT_TRUE(Collect(BatchSamples(Samples(0), 4, false)).empty());
  EXPECT_THROW(BatchSamples(Samples(3), 0, false), Error);
}

TEST(BatchDataset, PoolBuffersAreReused) {
  IteratorContext ctx = MakeTestContext();
  auto it = BatchSamples(Samples(-1, 1000), 8, false)->MakeIterator(ctx);
  for (int i = 0; i < 100; ++i) {
    std::optional<Batch> b = it->Next();  // released before the next one
    ASSERT_TRUE(b);
    ASSERT_EQ(b->labels.front(), 8 * i);
    if (i == 4) {
      EXPECT_LE(ctx.pool->allocations(), 2u);
    }
  }
  EXPECT_LE(ctx.pool->allocations(), 2u);
  EXPECT_GE(ctx.pool->reuses(), 98u);
}

TEST(BatchDataset, MismatchedSampleSizesNameBoth) {
  auto mixed = std::make_shared<GeneratorDataset<Sample>>(4, [](uint64_t, size_t i) {
    Sample s;
    s.pixels = BufferPool::Default()->Get(i == 2 ? 7 : 5);
    s.source = "img" + std::to_string(i) + ".jpg";
    return s;
  });
  auto it = BatchSamples(mixed, 4, false)->MakeIterator(MakeTestContext());
  try {
    it->Next();
    FAIL() << "no error for samples of different sizes";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("5"), std::string::npos) << what;
    EXPECT_NE(what.find("7"), std::string::npos) << what;
    EXPECT_NE(what.find("img2.jpg"), std::string::npos) << what;
  }
}

TEST(BatchDataset, SaveRestoreMidBatch) {
  CheckSaveRestoreAtEveryCut([] { return BatchSamples(Samples(11, 5), 3, false); }, 10);
  // Upstream stages cut mid-stream: batches straddle shuffle buffers and epochs.
  CheckSaveRestoreAtEveryCut(
      [] { return BatchSamples(Repeat(Shuffle<Sample>(Samples(7, 3), 4, 1), 2), 3, false); }, 10);
  // Cuts inside a batch: save the sample source's position and the partial batch.
  auto ctx = MakeTestContext();
  auto samples = Samples(10, 2);
  auto it = BatchSamples(samples, 4, false)->MakeIterator(ctx);
  it->Next();
  IteratorState state;
  it->Save(state);
  EXPECT_EQ(StateDecoder(state.GetBytes("0.test:partial"), "partial").GetInt(), 0);
  EXPECT_EQ(state.GetInt("0.test/1.generator:index"), 4);
}

TEST(BatchDataset, RestoresAPartialBatch) {
  // A state whose partial batch holds two samples continues with them.
  auto ctx = MakeTestContext();
  auto it = BatchSamples(Samples(10, 2), 4, false)->MakeIterator(ctx);
  IteratorState state;
  it->Save(state);
  StateEncoder e;
  e.PutInt(2);
  Sample a, b;
  a.pixels = BufferPool::Default()->Get(2);
  std::memcpy(a.pixels.data(), "xx", 2);
  a.label = 100;
  b.pixels = BufferPool::Default()->Get(2);
  std::memcpy(b.pixels.data(), "yy", 2);
  b.label = 101;
  ElementCodec<Sample>::Encode(a, e);
  ElementCodec<Sample>::Encode(b, e);
  state.PutBytes("0.test:partial", e.Finish());
  auto restored = BatchSamples(Samples(10, 2), 4, false)->MakeIterator(MakeTestContext());
  restored->Restore(state);
  std::optional<Batch> first = restored->Next();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->labels, (std::vector<int64_t>{100, 101, 0, 1}));
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(first->data.data()), 8), "xxyyaabb");
}

}  // namespace
}  // namespace imgpipe::pipeline
