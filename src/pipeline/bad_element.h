// Skipping bad elements, in one place. Under ErrorPolicy::kSkip every stage that skips
// hands the error to its BadElementGuard::SkipOrRethrow, which counts it in the stage's
// errors, logs the first one of each file, and adds it to the pipeline's BadElements.
//
// The stop rule, so that a pipeline whose input is all bad ends instead of spinning:
// 1. A stage that skips more than max(kMinConsecutiveSkips, kPassesOfSkips x the largest
//    pass seen) elements in a row, with no good one between, throws Error. The largest
//    pass is the most elements a Repeat stage has yielded in one pass over its input;
//    before a pass has finished (or without a Repeat) there is no such limit, since the
//    input then ends by itself.
// 2. A pipeline iterator whose pass ends without a single element, after skips, throws
//    Error (PipelineIterator::Next).
// Both errors name the count of skipped elements and the first kFirstReasons reasons.
#pragma once

#include <atomic>
#include <memory>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "pipeline/stats.h"
#include "util/error.h"
#include "util/error_policy.h"

namespace imgpipe::pipeline {

inline constexpr uint64_t kMinConsecutiveSkips = 1000;
inline constexpr uint64_t kPassesOfSkips = 10;
inline constexpr size_t kFirstReasons = 3;

// The skips of one pipeline iterator, shared by its stages. Thread-safe.
class BadElements {
 public:
  // Counts one skipped element; keeps `reason` when it is among the first few.
  void Add(const std::string& reason);
  // A Repeat stage finished a pass of `elements` elements.
  void PassEnded(uint64_t elements);
  // The rule-1 limit on skips in a row: max(kMinConsecutiveSkips, kPassesOfSkips x the
  // largest pass), or UINT64_MAX before any pass ended.
  uint64_t ConsecutiveLimit() const;
  uint64_t skipped() const { return skipped_.load(); }
  // "N elements skipped; the first: R1; R2; R3".
  std::string Summary() const;
  // Rule 2: throws Error when elements were skipped (call when a pass gave nothing).
  void ThrowIfOnlySkips() const;

 private:
  std::atomic<uint64_t> skipped_{0};
  std::atomic<uint64_t> largest_pass_{0};
  mutable std::mutex mu_;
  std::vector<std::string> first_reasons_;  // guarded by mu_
};

// One stage's side of skipping: its per-file log and its count of skips in a row.
// Thread-safe (a map's workers share one).
class BadElementGuard {
 public:
  BadElementGuard(ErrorPolicy policy, StageStats* stats, std::shared_ptr<BadElements> all)
      : policy_(policy), stats_(stats), all_(std::move(all)) {}

  // Call from the catch block of `e`, a bad element of `file`. Under kFail rethrows the
  // exception being handled. Under kSkip counts it in the stage's errors, logs it when it
  // is the first of `file` (unless `logged`: its reader already did), adds it to the
  // pipeline's BadElements, and throws Error when rule 1 says stop.
  void SkipOrRethrow(const Error& e, const std::string& file, bool logged = false);
  void SkipOrRethrow(const DataError& e) { SkipOrRethrow(e, e.path()); }
  // Counts one element skipped by a reader that has logged it itself (under kSkip;
  // under kFail the reader throws instead); applies rule 1.
  void Skipped(const std::string& reason);
  // A good element: the count of skips in a row restarts.
  void Good() { in_a_row_.store(0, std::memory_order_relaxed); }

 private:
  void CountAndCheck(uint64_t count);

  const ErrorPolicy policy_;
  StageStats* const stats_;
  const std::shared_ptr<BadElements> all_;
  std::atomic<uint64_t> in_a_row_{0};
  std::mutex mu_;
  std::set<std::string> logged_files_;  // guarded by mu_
};

}  // namespace imgpipe::pipeline
