// Memory for the pieces of a source read ahead over a network (byte_source.h): buffers
// mapped in huge pages where the kernel allows (madvise(MADV_HUGEPAGE)), not zero-filled,
// and kept for reuse. A fresh 8 MiB string per piece made reading 236 MB over loopback
// HTTP cost 3.6 ms of CPU per MB more than local disk, most of it in zero-filling and in
// page faults (2,048 per piece, 22 ms on a virtual machine; 4 with huge pages, 0.6 ms).
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

namespace imgpipe {

// The size of the buffers the pool keeps: the pieces HttpByteSource reads (8 MiB).
inline constexpr size_t kPieceBufferBytes = size_t{8} << 20;

// Buffers the pool keeps at most when no piece holds them (128 MiB). A buffer is made only
// when the pool has none, so the process never holds more of them than it had in use at
// once (which the Loader's memory check counts as read-ahead).
inline constexpr size_t kMaxPooledPieceBuffers = 16;

// Bytes of one piece: up to capacity() bytes, of which the first size() are the piece's.
// Its storage (kPieceBufferBytes, or the capacity asked rounded up to 2 MiB when larger)
// comes from a process-wide pool and goes back to it when the buffer is destroyed or
// assigned to. Movable, not copyable; not thread-safe (the pool is).
class PieceBuffer {
 public:
  PieceBuffer() = default;
  // A buffer of size 0 holding at least `capacity` bytes, their contents unspecified.
  // Throws Error when the memory cannot be mapped.
  explicit PieceBuffer(size_t capacity);
  PieceBuffer(PieceBuffer&& other) noexcept;
  PieceBuffer& operator=(PieceBuffer&& other) noexcept;
  ~PieceBuffer();

  char* data() { return storage_.get(); }
  const char* data() const { return storage_.get(); }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  std::string_view view() const { return {storage_.get(), size_}; }
  // Sets the size to n (at most capacity()); the bytes it adds are unspecified.
  void resize(size_t n);
  // Size 0, the storage back to the pool.
  void reset();

 private:
  struct Unmap {
    size_t bytes;
    void operator()(char* p) const;
  };
  using Storage = std::unique_ptr<char, Unmap>;
  friend class PieceBufferPool;
  // `bytes` (a multiple of 2 MiB) of fresh memory, 2 MiB-aligned, advised as huge pages.
  static Storage Map(size_t bytes);

  Storage storage_{nullptr, Unmap{0}};
  size_t capacity_ = 0;
  size_t size_ = 0;
};

// Buffers in the pool now (for tests).
size_t PooledPieceBuffers();

}  // namespace imgpipe
