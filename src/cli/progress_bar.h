// A one-line progress bar with rate and ETA, redrawn on a terminal (stderr); silent
// when stderr is not a terminal.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace imgpipe::cli {

class ProgressBar {
 public:
  // `unit` names what is counted, e.g. "img".
  explicit ProgressBar(std::string unit);
  // Redraws at most every 100 ms (and always when done == total). MB/s is shown when
  // bytes_done > 0; `detail` (e.g. "loss 2.31") goes before the ETA.
  void Update(uint64_t done, uint64_t total, uint64_t bytes_done, const std::string& detail = "");
  // Ends the line if anything was drawn.
  void Finish();
  bool enabled() const { return enabled_; }

 private:
  std::string unit_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

// "1h02m03s", "4m05s", "12s".
std::string FormatDuration(double seconds);

}  // namespace imgpipe::cli
