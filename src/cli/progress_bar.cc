#include "cli/progress_bar.h"

#include <unistd.h>

#include <cstdio>

namespace imgpipe::cli {

ProgressBar::ProgressBar(std::string unit)
    : unit_(std::move(unit)),
      enabled_(::isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

void ProgressBar::Update(uint64_t done, uint64_t total, uint64_t bytes_done, const std::string& detail) {
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  if (done != total && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  double elapsed = std::chrono::duration<double>(now - start_).count();
  double rate = elapsed > 0 ? done / elapsed : 0;
  double mb_rate = elapsed > 0 ? bytes_done / elapsed / 1e6 : 0;
  double fraction = total ? static_cast<double>(done) / total : 1.0;
  constexpr int kWidth = 30;
  int filled = static_cast<int>(fraction * kWidth);
  std::string bar(filled, '#');
  bar.resize(kWidth, '.');
  std::string eta = rate > 0 ? FormatDuration((total - done) / rate) : "?";
  char mb[32] = "";
  if (bytes_done > 0) std::snprintf(mb, sizeof(mb), " %.1f MB/s", mb_rate);
  std::fprintf(stderr, "\r[%s] %5.1f%% %llu/%llu %.0f %s/s%s%s%s ETA %s   ", bar.c_str(),
               fraction * 100, static_cast<unsigned long long>(done),
               static_cast<unsigned long long>(total), rate, unit_.c_str(), mb,
               detail.empty() ? "" : " ", detail.c_str(), eta.c_str());
  drawn_ = true;
}

void ProgressBar::Finish() {
  if (drawn_) std::fputc('\n', stderr);
  drawn_ = false;
}

std::string FormatDuration(double seconds) {
  long s = static_cast<long>(seconds + 0.5);
  char buffer[32];
  if (s >= 3600) {
    std::snprintf(buffer, sizeof(buffer), "%ldh%02ldm%02lds", s / 3600, s / 60 % 60, s % 60);
  } else if (s >= 60) {
    std::snprintf(buffer, sizeof(buffer), "%ldm%02lds", s / 60, s % 60);
  } else {
    std::snprintf(buffer, sizeof(buffer), "%lds", s);
  }
  return buffer;
}

}  // namespace imgpipe::cli
