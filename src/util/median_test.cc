#include "util/median.h"

#include <gtest/gtest.h>

namespace imgpipe {
namespace {

TEST(Median, OddEvenAndEmpty) {
  EXPECT_EQ(Median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_EQ(Median({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_EQ(Median({7.0}), 7.0);
  EXPECT_EQ(Median({}), 0.0);
}

}  // namespace
}  // namespace imgpipe
