// CPU time of this process, for utilisation figures.
#pragma once

namespace imgpipe {

// User + system CPU seconds this process has used (all threads).
double ProcessCpuSeconds();

// Measures CPU utilisation between construction (or Restart) and Utilisation():
// CPU seconds used over (wall seconds x cores), in [0, 1].
class CpuUsageMeter {
 public:
  explicit CpuUsageMeter(int cores);
  void Restart();
  double Utilisation() const;
  double CpuSeconds() const;
  double WallSeconds() const;

 private:
  int cores_;
  double cpu_start_;
  double wall_start_;
};

}  // namespace imgpipe
