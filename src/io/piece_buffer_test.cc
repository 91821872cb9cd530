#include "io/piece_buffer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <utility>
#include <vector>

#include "util/error.h"

namespace imgpipe {
namespace {

// A buffer holds what it was asked for and no more than its capacity; its storage is
// written through, and a size beyond the capacity is an Error.
TEST(PieceBufferTest, HoldsItsCapacityAndRefusesMore) {
  PieceBuffer piece(1000);
  EXPECT_EQ(piece.size(), 0u);
  EXPECT_TRUE(piece.empty());
  EXPECT_EQ(piece.capacity(), kPieceBufferBytes);
  std::memset(piece.data(), 'x', piece.capacity());  // every byte writable
  piece.resize(1000);
  EXPECT_EQ(piece.view(), std::string(1000, 'x'));
  piece.resize(piece.capacity());
  EXPECT_THROW(piece.resize(piece.capacity() + 1), Error);
  const PieceBuffer none;
  EXPECT_EQ(none.capacity(), 0u);
  EXPECT_EQ(none.data(), nullptr);
}

// A buffer's storage goes back to the pool when it is destroyed, reset or assigned to,
// and the next buffer takes it (the same memory, no new mapping); the pool keeps at most
// kMaxPooledPieceBuffers; a buffer over kPieceBufferBytes is its own, never pooled.
TEST(PieceBufferTest, StorageIsReusedWithinTheBound) {
  const char* storage = nullptr;
  {
    PieceBuffer piece(10);
    storage = piece.data();
  }
  const size_t pooled = PooledPieceBuffers();
  EXPECT_GE(pooled, 1u);
  PieceBuffer again(kPieceBufferBytes);
  EXPECT_EQ(again.data(), storage);  // the last one returned is the first taken
  EXPECT_EQ(PooledPieceBuffers(), pooled - 1);
  PieceBuffer moved = std::move(again);
  EXPECT_EQ(moved.data(), storage);
  EXPECT_EQ(again.data(), nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state is specified
  EXPECT_EQ(again.capacity(), 0u);
  moved = PieceBuffer(1);  // the old storage goes back
  EXPECT_EQ(PooledPieceBuffers(), pooled);
  moved.reset();
  EXPECT_EQ(PooledPieceBuffers(), pooled + 1);

  std::vector<PieceBuffer> many;
  for (size_t i = 0; i < kMaxPooledPieceBuffers + 4; ++i) many.emplace_back(kPieceBufferBytes);
  EXPECT_EQ(PooledPieceBuffers(), 0u);
  many.clear();
  EXPECT_EQ(PooledPieceBuffers(), kMaxPooledPieceBuffers);

  {
    PieceBuffer large(kPieceBufferBytes + 1);
    EXPECT_EQ(large.capacity() % (size_t{2} << 20), 0u);
    EXPECT_GT(large.capacity(), kPieceBufferBytes);
    std::memset(large.data(), 1, large.capacity());
  }
  EXPECT_EQ(PooledPieceBuffers(), kMaxPooledPieceBuffers);
}

}  // namespace
}  // namespace imgpipe
