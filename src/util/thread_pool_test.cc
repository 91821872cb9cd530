#include "util/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>

namespace imgpipe {
namespace {

TEST(ThreadPool, RunsEveryTaskAndReturnsResults) {
  ThreadPool pool(3);
  auto f = pool.Submit([] { return 7; });
  std::atomic<int> sum{0};
  ParallelFor(pool, 1000, [&](size_t i) { sum += static_cast<int>(i); });
  EXPECT_EQ(f.get(), 7);
  EXPECT_EQ(sum.load(), 999 * 1000 / 2);
}

TEST(ThreadPool, ExceptionReachesCaller) {
  ThreadPool pool(2);
  std::atomic<int> ran{0};
  EXPECT_THROW(ParallelFor(pool, 10,
                           [&](size_t i) {
                             ++ran;
                             if (i == 3) throw std::runtime_error("boom");
                           }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), 10);
}

TEST(ThreadPool, ParallelForRethrowsTheLowestIndexAfterEveryCall) {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> calls(5000);
  try {
    ParallelFor(pool, calls.size(), [&](size_t i) {
      ++calls[i];
      if (i == 4000 || i == 17 || i == 2500) throw std::runtime_error(std::to_string(i));
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "17");
  }
  for (size_t i = 0; i < calls.size(); ++i) ASSERT_EQ(calls[i].load(), 1) << i;
  ParallelFor(pool, 0, [](size_t) { FAIL(); });
}

TEST(RestrictToCpus, LimitsThisThreadAndItsChildren) {
  std::thread([] {
    int before = AvailableCpus();
    EXPECT_EQ(RestrictToCpus(1), 1);
    int in_child = 0;
    std::thread([&] { in_child = AvailableCpus(); }).join();
    EXPECT_EQ(in_child, 1);
    EXPECT_EQ(RestrictToCpus(before + 5), 1);  // can only narrow what is allowed
  }).join();
}

}  // namespace
}  // namespace imgpipe
