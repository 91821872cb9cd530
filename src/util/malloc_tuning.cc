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
  return ok;
#else
  return false;
#endif
}

}  // namespace imgpipe
