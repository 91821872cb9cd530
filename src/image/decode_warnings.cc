#include "image/decode_warnings.h"

#include <atomic>
#include <mutex>
#include <unordered_set>

#include "util/logging.h"

namespace imgpipe {
namespace {

std::atomic<uint64_t> decodes_with_warnings{0};
thread_local uint64_t thread_decodes_with_warnings = 0;

// Paths logged so far: one line per file however often it is decoded (every epoch).
struct LoggedPaths {
  std::mutex mu;
  std::unordered_set<std::string> paths;  // guarded by mu
};

LoggedPaths& Logged() {
  static LoggedPaths* logged = new LoggedPaths;  // never destroyed: used at exit by threads
  return *logged;
}

}  // namespace

void ReportDecodeWarnings(const std::string& path, int count, const std::string& first) {
  decodes_with_warnings.fetch_add(1, std::memory_order_relaxed);
  ++thread_decodes_with_warnings;
  LoggedPaths& logged = Logged();
  {
    std::lock_guard<std::mutex> lock(logged.mu);
    if (!logged.paths.insert(path).second) return;
  }
  LogWarning(path + ": decoded despite " + std::to_string(count) +
             (count == 1 ? " warning" : " warnings") + ", the first: " + first);
}

uint64_t DecodeWarningCount() { return decodes_with_warnings.load(std::memory_order_relaxed); }

uint64_t ThreadDecodeWarningCount() { return thread_decodes_with_warnings; }

}  // namespace imgpipe
