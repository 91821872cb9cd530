#include "pipeline/buffer_pool.h"

#include <algorithm>
#include <new>
#include <utility>

namespace imgpipe::pipeline {
namespace {

constexpr std::align_val_t kAlignment{64};
// Free buffers kept for reuse; buffers returned beyond this are released. The free list
// never holds more than were once out at the same time, so in steady state it is the
// pipeline's own peak (a batch's samples, the map's in-flight ones, the prefetched
// batches: hundreds for large batches, which a small cap would release and allocate
// again, page-faulting on every image); the cap only bounds a transient peak.
constexpr size_t kMaxFreeBuffers = 4096;

void Release(uint8_t* data) { ::operator delete[](data, kAlignment); }

// The capacity allocated for `size` bytes: at least 64, rounded up to a quarter of its
// highest power of two (so sizes that vary a little share buffers; waste < 25%).
size_t CapacityFor(size_t size) {
  if (size <= 64) return 64;
  size_t step = (size_t{1} << (63 - __builtin_clzll(size))) / 4;
  return (size + step - 1) / step * step;
}

// Whether a free buffer of `capacity` may serve `size` bytes: not one more than twice
// as large (which a larger request would miss).
bool Fits(size_t capacity, size_t size) { return capacity >= size && capacity <= 2 * CapacityFor(size); }

}  // namespace

PooledBuffer::PooledBuffer(PooledBuffer&& other) noexcept
    : pool_(std::move(other.pool_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      capacity_(std::exchange(other.capacity_, 0)) {}

PooledBuffer& PooledBuffer::operator=(PooledBuffer&& other) noexcept {
  if (this != &other) {
    PooledBuffer old(std::move(*this));  // returns the buffer this held, on scope exit
    pool_ = std::move(other.pool_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

PooledBuffer::~PooledBuffer() {
  if (data_ == nullptr) return;
  if (pool_) {
    pool_->Return(data_, capacity_);
  } else {
    Release(data_);
  }
}

std::shared_ptr<BufferPool> BufferPool::Create() {
  return std::shared_ptr<BufferPool>(new BufferPool());
}

std::shared_ptr<BufferPool> BufferPool::Default() {
  static const std::shared_ptr<BufferPool> pool = Create();
  return pool;
}

BufferPool::~BufferPool() {
  for (auto& [data, capacity] : free_) Release(data);
}

PooledBuffer BufferPool::Get(size_t size) {
  PooledBuffer buffer;
  buffer.pool_ = shared_from_this();
  buffer.size_ = size;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // 1. The smallest free buffer that is large enough (free_ is sorted by capacity),
    //    unless it is much larger.
    auto it = std::lower_bound(free_.begin(), free_.end(), size,
                               [](const std::pair<uint8_t*, size_t>& entry, size_t wanted) {
                                 return entry.second < wanted;
                               });
    if (it != free_.end() && Fits(it->second, size)) {
      buffer.data_ = it->first;
      buffer.capacity_ = it->second;
      free_.erase(it);
      ++reuses_;
      return buffer;
    }
    ++allocations_;
  }
  // 2. None: a new one (at least 64 bytes, so that empty buffers have valid storage).
  size_t capacity = CapacityFor(size);
  buffer.data_ = static_cast<uint8_t*>(::operator new[](capacity, kAlignment));
  buffer.capacity_ = capacity;
  return buffer;
}

size_t BufferPool::allocations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return allocations_;
}

size_t BufferPool::reuses() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reuses_;
}

void BufferPool::Return(uint8_t* data, size_t capacity) {
  uint8_t* release = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto entry = std::make_pair(data, capacity);
    auto it = std::lower_bound(free_.begin(), free_.end(), capacity,
                               [](const std::pair<uint8_t*, size_t>& e, size_t c) {
                                 return e.second < c;
                               });
    free_.insert(it, entry);
    if (free_.size() > kMaxFreeBuffers) {
      // Keep the large buffers (the expensive ones): release the smallest.
      release = free_.front().first;
      free_.erase(free_.begin());
    }
  }
  if (release != nullptr) Release(release);
}

}  // namespace imgpipe::pipeline
