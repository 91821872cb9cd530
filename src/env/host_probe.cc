#include "env/host_probe.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace imgpipe::env {
namespace {

// cgroup v1 reports "no limit" as a huge number (PAGE_COUNTER_MAX pages, ~2^63).
constexpr uint64_t kNoMemoryLimit = uint64_t{1} << 60;

// Where this process's cgroup for `controller` ("cpu", "memory") lives: the folders,
// from its own cgroup up to the hierarchy's root, that exist below the root.
std::vector<std::string> CgroupFolders(const SystemRoot& root, std::string_view controller) {
  // 1. cgroup v2 (unified): one hierarchy at /sys/fs/cgroup, the "0::PATH" line.
  // cgroup v1: /sys/fs/cgroup/CONTROLLER, the "N:a,b,CONTROLLER:PATH" line.
  bool v2 = root.Exists("/sys/fs/cgroup/cgroup.controllers");
  std::string mount = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/" + std::string(controller);
  std::string path = "/";
  for (const std::string& line :
       SplitAndTrim(root.ReadText("/proc/self/cgroup").value_or(""), '\n')) {
    size_t first = line.find(':');
    size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    std::string controllers = line.substr(first + 1, second - first - 1);
    std::vector<std::string> names = SplitAndTrim(controllers, ',');
    bool match = v2 ? line.compare(0, 3, "0::") == 0
                    : std::find(names.begin(), names.end(), controller) != names.end();
    if (match) path = line.substr(second + 1);
  }
  // 2. The process's own folder and every parent. Inside a container the hierarchy's
  // root is often the container's own cgroup and the host path is missing: the walk
  // up then ends there.
  std::vector<std::string> folders;
  while (true) {
    std::string folder = path == "/" ? mount : mount + path;
    if (root.Exists(folder)) folders.push_back(folder);
    if (path == "/" || path.empty()) break;
    size_t slash = path.find_last_of('/');
    path = slash == 0 ? "/" : path.substr(0, slash);
  }
  return folders;
}

// The value of `key` in a "key value" per line file (memory.stat).
std::optional<int64_t> KeyedValue(std::string_view text, std::string_view key) {
  for (const std::string& line : SplitAndTrim(text, '\n')) {
    if (line.size() > key.size() && line.compare(0, key.size(), key) == 0 &&
        line[key.size()] == ' ') {
      return ParseInteger(line.substr(key.size() + 1));
    }
  }
  return std::nullopt;
}

std::optional<double> CgroupCpuQuota(const SystemRoot& root) {
  std::optional<double> tightest;
  bool v2 = root.Exists("/sys/fs/cgroup/cgroup.controllers");
  for (const std::string& folder : CgroupFolders(root, "cpu")) {
    std::optional<int64_t> quota, period;
    if (v2) {
      std::vector<std::string> parts =
          SplitAndTrim(root.ReadText(folder + "/cpu.max").value_or(""), ' ');
      if (parts.size() == 2) {
        quota = ParseInteger(parts[0]);  // "max": no limit
        period = ParseInteger(parts[1]);
      }
    } else {
      quota = root.ReadInteger(folder + "/cpu.cfs_quota_us");  // -1: no limit
      period = root.ReadInteger(folder + "/cpu.cfs_period_us");
    }
    if (quota && period && *quota > 0 && *period > 0) {
      double cpus = static_cast<double>(*quota) / static_cast<double>(*period);
      tightest = tightest ? std::min(*tightest, cpus) : cpus;
    }
  }
  return tightest;
}

}  // namespace

WslInfo DetectWsl(const SystemRoot& root) {
  WslInfo wsl;
  std::string version = root.ReadText("/proc/version").value_or("");
  wsl.kernel = std::string(TrimWhitespace(version.substr(0, version.find('\n'))));
  wsl.has_dxg = root.Exists("/dev/dxg");
  wsl.has_wsl_lib = root.Exists("/usr/lib/wsl/lib");
  wsl.detected = ContainsIgnoringCase(version, "microsoft") || ContainsIgnoringCase(version, "WSL");
  wsl.wsl2 = wsl.detected && (ContainsIgnoringCase(version, "WSL2") ||
                              ContainsIgnoringCase(version, "microsoft-standard") || wsl.has_dxg);
  return wsl;
}

std::string DetectContainer(const SystemRoot& root) {
  if (root.Exists("/.dockerenv")) return "docker";
  if (root.Exists("/run/.containerenv")) return "podman";
  std::string cgroup = root.ReadText("/proc/1/cgroup").value_or("");
  if (cgroup.find("kubepods") != std::string::npos) return "kubernetes";
  if (cgroup.find("docker") != std::string::npos) return "docker";
  if (cgroup.find("containerd") != std::string::npos) return "containerd";
  if (cgroup.find("/lxc") != std::string::npos) return "lxc";
  return "";
}

std::optional<int> CountCpuList(std::string_view list) {
  int count = 0;
  for (const std::string& range : SplitAndTrim(list, ',')) {
    if (range.empty()) continue;
    size_t dash = range.find('-');
    std::optional<int64_t> first = ParseInteger(range.substr(0, dash));
    std::optional<int64_t> last =
        dash == std::string::npos ? first : ParseInteger(range.substr(dash + 1));
    if (!first || !last || *last < *first || *first < 0) return std::nullopt;
    count += static_cast<int>(*last - *first + 1);
  }
  if (count == 0) return std::nullopt;
  return count;
}

CpuInfo ProbeCpus(const SystemRoot& root) {
  CpuInfo cpus;
  std::optional<int> allowed;
  std::string status = root.ReadText("/proc/self/status").value_or("");
  for (const std::string& line : SplitAndTrim(status, '\n')) {
    if (line.rfind("Cpus_allowed_list:", 0) == 0) {
      allowed = CountCpuList(line.substr(sizeof("Cpus_allowed_list:") - 1));
      cpus.allowed_source = "affinity " + std::string(TrimWhitespace(line.substr(18)));
    }
  }
  if (!allowed) {
    std::string online(
        TrimWhitespace(root.ReadText("/sys/devices/system/cpu/online").value_or("")));
    allowed = CountCpuList(online);
    cpus.allowed_source = allowed ? "online " + online : "unknown";
  }
  cpus.allowed = std::max(1, allowed.value_or(1));
  cpus.cgroup_quota = CgroupCpuQuota(root);
  cpus.usable = cpus.allowed;
  if (cpus.cgroup_quota) {
    cpus.usable = std::min(cpus.usable, static_cast<int>(std::ceil(*cpus.cgroup_quota - 1e-9)));
  }
  cpus.usable = std::max(1, cpus.usable);
  return cpus;
}

std::optional<uint64_t> MeminfoBytes(std::string_view meminfo, std::string_view key) {
  for (const std::string& line : SplitAndTrim(meminfo, '\n')) {
    if (line.size() > key.size() && line.compare(0, key.size(), key) == 0 &&
        line[key.size()] == ':') {
      std::string value(TrimWhitespace(line.substr(key.size() + 1)));
      bool kilobytes = value.size() > 3 && value.compare(value.size() - 3, 3, " kB") == 0;
      if (kilobytes) value.resize(value.size() - 3);
      std::optional<int64_t> number = ParseInteger(value);
      if (!number || *number < 0) return std::nullopt;
      return static_cast<uint64_t>(*number) * (kilobytes ? 1024 : 1);
    }
  }
  return std::nullopt;
}

std::optional<uint64_t> MemoryInfo::usable_bytes() const {
  if (available_bytes && cgroup_available_bytes) {
    return std::min(*available_bytes, *cgroup_available_bytes);
  }
  return available_bytes ? available_bytes : cgroup_available_bytes;
}

MemoryInfo ProbeMemory(const SystemRoot& root) {
  MemoryInfo memory;
  std::string meminfo = root.ReadText("/proc/meminfo").value_or("");
  memory.total_bytes = MeminfoBytes(meminfo, "MemTotal");
  memory.available_bytes = MeminfoBytes(meminfo, "MemAvailable");
  bool v2 = root.Exists("/sys/fs/cgroup/cgroup.controllers");
  for (const std::string& folder : CgroupFolders(root, "memory")) {
    // v2: memory.max ("max": none), memory.current, inactive_file; v1: memory.limit_in_bytes
    // (huge: none), memory.usage_in_bytes, total_inactive_file.
    std::optional<int64_t> limit =
        root.ReadInteger(folder + (v2 ? "/memory.max" : "/memory.limit_in_bytes"));
    if (!limit || *limit <= 0 || static_cast<uint64_t>(*limit) >= kNoMemoryLimit) continue;
    std::optional<int64_t> usage =
        root.ReadInteger(folder + (v2 ? "/memory.current" : "/memory.usage_in_bytes"));
    std::string stat = root.ReadText(folder + "/memory.stat").value_or("");
    int64_t reclaimable =
        KeyedValue(stat, v2 ? "inactive_file" : "total_inactive_file").value_or(0);
    int64_t available = *limit - std::max<int64_t>(0, usage.value_or(0) - reclaimable);
    uint64_t left = static_cast<uint64_t>(std::max<int64_t>(0, available));
    if (!memory.cgroup_limit_bytes || static_cast<uint64_t>(*limit) < *memory.cgroup_limit_bytes) {
      memory.cgroup_limit_bytes = static_cast<uint64_t>(*limit);
    }
    memory.cgroup_available_bytes =
        memory.cgroup_available_bytes ? std::min(*memory.cgroup_available_bytes, left) : left;
  }
  return memory;
}

}  // namespace imgpipe::env
