// Helpers shared by the fuzz targets. A target calls the code under test through
// IgnoringErrors: imgpipe::Error (DataError, IoError) is the expected answer to bad
// input; any other exception escapes and aborts, and so does a failed FUZZ_CHECK.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "util/error.h"

namespace imgpipe::fuzz {

// Aborts with the failed condition when `condition` is false (a broken invariant).
#define FUZZ_CHECK(condition)                                                          \
  do {                                                                                 \
    if (!(condition)) {                                                                \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", __FILE__, __LINE__,       \
                   #condition);                                                        \
      std::abort();                                                                    \
    }                                                                                  \
  } while (0)

// Runs fn(); returns false when it threw imgpipe::Error, true when it returned.
template <typename Fn>
bool IgnoringErrors(Fn&& fn) {
  try {
    fn();
    return true;
  } catch (const Error&) {
    return false;
  }
}

// The fuzz input as std::string_view.
inline std::string_view AsView(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// An in-memory file (memfd) that code reading paths can open as /proc/self/fd/N;
// Write replaces its contents. One per process, reused across inputs.
class MemoryFile {
 public:
  MemoryFile() : fd_(memfd_create("imgpipe-fuzz", MFD_CLOEXEC)) {
    FUZZ_CHECK(fd_ >= 0);
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemoryFile() { close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  void Write(std::string_view bytes) {
    FUZZ_CHECK(ftruncate(fd_, 0) == 0);
    size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = pwrite(fd_, bytes.data() + done, bytes.size() - done, done);
      FUZZ_CHECK(n > 0);
      done += static_cast<size_t>(n);
    }
  }
  const std::string& path() const { return path_; }

 private:
  int fd_;
  std::string path_;
};

}  // namespace imgpipe::fuzz
