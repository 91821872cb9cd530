// A fixed set of worker threads running submitted tasks in FIFO order.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace imgpipe {

class ThreadPool {
 public:
  // Starts `num_threads` workers (at least one).
  explicit ThreadPool(int num_threads);
  // Runs the queued tasks to completion, then joins the workers.
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Queues `task`; the future carries its result or its exception.
  template <typename F>
  auto Submit(F task) -> std::future<decltype(task())> {
    using R = decltype(task());
    auto packaged = std::make_shared<std::packaged_task<R()>>(std::move(task));
    std::future<R> result = packaged->get_future();
    Enqueue([packaged] { (*packaged)(); });
    return result;
  }

  int size() const { return static_cast<int>(workers_.size()); }

 private:
  void Enqueue(std::function<void()> task);
  void WorkerLoop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;  // guarded by mu_
  bool stopping_ = false;                    // guarded by mu_
  std::vector<std::thread> workers_;
};

// Runs fn(i) for i in [0, n) on the pool and waits for all; rethrows the first
// exception (by index) after every call has finished.
void ParallelFor(ThreadPool& pool, size_t n, const std::function<void(size_t)>& fn);

// The number of CPUs this process may run on (sched_getaffinity), at least 1.
int AvailableCpus();

// Limits the calling thread, and the threads it starts afterwards, to the first `n`
// of the CPUs it may run on (so "N threads" in a benchmark means N cores). Returns the
// number of CPUs now allowed.
int RestrictToCpus(int n);

}  // namespace imgpipe
