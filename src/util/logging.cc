#include "util/logging.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace imgpipe {
namespace {

LogLevel LevelFromEnvironment() {
  const char* value = std::getenv("IMGPIPE_LOG_LEVEL");
  if (value == nullptr) return LogLevel::kInfo;
  if (std::strcmp(value, "debug") == 0) return LogLevel::kDebug;
  if (std::strcmp(value, "warning") == 0) return LogLevel::kWarning;
  if (std::strcmp(value, "error") == 0) return LogLevel::kError;
  return LogLevel::kInfo;
}

std::atomic<LogLevel>& CurrentLevel() {
  static std::atomic<LogLevel> level{LevelFromEnvironment()};
  return level;
}

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarning: return "warning";
    case LogLevel::kError: return "error";
  }
  return "?";
}

}  // namespace

void SetLogLevel(LogLevel level) { CurrentLevel() = level; }
LogLevel GetLogLevel() { return CurrentLevel(); }

void Log(LogLevel level, const std::string& message) {
  if (level < CurrentLevel()) return;
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  std::fprintf(stderr, "imgpipe %s: %s\n", LevelName(level), message.c_str());
}

}  // namespace imgpipe
