#include "monitor/cpu_usage.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>

namespace imgpipe {
namespace {

double Seconds(const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; }

double WallNow() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

double ProcessCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return Seconds(usage.ru_utime) + Seconds(usage.ru_stime);
}

CpuUsageMeter::CpuUsageMeter(int cores) : cores_(std::max(1, cores)) { Restart(); }

void CpuUsageMeter::Restart() {
  cpu_start_ = ProcessCpuSeconds();
  wall_start_ = WallNow();
}

double CpuUsageMeter::CpuSeconds() const { return ProcessCpuSeconds() - cpu_start_; }
double CpuUsageMeter::WallSeconds() const { return WallNow() - wall_start_; }

double CpuUsageMeter::Utilisation() const {
  double wall = WallSeconds();
  return wall > 0 ? std::clamp(CpuSeconds() / (wall * cores_), 0.0, 1.0) : 0.0;
}

}  // namespace imgpipe
