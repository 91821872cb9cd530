#include "util/thread_pool.h"

#include <sched.h>

#include <algorithm>
#include <atomic>

namespace imgpipe {

ThreadPool::ThreadPool(int num_threads) {
  int n = std::max(1, num_threads);
  workers_.reserve(n);
  for (int i = 0; i < n; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& worker : workers_) worker.join();
}

void ThreadPool::Enqueue(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(task));
  }
  cv_.notify_one();
}

void ThreadPool::WorkerLoop() {
  while (true) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

void ParallelFor(ThreadPool& pool, size_t n, const std::function<void(size_t)>& fn) {
  // One task per worker, each taking the next index until none is left: memory does
  // not grow with n (a task and a future per index cost ~150 bytes each, 1.5 GB for
  // the stat calls of a ten-million-row manifest).
  std::atomic<size_t> next{0};
  std::mutex mu;
  size_t first_index = n;  // guarded by mu
  std::exception_ptr first;  // guarded by mu: the exception of index first_index
  auto run = [&] {
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (i < first_index) {
          first_index = i;
          first = std::current_exception();
        }
      }
    }
  };
  const size_t tasks = std::min<size_t>(n, static_cast<size_t>(pool.size()));
  std::vector<std::future<void>> futures;
  for (size_t t = 0; t < tasks; ++t) futures.push_back(pool.Submit(run));
  for (auto& f : futures) f.get();
  if (first) std::rethrow_exception(first);
}

int RestrictToCpus(int n) {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return AvailableCpus();
  cpu_set_t chosen;
  CPU_ZERO(&chosen);
  int taken = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE && taken < n; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) {
      CPU_SET(cpu, &chosen);
      ++taken;
    }
  }
  if (taken > 0) sched_setaffinity(0, sizeof(chosen), &chosen);
  return AvailableCpus();
}

int AvailableCpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace imgpipe
