// Elapsed time for rates and timeouts, on the steady clock.
#pragma once

#include <time.h>

#include <chrono>

namespace imgpipe {

// Seconds from `start` to now.
inline double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// CPU seconds this thread has used (CLOCK_THREAD_CPUTIME_ID): time measured with it
// leaves out the time the thread waited for a core, as on a busy machine.
inline double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

}  // namespace imgpipe
