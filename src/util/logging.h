// Minimal leveled logging to stderr. The level comes from IMGPIPE_LOG_LEVEL
// (debug, info, warning, error; default info) or SetLogLevel.
#pragma once

#include <string>

namespace imgpipe {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();
// Writes one line "imgpipe LEVEL: message" when `level` is enabled. Thread-safe.
void Log(LogLevel level, const std::string& message);

inline void LogInfo(const std::string& m) { Log(LogLevel::kInfo, m); }
inline void LogWarning(const std::string& m) { Log(LogLevel::kWarning, m); }

}  // namespace imgpipe
