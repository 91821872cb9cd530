// Elapsed time for rates and timeouts, on the steady clock.
#pragma once

#include <chrono>

namespace imgpipe {

// Seconds from `start` to now.
inline double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace imgpipe
