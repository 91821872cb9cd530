#include "util/malloc_tuning.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace imgpipe {
namespace {

#if defined(__GLIBC__)
TEST(MallocTuning, AppliesOnGlibc) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's allocator replaces glibc malloc and ignores mallopt";
#endif
  EXPECT_TRUE(TuneMallocForLargeBuffers());
}
#else
TEST(MallocTuning, ChangesNothingElsewhere) { EXPECT_FALSE(TuneMallocForLargeBuffers()); }
#endif

}  // namespace
}  // namespace imgpipe
