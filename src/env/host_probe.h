// The machine around the process: WSL or container, the CPUs it may use and the memory
// it may take, read from /proc and /sys below a SystemRoot.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "env/system_root.h"

namespace imgpipe::env {

struct WslInfo {
  bool detected = false;     // /proc/version names Microsoft
  bool wsl2 = false;         // a WSL2 kernel ("microsoft-standard", "WSL2") or /dev/dxg
  bool has_dxg = false;      // /dev/dxg: GPU paravirtualisation to the Windows driver
  bool has_wsl_lib = false;  // /usr/lib/wsl/lib: the Windows driver's libcuda
  std::string kernel;        // the first line of /proc/version
};
// WSL from /proc/version, /dev/dxg and /usr/lib/wsl/lib.
WslInfo DetectWsl(const SystemRoot& root);

// The container runtime this process runs under: "docker" (/.dockerenv), "podman"
// (/run/.containerenv), or "docker", "kubernetes", "containerd", "lxc" from
// /proc/1/cgroup; "" when none is detected.
std::string DetectContainer(const SystemRoot& root);

struct CpuInfo {
  int allowed = 1;             // CPUs in this process's affinity mask (or online when unknown)
  std::string allowed_source;  // where `allowed` came from
  std::optional<double> cgroup_quota;  // CPUs' worth of time the cgroup may use
  // What parallel work can use: min(allowed, ceil(quota)), at least 1.
  int usable = 1;
};
// /proc/self/status Cpus_allowed_list (else /sys/devices/system/cpu/online) and the
// cgroup CPU quota (v2 cpu.max, v1 cpu.cfs_quota_us / cpu.cfs_period_us), the tightest
// level of this process's cgroup and its parents.
CpuInfo ProbeCpus(const SystemRoot& root);
// The number of CPUs in a kernel CPU list ("0-3,8,10-11" is 7); nullopt when malformed.
std::optional<int> CountCpuList(std::string_view list);

struct MemoryInfo {
  std::optional<uint64_t> total_bytes;             // /proc/meminfo MemTotal
  std::optional<uint64_t> available_bytes;         // /proc/meminfo MemAvailable
  std::optional<uint64_t> cgroup_limit_bytes;      // the tightest cgroup memory limit
  std::optional<uint64_t> cgroup_available_bytes;  // limit - usage + reclaimable cache
  // What this process can still take: the smaller of the two; nullopt when unknown.
  std::optional<uint64_t> usable_bytes() const;
};
MemoryInfo ProbeMemory(const SystemRoot& root);
// A value of /proc/meminfo ("MemAvailable"), in bytes.
std::optional<uint64_t> MeminfoBytes(std::string_view meminfo, std::string_view key);

}  // namespace imgpipe::env
