#include "pipeline/bad_element.h"

#include <algorithm>
#include <limits>

#include "util/logging.h"

namespace imgpipe::pipeline {

void BadElements::Add(const std::string& reason) {
  ++skipped_;
  std::lock_guard<std::mutex> lock(mu_);
  if (first_reasons_.size() < kFirstReasons) first_reasons_.push_back(reason);
}

void BadElements::PassEnded(uint64_t elements) {
  uint64_t largest = largest_pass_.load();
  while (elements > largest && !largest_pass_.compare_exchange_weak(largest, elements)) {
  }
}

uint64_t BadElements::ConsecutiveLimit() const {
  const uint64_t largest = largest_pass_.load();
  if (largest == 0) return std::numeric_limits<uint64_t>::max();
  return std::max(kMinConsecutiveSkips, kPassesOfSkips * largest);
}

std::string BadElements::Summary() const {
  std::string out = std::to_string(skipped()) + " elements skipped";
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < first_reasons_.size(); ++i) {
    out += (i == 0 ? "; the first: " : "; ") + first_reasons_[i];
  }
  return out;
}

void BadElements::ThrowIfOnlySkips() const {
  if (skipped() == 0) return;
  throw Error("no good element in a whole pass over the input: " + Summary());
}

void BadElementGuard::SkipOrRethrow(const Error& e, const std::string& file, bool logged) {
  if (policy_ == ErrorPolicy::kFail) throw;
  if (!logged) {
    std::lock_guard<std::mutex> lock(mu_);
    if (logged_files_.insert(file).second) {
      LogWarning(std::string("skipping bad element: ") + e.what() +
                 " (further errors in this file are counted, not logged)");
    }
  }
  all_->Add(e.what());
  CountAndCheck(1);
}

void BadElementGuard::Skipped(const std::string& reason) {
  all_->Add(reason);
  CountAndCheck(1);
}

void BadElementGuard::CountAndCheck(uint64_t count) {
  stats_->errors += count;
  const uint64_t in_a_row = in_a_row_ += count;
  const uint64_t limit = all_->ConsecutiveLimit();
  if (in_a_row > limit) {
    throw Error("stopped: " + std::to_string(in_a_row) + " bad elements in a row in stage " +
                stats_->name + " and no good one (the limit is max(" +
                std::to_string(kMinConsecutiveSkips) + ", " + std::to_string(kPassesOfSkips) +
                " x the largest pass over the input) = " + std::to_string(limit) +
                " elements); " + all_->Summary());
  }
}

}  // namespace imgpipe::pipeline
