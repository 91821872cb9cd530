#include "util/malloc_tuning.h"

// Any C library header defines __GLIBC__ on glibc; until 2026-12 the test below came
// before one was included, so this function did nothing.
#include <cstdlib>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace imgpipe {

bool TuneMallocForLargeBuffers() {
#if defined(__GLIBC__)
  bool ok = mallopt(M_MMAP_THRESHOLD, 1 << 30) == 1;
  ok = mallopt(M_TRIM_THRESHOLD, 1 << 30) == 1 && ok;
  ok = mallopt(M_TOP_PAD, 64 << 20) == 1 && ok;
  // One arena for the threads created from now on (those already running keep theirs).
  // With one arena per thread, each pass's reader and decode threads took records and
  // images from arenas whose free memory sat in other threads' heaps, and wrote them to
  // fresh pages: 5,000 page faults a second in a Python process against 200 with one
  // arena (or tcmalloc), and 0.86 of the binary's images/s against 0.94. Few allocations
  // per image are large, so the one arena's lock is not contended.
  ok = mallopt(M_ARENA_MAX, 1) == 1 && ok;
  return ok;
#else
  return false;
#endif
}

}  // namespace imgpipe
