#include "pipeline/buffer_pool.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace imgpipe::pipeline {
namespace {

TEST(BufferPool, BuffersAreAlignedAndSized) {
  auto pool = BufferPool::Create();
  for (size_t size : {0, 1, 63, 64, 65, 1000, 1 << 20}) {
    PooledBuffer b = pool->Get(size);
    EXPECT_EQ(b.size(), size);
    EXPECT_EQ(b.empty(), size == 0);
    ASSERT_NE(b.data(), nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % 64, 0u) << "size " << size;
    if (size > 0) std::memset(b.data(), 0xab, size);  // writable (ASan would catch overflow)
  }
}

TEST(BufferPool, LongLoopAllocatesOnlyAHandfulOfTimes) {
  auto pool = BufferPool::Create();
  for (int i = 0; i < 10000; ++i) {
    PooledBuffer a = pool->Get(4096);
    PooledBuffer b = pool->Get(100 + i % 50);
    PooledBuffer c = pool->Get(4096);
  }
  // Three buffers, plus one per size class of the varying middle one.
  EXPECT_LE(pool->allocations(), 6u);
  EXPECT_EQ(pool->allocations() + pool->reuses(), 30000u);
}

TEST(BufferPool, ReusesTheSmallestBufferThatFits) {
  auto pool = BufferPool::Create();
  const uint8_t* small_data;
  const uint8_t* large_data;
  {
    PooledBuffer small = pool->Get(100);
    PooledBuffer large = pool->Get(10000);
    small_data = small.data();
    large_data = large.data();
  }
  EXPECT_EQ(pool->allocations(), 2u);
  PooledBuffer a = pool->Get(80);  // fits both: takes the small one
  EXPECT_EQ(a.data(), small_data);
  EXPECT_EQ(a.size(), 80u);
  PooledBuffer b = pool->Get(5000);
  EXPECT_EQ(b.data(), large_data);
  PooledBuffer c = pool->Get(20000);  // fits none
  EXPECT_EQ(pool->allocations(), 3u);
  EXPECT_EQ(pool->reuses(), 2u);
}

TEST(BufferPool, SmallRequestsDoNotTakeLargeBuffers) {
  auto pool = BufferPool::Create();
  { PooledBuffer large = pool->Get(1 << 20); }
  PooledBuffer small = pool->Get(100);
  EXPECT_EQ(pool->allocations(), 2u);
  PooledBuffer large = pool->Get(1 << 20);
  EXPECT_EQ(pool->allocations(), 2u);
  EXPECT_EQ(pool->reuses(), 1u);
}

TEST(BufferPool, MovesTransferOwnership) {
  auto pool = BufferPool::Create();
  PooledBuffer a = pool->Get(10);
  uint8_t* data = a.data();
  PooledBuffer b(std::move(a));
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(b.data(), data);
  PooledBuffer c = pool->Get(10);
  c = std::move(b);  // c's old buffer goes back to the pool
  EXPECT_EQ(c.data(), data);
  PooledBuffer d = pool->Get(10);
  EXPECT_EQ(pool->reuses(), 1u);
  c = std::move(c);  // self-move keeps the buffer
  EXPECT_EQ(c.data(), data);
}

TEST(BufferPool, BuffersOutliveTheirPoolHandle) {
  PooledBuffer b;
  {
    auto pool = BufferPool::Create();
    b = pool->Get(128);
  }
  std::memset(b.data(), 1, 128);  // the buffer keeps the pool alive
  EXPECT_EQ(b.size(), 128u);
}

TEST(BufferPool, FreeListIsBounded) {
  auto pool = BufferPool::Create();
  {
    std::vector<PooledBuffer> many;
    for (int i = 0; i < 5000; ++i) many.push_back(pool->Get(64));
  }
  // Only a bounded number came back to the free list: getting 5000 again allocates anew.
  std::vector<PooledBuffer> again;
  for (int i = 0; i < 5000; ++i) again.push_back(pool->Get(64));
  EXPECT_GT(pool->reuses(), 0u);
  EXPECT_LT(pool->reuses(), 5000u);
  EXPECT_EQ(pool->allocations() + pool->reuses(), 10000u);
}

// A batch stage holds a whole batch of samples while the map has more in flight, and the
// batch buffer itself comes from the same pool: a few hundred buffers at once. In
// steady state all of them are reused, none allocated again.
TEST(BufferPool, KeepsWhatABatchOfSamplesNeeds) {
  auto pool = BufferPool::Create();
  constexpr size_t kSample = 224 * 224 * 3, kSamples = 300;
  for (int round = 0; round < 5; ++round) {
    std::vector<PooledBuffer> samples;
    for (size_t i = 0; i < kSamples; ++i) samples.push_back(pool->Get(kSample));
    PooledBuffer batch = pool->Get(kSample * 256);
  }
  EXPECT_EQ(pool->allocations(), kSamples + 1);
  EXPECT_EQ(pool->reuses(), 4 * (kSamples + 1));
}

TEST(BufferPool, DefaultIsOnePool) {
  EXPECT_EQ(BufferPool::Default(), BufferPool::Default());
  EXPECT_NE(BufferPool::Create(), BufferPool::Create());
}

}  // namespace
}  // namespace imgpipe::pipeline
