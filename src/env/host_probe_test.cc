#include "env/host_probe.h"

#include <gtest/gtest.h>

#include "env/env_test_util.h"
#include "util/thread_pool.h"

namespace imgpipe::env {
namespace {

TEST(HostProbeTest, CountsKernelCpuLists) {
  EXPECT_EQ(CountCpuList("0-3,8,10-11"), 7);
  EXPECT_EQ(CountCpuList("0\n"), 1);
  EXPECT_EQ(CountCpuList("0-63"), 64);
  EXPECT_EQ(CountCpuList("3-1"), std::nullopt);
  EXPECT_EQ(CountCpuList("x"), std::nullopt);
  EXPECT_EQ(CountCpuList(""), std::nullopt);
}

TEST(HostProbeTest, ReadsMeminfoInBytes) {
  std::string meminfo =
      "MemTotal:       16318000 kB\nMemAvailable:    8000000 kB\nHugePages_Total:       0\n";
  EXPECT_EQ(MeminfoBytes(meminfo, "MemAvailable"), 8000000ull * 1024);
  EXPECT_EQ(MeminfoBytes(meminfo, "MemTotal"), 16318000ull * 1024);
  EXPECT_EQ(MeminfoBytes(meminfo, "HugePages_Total"), 0u);
  EXPECT_EQ(MeminfoBytes(meminfo, "Mem"), std::nullopt);
}

TEST(HostProbeTest, DetectsWsl2Wsl1AndPlainLinux) {
  FakeSystemTree wsl2("wsl2");
  wsl2.AddWsl2(/*gpu=*/true);
  WslInfo info = DetectWsl(SystemRoot(wsl2.root()));
  EXPECT_TRUE(info.detected);
  EXPECT_TRUE(info.wsl2);
  EXPECT_TRUE(info.has_dxg);
  EXPECT_TRUE(info.has_wsl_lib);

  FakeSystemTree wsl1("wsl1");
  wsl1.Write("/proc/version",
             "Linux version 4.4.0-19041-Microsoft (Microsoft@Microsoft.com) (gcc 5.4.0)\n");
  info = DetectWsl(SystemRoot(wsl1.root()));
  EXPECT_TRUE(info.detected);
  EXPECT_FALSE(info.wsl2);

  FakeSystemTree linux_host("plain");
  linux_host.AddLinuxHost();
  info = DetectWsl(SystemRoot(linux_host.root()));
  EXPECT_FALSE(info.detected);
  EXPECT_EQ(info.kernel, "Linux version 6.1.0-18-amd64 (debian-kernel@lists.debian.org) #1 SMP");
}

TEST(HostProbeTest, DetectsContainers) {
  FakeSystemTree tree("containers");
  tree.AddLinuxHost();
  EXPECT_EQ(DetectContainer(SystemRoot(tree.root())), "");
  tree.Write("/proc/1/cgroup", "12:pids:/kubepods/besteffort/pod1234/abcdef\n0::/\n");
  EXPECT_EQ(DetectContainer(SystemRoot(tree.root())), "kubernetes");
  tree.Write("/proc/1/cgroup", "0::/system.slice/containerd.service\n");
  EXPECT_EQ(DetectContainer(SystemRoot(tree.root())), "containerd");
  tree.Write("/run/.containerenv", "");
  EXPECT_EQ(DetectContainer(SystemRoot(tree.root())), "podman");
  tree.Write("/.dockerenv", "");
  EXPECT_EQ(DetectContainer(SystemRoot(tree.root())), "docker");
}

TEST(HostProbeTest, CpusFromAffinityAndTheTightestCgroupV2Quota) {
  FakeSystemTree tree("cpus_v2");
  tree.AddLinuxHost();  // 32 CPUs allowed; user.slice without a limit
  CpuInfo cpus = ProbeCpus(SystemRoot(tree.root()));
  EXPECT_EQ(cpus.allowed, 32);
  EXPECT_EQ(cpus.cgroup_quota, std::nullopt);
  EXPECT_EQ(cpus.usable, 32);
  tree.Write("/sys/fs/cgroup/user.slice/session-1.scope/cpu.max", "250000 100000\n");
  tree.Write("/sys/fs/cgroup/user.slice/cpu.max", "800000 100000\n");  // a looser parent
  cpus = ProbeCpus(SystemRoot(tree.root()));
  ASSERT_TRUE(cpus.cgroup_quota.has_value());
  EXPECT_DOUBLE_EQ(*cpus.cgroup_quota, 2.5);
  EXPECT_EQ(cpus.usable, 3);
  tree.Write("/sys/fs/cgroup/user.slice/cpu.max", "100000 100000\n");  // a parent's is tighter
  EXPECT_EQ(ProbeCpus(SystemRoot(tree.root())).usable, 1);
}

TEST(HostProbeTest, CpusFromCgroupV1InsideAContainer) {
  FakeSystemTree tree("cpus_v1");
  tree.Write("/proc/self/status", "Cpus_allowed_list:\t0-7\n");
  // The host path is not visible: the container's own cgroup is the mount's root.
  tree.Write("/proc/self/cgroup", "4:cpu,cpuacct:/docker/0123abcd\n3:memory:/docker/0123abcd\n");
  tree.Write("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "400000\n");
  tree.Write("/sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
  CpuInfo cpus = ProbeCpus(SystemRoot(tree.root()));
  EXPECT_EQ(cpus.allowed, 8);
  EXPECT_EQ(cpus.usable, 4);
  tree.Write("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n");
  EXPECT_EQ(ProbeCpus(SystemRoot(tree.root())).usable, 8);
}

TEST(HostProbeTest, MemoryFromMeminfoAndCgroupLimits) {
  FakeSystemTree tree("memory");
  tree.AddLinuxHost(/*available_kb=*/8'000'000);
  MemoryInfo memory = ProbeMemory(SystemRoot(tree.root()));
  EXPECT_EQ(memory.available_bytes, 8'000'000ull * 1024);
  EXPECT_EQ(memory.cgroup_limit_bytes, std::nullopt);
  EXPECT_EQ(memory.usable_bytes(), 8'000'000ull * 1024);
  // A 4 GiB limit with 3 GiB used, 1 GiB of it reclaimable page cache: 2 GiB left.
  const uint64_t gib = uint64_t{1} << 30;
  tree.Write("/sys/fs/cgroup/user.slice/session-1.scope/memory.max",
             std::to_string(4 * gib) + "\n");
  tree.Write("/sys/fs/cgroup/user.slice/session-1.scope/memory.current",
             std::to_string(3 * gib) + "\n");
  tree.Write("/sys/fs/cgroup/user.slice/session-1.scope/memory.stat",
             "anon 2147483648\nfile 1073741824\ninactive_file " + std::to_string(gib) + "\n");
  memory = ProbeMemory(SystemRoot(tree.root()));
  EXPECT_EQ(memory.cgroup_limit_bytes, 4 * gib);
  EXPECT_EQ(memory.cgroup_available_bytes, 2 * gib);
  EXPECT_EQ(memory.usable_bytes(), 2 * gib);
}

TEST(HostProbeTest, MemoryCgroupV1UnlimitedIsNoLimit) {
  FakeSystemTree tree("memory_v1");
  tree.Write("/proc/meminfo", "MemAvailable:   1000 kB\n");
  tree.Write("/proc/self/cgroup", "3:memory:/\n");
  tree.Write("/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
  MemoryInfo memory = ProbeMemory(SystemRoot(tree.root()));
  EXPECT_EQ(memory.cgroup_limit_bytes, std::nullopt);
  EXPECT_EQ(memory.usable_bytes(), 1024'000u);
}

TEST(HostProbeTest, ThisMachine) {
  SystemRoot root;
  CpuInfo cpus = ProbeCpus(root);
  EXPECT_EQ(cpus.allowed, AvailableCpus());  // /proc/self/status agrees with sched_getaffinity
  EXPECT_GE(cpus.usable, 1);
  EXPECT_LE(cpus.usable, cpus.allowed);
  MemoryInfo memory = ProbeMemory(root);
  ASSERT_TRUE(memory.available_bytes.has_value());
  EXPECT_GT(*memory.available_bytes, 0u);
  EXPECT_LE(*memory.available_bytes, memory.total_bytes.value_or(0));
}

}  // namespace
}  // namespace imgpipe::env
