#include "io/piece_buffer.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "util/error.h"

namespace imgpipe {

constexpr size_t kHugePageBytes = size_t{2} << 20;

// Free buffers of kPieceBufferBytes, the most recently returned last (their pages are
// the likeliest to be in the CPU's caches).
class PieceBufferPool {
 public:
  PieceBuffer::Storage Take() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!free_.empty()) {
        PieceBuffer::Storage storage = std::move(free_.back());
        free_.pop_back();
        return storage;
      }
    }
    return PieceBuffer::Map(kPieceBufferBytes);
  }

  void Give(PieceBuffer::Storage storage) {
    std::lock_guard<std::mutex> lock(mu_);
    if (free_.size() < kMaxPooledPieceBuffers) free_.push_back(std::move(storage));
  }

  size_t size() {
    std::lock_guard<std::mutex> lock(mu_);
    return free_.size();
  }

 private:
  std::mutex mu_;
  std::vector<PieceBuffer::Storage> free_;  // guarded by mu_
};

namespace {

PieceBufferPool& Pool() {
  static auto* pool = new PieceBufferPool;  // never destroyed: buffers may outlive static destruction
  return *pool;
}

}  // namespace

void PieceBuffer::Unmap::operator()(char* p) const { ::munmap(p, bytes); }

PieceBuffer::Storage PieceBuffer::Map(size_t bytes) {
  // 1. Map a huge page more than asked, so that an aligned stretch lies inside.
  const size_t mapped = bytes + kHugePageBytes;
  void* p = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    throw Error("cannot map " + std::to_string(bytes) + " bytes for a piece read ahead: " + std::strerror(errno));
  }
  // 2. Unmap what lies before and after the aligned stretch.
  char* const start = static_cast<char*>(p);
  const size_t head = (kHugePageBytes - reinterpret_cast<uintptr_t>(start) % kHugePageBytes) % kHugePageBytes;
  if (head > 0) ::munmap(start, head);
  ::munmap(start + head + bytes, kHugePageBytes - head);
  // 3. Huge pages where the kernel has them for the asking (ignored where it has none).
  ::madvise(start + head, bytes, MADV_HUGEPAGE);
  return Storage(start + head, Unmap{bytes});
}

PieceBuffer::PieceBuffer(size_t capacity) {
  if (capacity <= kPieceBufferBytes) {
    storage_ = Pool().Take();
    capacity_ = kPieceBufferBytes;
  } else {
    capacity_ = (capacity + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
    storage_ = Map(capacity_);
  }
}

PieceBuffer::PieceBuffer(PieceBuffer&& other) noexcept
    : storage_(std::move(other.storage_)),
      capacity_(std::exchange(other.capacity_, 0)),
      size_(std::exchange(other.size_, 0)) {}

PieceBuffer& PieceBuffer::operator=(PieceBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    storage_ = std::move(other.storage_);
    capacity_ = std::exchange(other.capacity_, 0);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

PieceBuffer::~PieceBuffer() { reset(); }

void PieceBuffer::resize(size_t n) {
  if (n > capacity_) {
    throw Error("PieceBuffer: size " + std::to_string(n) + " over its capacity " + std::to_string(capacity_));
  }
  size_ = n;
}

void PieceBuffer::reset() {
  if (storage_ && capacity_ == kPieceBufferBytes) Pool().Give(std::move(storage_));
  storage_.reset();
  capacity_ = size_ = 0;
}

size_t PooledPieceBuffers() { return Pool().size(); }

}  // namespace imgpipe
