// Recycled byte buffers: in steady state a pipeline allocates no pixel or batch memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace imgpipe::pipeline {

class BufferPool;

// A buffer owned by one holder at a time; it goes back to its pool when destroyed.
class PooledBuffer {
 public:
  PooledBuffer() = default;
  PooledBuffer(PooledBuffer&&) noexcept;
  PooledBuffer& operator=(PooledBuffer&&) noexcept;
  PooledBuffer(const PooledBuffer&) = delete;
  PooledBuffer& operator=(const PooledBuffer&) = delete;
  ~PooledBuffer();

  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  friend class BufferPool;
  std::shared_ptr<BufferPool> pool_;  // keeps the pool alive while buffers are out
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

// Hands out buffers of at least the requested size, reusing returned ones.
class BufferPool : public std::enable_shared_from_this<BufferPool> {
 public:
  static std::shared_ptr<BufferPool> Create();
  // A process-wide pool (for elements restored from iterator state).
  static std::shared_ptr<BufferPool> Default();
  ~BufferPool();

  // A buffer of `size` bytes (contents unspecified), 64-byte aligned.
  PooledBuffer Get(size_t size);

  // Counters for tests: buffers allocated from the system, and buffers reused.
  size_t allocations() const;
  size_t reuses() const;

 private:
  BufferPool() = default;
  friend class PooledBuffer;
  void Return(uint8_t* data, size_t capacity);

  mutable std::mutex mu_;
  std::vector<std::pair<uint8_t*, size_t>> free_;  // guarded by mu_
  size_t allocations_ = 0;                         // guarded by mu_
  size_t reuses_ = 0;                              // guarded by mu_
};

}  // namespace imgpipe::pipeline
