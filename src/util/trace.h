// A recorder of what each thread did when, written as Chrome trace-event JSON (opens in
// Perfetto or chrome://tracing). Off by default; a disabled ScopedTrace costs one
// relaxed atomic load. Built with NVTX 3 headers (IMGPIPE_HAVE_NVTX), each ScopedTrace
// is also an NVTX range, which Nsight Systems shows whether or not recording is on.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#ifdef IMGPIPE_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace imgpipe::trace {

// Starts recording (clears earlier events).
void Enable();
// Stops recording; recorded events stay until WriteChromeTrace or Enable.
void Disable();
inline std::atomic<bool>& EnabledFlag() {
  static std::atomic<bool> enabled{false};
  return enabled;
}
inline bool IsEnabled() { return EnabledFlag().load(std::memory_order_relaxed); }

// Records a complete event ("ph":"X") on the calling thread (`name` is copied).
void Record(const char* name, std::chrono::steady_clock::time_point start,
            std::chrono::steady_clock::time_point end);

// Names the calling thread in the trace ("map(train_preset) worker 2").
void SetThreadName(const std::string& name);

// Writes every recorded event; returns the number of events. Throws IoError.
size_t WriteChromeTrace(const std::string& path);

// Records the enclosing scope as one event; `name` must live until the scope ends.
class ScopedTrace {
 public:
  explicit ScopedTrace(const char* name) : name_(IsEnabled() ? name : nullptr) {
#ifdef IMGPIPE_HAVE_NVTX
    nvtxRangePushA(name);
#endif
    if (name_) start_ = std::chrono::steady_clock::now();
  }
  ~ScopedTrace() {
    if (name_) Record(name_, start_, std::chrono::steady_clock::now());
#ifdef IMGPIPE_HAVE_NVTX
    nvtxRangePop();
#endif
  }
  ScopedTrace(const ScopedTrace&) = delete;
  ScopedTrace& operator=(const ScopedTrace&) = delete;

 private:
  const char* name_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace imgpipe::trace
