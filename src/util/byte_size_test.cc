#include "util/byte_size.h"

#include <gtest/gtest.h>

namespace imgpipe {
namespace {

TEST(FormatBytes, PicksTheLargestUnitThatKeepsOneOrMore) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(1024), "1.0 KiB");
  EXPECT_EQ(FormatBytes(600 * 1024 + 51), "600.0 KiB");
  EXPECT_EQ(FormatBytes(3ull << 29), "1.5 GiB");
  EXPECT_EQ(FormatBytes(5ull << 50), "5.0 PiB");
  EXPECT_EQ(FormatBytes(UINT64_MAX), "16384.0 PiB");  // no unit past PiB
}

}  // namespace
}  // namespace imgpipe
