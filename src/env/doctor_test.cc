#include "env/doctor.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "convert/converter.h"
#include "env/data_checks.h"
#include "env/env_test_util.h"
#include "loader/loader.h"
#include "record/index.h"
#include "util/error.h"

namespace imgpipe::env {
namespace {

TorchBuildInfo CpuTorch() {
  TorchBuildInfo torch;
  torch.linked = true;
  torch.version = "1.13.0";
  return torch;
}

// libtorch 2.4 built with CUDA 12.4 and cuDNN 9.1.0.
TorchBuildInfo CudaTorch(bool cuda_available, int devices) {
  TorchBuildInfo torch;
  torch.linked = true;
  torch.version = "2.4.0";
  torch.cuda_build = true;
  torch.cuda_version = 12040;
  torch.cudnn_version = 90100;
  torch.cuda_available = cuda_available;
  torch.cuda_device_count = devices;
  return torch;
}

// The checks of `report` with `status`, as "name: detail" lines (for failure messages).
std::string Describe(const DoctorReport& report) {
  std::string text;
  for (const Check& c : report.checks) {
    text += std::string(CheckStatusName(c.status)) + " [" + c.layer + "] " + c.name + ": " +
            c.detail + (c.fix.empty() ? "" : "\n    fix: " + c.fix) + "\n";
  }
  return text;
}

// The one check named `name`; fails the test when there is not exactly one.
const Check& Find(const DoctorReport& report, const std::string& name) {
  const Check* found = nullptr;
  int count = 0;
  for (const Check& c : report.checks) {
    if (c.name == name) {
      found = &c;
      ++count;
    }
  }
  EXPECT_EQ(count, 1) << name << "\n" << Describe(report);
  static const Check kNone{"", "", CheckStatus::kError, "(no such check)", ""};
  return found ? *found : kNone;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Expects the one check `name` to have `status`, a detail containing each of
// `detail_parts` and a fix containing each of `fix_parts`.
void ExpectCheck(const DoctorReport& report, const std::string& name, CheckStatus status,
                 const std::vector<std::string>& detail_parts,
                 const std::vector<std::string>& fix_parts = {}) {
  const Check& check = Find(report, name);
  EXPECT_EQ(check.status, status) << name << ": " << check.detail;
  for (const std::string& part : detail_parts) {
    EXPECT_TRUE(Contains(check.detail, part))
        << name << " detail: " << check.detail << "\n  lacks: " << part;
  }
  for (const std::string& part : fix_parts) {
    EXPECT_TRUE(Contains(check.fix, part))
        << name << " fix: " << check.fix << "\n  lacks: " << part;
  }
}

class DoctorTest : public FakeNvidiaTest {
 protected:
  DoctorReport Run(const FakeSystemTree& tree, const TorchBuildInfo& torch) {
    options_.root = tree.root();
    return RunDoctor(options_, loader_, torch);
  }
  // A GPU server: kernel module, `gpus` A100s on the PCI bus and in NVML, libcuda.
  void MakeGpuServer(FakeSystemTree& tree, int gpus) {
    tree.AddLinuxHost();
    tree.AddKernelModule("550.54.15");
    for (int i = 0; i < gpus; ++i) tree.AddPciGpu("0000:" + std::to_string(10 + i) + ":00.0");
    stack_.gpus.resize(gpus);
    AddFakeDriver(loader_);
  }
  // The CUDA 12 libraries libtorch 2.4 needs, with cuDNN `cudnn_soname`.
  void AddCuda12Libraries(const std::string& cudnn_soname) {
    AddFakeCudart(loader_, "libcudart.so.12");
    AddFakeCublas(loader_, "libcublas.so.12");
    AddFakeCudnn(loader_, cudnn_soname);
    AddFakeNccl(loader_);
  }

  DoctorOptions options_;
};

TEST_F(DoctorTest, CpuOnlyMachineWithCpuLibtorchIsFine) {
  FakeSystemTree tree("cpu_only");
  tree.AddLinuxHost();
  DoctorReport report = Run(tree, CpuTorch());
  EXPECT_TRUE(report.ok()) << Describe(report);
  EXPECT_EQ(report.Count(CheckStatus::kWarning), 0) << Describe(report);
  EXPECT_EQ(Find(report, "NVIDIA driver").status, CheckStatus::kInfo);
  EXPECT_EQ(Find(report, "NVIDIA driver").detail, "no NVIDIA GPU: training runs on CPU");
  EXPECT_TRUE(Contains(Find(report, "libtorch").detail, "CPU-only build: training runs on CPU"));
  EXPECT_EQ(Find(report, "CUDA libraries").status, CheckStatus::kInfo);
  EXPECT_EQ(report.cpus.usable, 32);
  EXPECT_EQ(report.processes, 1);
}

TEST_F(DoctorTest, GpuMachineWithCpuOnlyLibtorchIsAnError) {
  FakeSystemTree tree("cpu_torch_on_gpus");
  MakeGpuServer(tree, 4);
  DoctorReport report = Run(tree, CpuTorch());
  EXPECT_FALSE(report.ok());
  ExpectCheck(report, "libtorch", CheckStatus::kError, {"CPU-only", "4 GPUs are present"},
              {"Torch_DIR"});
  ExpectCheck(report, "NVIDIA driver", CheckStatus::kOk,
              {"550.54.15, supports CUDA up to 12.4, 4 GPUs"});
  for (int i = 0; i < 4; ++i) {
    ExpectCheck(report, "GPU " + std::to_string(i), CheckStatus::kOk,
                {"NVIDIA A100-SXM4-80GB, 80.0 GiB (512.0 MiB used), compute capability 8.0"});
  }
  EXPECT_EQ(report.processes, 4);  // one training process per GPU
}

TEST_F(DoctorTest, HealthyGpuServer) {
  FakeSystemTree tree("healthy");
  MakeGpuServer(tree, 8);
  AddCuda12Libraries("libcudnn.so.9");
  stack_.cudnn_version = 90300;
  DoctorReport report = Run(tree, CudaTorch(true, 8));
  EXPECT_TRUE(report.ok()) << Describe(report);
  ExpectCheck(report, "cuDNN", CheckStatus::kOk, {"9.3.0 (libcudnn.so.9"});
  EXPECT_TRUE(Contains(Find(report, "CUDA runtime").detail, "12.4 (libcudart.so.12"));
  EXPECT_TRUE(Contains(Find(report, "cuBLAS").detail, "12.4.5 (libcublas.so.12"));
  EXPECT_TRUE(Contains(Find(report, "NCCL").detail, "2.19.3 (libnccl.so.2"));
  EXPECT_EQ(Find(report, "driver vs runtime").status, CheckStatus::kOk);
  ExpectCheck(report, "libtorch", CheckStatus::kOk, {"CUDA 12.4 and cuDNN 9.1.0, uses 8 GPUs"});
  // 32 CPUs for 8 GPUs is 4 per GPU: no starvation warning.
  EXPECT_EQ(report.Count(CheckStatus::kWarning), 0) << Describe(report);
}

TEST_F(DoctorTest, CudnnMajorMismatchNamesTheMissingLibrary) {
  FakeSystemTree tree("cudnn_mismatch");
  MakeGpuServer(tree, 1);
  AddCuda12Libraries("libcudnn.so.8");  // libtorch needs cuDNN 9
  stack_.cudnn_version = 8902;
  DoctorReport report = Run(tree, CudaTorch(false, 0));
  EXPECT_FALSE(report.ok());
  ExpectCheck(report, "cuDNN", CheckStatus::kError,
              {"libcudnn.so.9 is not found", "found cuDNN 8.9.2 (libcudnn.so.8"},
              {"cuDNN 9 for CUDA 12"});
  // libcudnn.so.9 was tried before the older one.
  auto nine = std::find(loader_.opened.begin(), loader_.opened.end(), "libcudnn.so.9");
  auto eight = std::find(loader_.opened.begin(), loader_.opened.end(), "libcudnn.so.8");
  EXPECT_LT(nine, eight);
  EXPECT_EQ(Find(report, "libtorch").status, CheckStatus::kError);  // cannot use the GPU
}

TEST_F(DoctorTest, OlderCudnnMinorThanLibtorchWasBuiltWithIsAWarning) {
  FakeSystemTree tree("cudnn_minor");
  MakeGpuServer(tree, 1);
  AddCuda12Libraries("libcudnn.so.9");
  stack_.cudnn_version = 90002;
  DoctorReport report = Run(tree, CudaTorch(true, 1));
  ExpectCheck(report, "cuDNN", CheckStatus::kWarning,
              {"older than the 9.1 libtorch was built with"});
}

TEST_F(DoctorTest, DriverOlderThanTheRuntimeMajorIsAnError) {
  FakeSystemTree tree("driver_too_old");
  MakeGpuServer(tree, 2);
  stack_.driver_version = "520.61.05";
  stack_.driver_cuda_version = 11080;
  AddCuda12Libraries("libcudnn.so.9");
  DoctorReport report = Run(tree, CudaTorch(false, 0));
  EXPECT_FALSE(report.ok());
  ExpectCheck(report, "driver vs runtime", CheckStatus::kError,
              {"the driver supports CUDA up to 11.8, too old for the CUDA 12.4 runtime"},
              {"525.60.13"});
}

TEST_F(DoctorTest, DriverOlderThanTheRuntimeMinorIsAWarning) {
  FakeSystemTree tree("driver_minor");
  MakeGpuServer(tree, 2);
  stack_.driver_cuda_version = 12020;
  AddCuda12Libraries("libcudnn.so.9");
  DoctorReport report = Run(tree, CudaTorch(true, 2));
  EXPECT_TRUE(report.ok()) << Describe(report);
  ExpectCheck(report, "driver vs runtime", CheckStatus::kWarning, {"minor-version compatibility"});
}

TEST_F(DoctorTest, CudaLibtorchWithoutItsRuntimeLibraries) {
  FakeSystemTree tree("no_runtime");
  MakeGpuServer(tree, 1);
  DoctorReport report = Run(tree, CudaTorch(false, 0));
  EXPECT_FALSE(report.ok());
  ExpectCheck(report, "CUDA runtime", CheckStatus::kError, {"libcudart.so.12 is not found"});
  EXPECT_EQ(Find(report, "cuDNN").status, CheckStatus::kError);
  EXPECT_EQ(Find(report, "cuBLAS").status, CheckStatus::kError);
  // When libtorch runs CUDA anyway, it carries its own copies: only warnings.
  DoctorReport bundled = Run(tree, CudaTorch(true, 1));
  EXPECT_TRUE(bundled.ok()) << Describe(bundled);
  ExpectCheck(bundled, "CUDA runtime", CheckStatus::kWarning, {"carry its own copy"});
}

TEST_F(DoctorTest, NvmlVersionMismatchAsksForAReboot) {
  FakeSystemTree tree("nvml_mismatch");
  MakeGpuServer(tree, 1);
  stack_.nvml_init_status = abi::kNvmlErrorLibRmVersionMismatch;
  DoctorReport report = Run(tree, CpuTorch());
  ExpectCheck(report, "NVIDIA driver", CheckStatus::kError, {"Driver/library version mismatch"},
              {"reboot"});
}

TEST_F(DoctorTest, GpuWithoutADriver) {
  FakeSystemTree tree("no_driver");
  tree.AddLinuxHost();
  tree.AddPciGpu("0000:01:00.0");
  DoctorReport report = Run(tree, CpuTorch());
  EXPECT_FALSE(report.ok());
  const Check& driver = Find(report, "NVIDIA driver");
  EXPECT_EQ(driver.status, CheckStatus::kError);
  EXPECT_EQ(driver.detail, "1 NVIDIA GPU is on the PCI bus but no NVIDIA driver is loaded");
  EXPECT_TRUE(Contains(driver.fix, "install the NVIDIA driver")) << driver.fix;
}

TEST_F(DoctorTest, CuInitFailingOnAGpuMachineIsAnError) {
  FakeSystemTree tree("cuinit");
  MakeGpuServer(tree, 2);
  stack_.cuda_init_status = abi::kCudaErrorNoDevice;
  DoctorReport report = Run(tree, CpuTorch());
  ExpectCheck(report, "libcuda", CheckStatus::kError,
              {"loads but cuInit: CUDA_ERROR_NO_DEVICE (100)"}, {"CUDA_VISIBLE_DEVICES"});
}

TEST_F(DoctorTest, ContainerWithComputeOnlyDriverLibraries) {
  // NVIDIA_DRIVER_CAPABILITIES=compute: libcuda but no NVML; the host's module in /proc.
  FakeSystemTree tree("compute_only");
  tree.AddLinuxHost();
  tree.Write("/.dockerenv", "");
  tree.AddKernelModule("550.54.15");
  for (int i = 0; i < 8; ++i) tree.AddPciGpu("0000:" + std::to_string(10 + i) + ":00.0");
  stack_.gpus.resize(2);
  AddFakeLibcuda(loader_);
  AddCuda12Libraries("libcudnn.so.9");
  DoctorReport report = Run(tree, CudaTorch(true, 2));
  EXPECT_TRUE(report.ok()) << Describe(report);
  EXPECT_EQ(report.processes, 2);
  EXPECT_EQ(Find(report, "NVIDIA driver").status, CheckStatus::kWarning);
  EXPECT_EQ(Find(report, "libcuda").status, CheckStatus::kOk);
  EXPECT_EQ(Find(report, "GPU 1").status, CheckStatus::kInfo);  // from libcuda: no utilisation
  EXPECT_TRUE(Contains(Find(report, "libtorch").detail, "uses 2 GPUs"));
}

TEST_F(DoctorTest, BusyGpuIsAWarning) {
  FakeSystemTree tree("busy");
  MakeGpuServer(tree, 2);
  AddCuda12Libraries("libcudnn.so.9");
  stack_.gpus[1].utilization = 97;
  DoctorReport report = Run(tree, CudaTorch(true, 2));
  EXPECT_EQ(Find(report, "GPU 0").status, CheckStatus::kOk);
  ExpectCheck(report, "GPU 1", CheckStatus::kWarning, {"97% busy: another process is using it"});
}

TEST_F(DoctorTest, Wsl2WithTheWindowsDriver) {
  FakeSystemTree tree("wsl2");
  tree.AddLinuxHost();
  tree.AddWsl2(/*gpu=*/true);
  stack_.gpus.resize(1);
  AddFakeDriver(loader_, "/usr/lib/wsl/lib/libcuda.so.1");
  AddCuda12Libraries("libcudnn.so.9");
  DoctorReport report = Run(tree, CudaTorch(true, 1));
  EXPECT_TRUE(report.ok()) << Describe(report);
  const Check& wsl = Find(report, "WSL");
  EXPECT_TRUE(Contains(wsl.detail, "the NVIDIA driver lives on the Windows side")) << wsl.detail;
  EXPECT_TRUE(Contains(wsl.detail, "/usr/lib/wsl/lib"));
  EXPECT_EQ(Find(report, "libcuda").status, CheckStatus::kOk);
}

TEST_F(DoctorTest, Wsl2WithALinuxDriverInstalledInside) {
  FakeSystemTree tree("wsl2_linux_driver");
  tree.AddLinuxHost();
  tree.AddWsl2(/*gpu=*/true);
  stack_.gpus.resize(1);
  stack_.driver_cuda_version = 11080;
  AddFakeDriver(loader_, "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
  AddCuda12Libraries("libcudnn.so.9");
  DoctorReport report = Run(tree, CudaTorch(false, 0));
  ExpectCheck(report, "libcuda", CheckStatus::kWarning,
              {"a Linux NVIDIA driver installed inside WSL"}, {"remove the Linux NVIDIA driver"});
  ExpectCheck(report, "driver vs runtime", CheckStatus::kError, {}, {"on Windows"});
}

TEST_F(DoctorTest, Wsl2WithoutGpuSupport) {
  FakeSystemTree tree("wsl2_no_gpu");
  tree.AddLinuxHost();
  tree.AddWsl2(/*gpu=*/false);
  DoctorReport report = Run(tree, CpuTorch());
  EXPECT_TRUE(report.ok()) << Describe(report);  // CPU training still works
  ExpectCheck(report, "WSL GPU", CheckStatus::kWarning, {"/dev/dxg is missing"},
              {"on Windows, not inside WSL"});
}

TEST_F(DoctorTest, ContainerWithoutGpusIsFineAndSaysHowToPassThem) {
  FakeSystemTree tree("container");
  tree.AddLinuxHost();
  tree.Write("/.dockerenv", "");
  DoctorReport report = Run(tree, CpuTorch());
  EXPECT_TRUE(report.ok()) << Describe(report);
  EXPECT_EQ(report.container, "docker");
  EXPECT_TRUE(Contains(Find(report, "container").detail, "running in a container (docker)"));
  ExpectCheck(report, "NVIDIA driver", CheckStatus::kInfo, {}, {"docker run --gpus all"});
}

TEST_F(DoctorTest, ContainerSeeingHostGpusWithoutTheToolkit) {
  FakeSystemTree tree("container_no_toolkit");
  tree.AddLinuxHost();
  tree.Write("/.dockerenv", "");
  tree.AddKernelModule("550.54.15");  // /proc/driver is the host's
  tree.AddPciGpu("0000:01:00.0");
  DoctorReport report = Run(tree, CpuTorch());
  EXPECT_FALSE(report.ok());
  ExpectCheck(report, "NVIDIA driver", CheckStatus::kError,
              {"kernel module 550.54.15 is loaded but NVML is not"},
              {"NVIDIA container toolkit", "--gpus all"});
  EXPECT_EQ(Find(report, "libcuda").status, CheckStatus::kError);
}

TEST_F(DoctorTest, MemoryAgainstThePlannedBuffers) {
  // Default plan, as the Loader counts it: (3 batches x 256 x (3x224x224 floats + a label)
  // + a shuffle buffer of 1024 records x 110 KB) x 2 passes (start_ahead) ~ 1.1 GiB.
  FakeSystemTree measure("memory_measure");
  measure.AddLinuxHost();
  uint64_t planned = Run(measure, CpuTorch()).planned_buffer_bytes;
  EXPECT_EQ(planned, 2 * (3 * 256ull * (3 * 224 * 224 * 4 + 8) + static_cast<uint64_t>(1024 * 110e3)));
  FakeSystemTree roomy("memory_roomy");
  roomy.AddLinuxHost(/*available_kb=*/planned * 4 / 1024);
  EXPECT_EQ(Find(Run(roomy, CpuTorch()), "memory").status, CheckStatus::kOk);
  FakeSystemTree tight("memory_tight");
  tight.AddLinuxHost(/*available_kb=*/planned * 3 / 2 / 1024);
  EXPECT_EQ(Find(Run(tight, CpuTorch()), "memory").status, CheckStatus::kWarning);
  FakeSystemTree short_of_memory("memory_short");
  short_of_memory.AddLinuxHost(/*available_kb=*/planned / 2 / 1024);
  DoctorReport report = Run(short_of_memory, CpuTorch());
  EXPECT_FALSE(report.ok());
  ExpectCheck(report, "memory", CheckStatus::kError, {"exceed the"}, {"--shuffle-buffer"});
  // The uint8 layout takes a quarter of the batch memory and fits.
  options_.plan.preset.layout = OutputLayout::kUint8Nhwc;
  EXPECT_NE(Find(Run(short_of_memory, CpuTorch()), "memory").status, CheckStatus::kError);
}

// A process whose buffers fit the memory available but not the Loader's RAM budget (half
// the machine's memory) is an error: the Loader would refuse it. Before the one estimate,
// the doctor called this a warning.
TEST_F(DoctorTest, WhatTheLoaderRefusesIsAnError) {
  FakeSystemTree measure("memory_budget_measure");
  measure.AddLinuxHost();
  const uint64_t need = Run(measure, CpuTorch()).planned_buffer_bytes;
  FakeSystemTree small("memory_budget");
  small.AddLinuxHost();
  small.Write("/proc/meminfo", "MemTotal: " + std::to_string(need * 3 / 2 / 1024) +
                                   " kB\nMemAvailable: " + std::to_string(need * 7 / 5 / 1024) + " kB\n");
  DoctorReport report = Run(small, CpuTorch());
  ExpectCheck(report, "memory", CheckStatus::kError,
              {"the Loader's RAM budget", "it refuses these options", "3 batches per pass", "x 2 passes"},
              {"--batch-size", "--image-size", "--shuffle-buffer", "--layout uint8"});
  EXPECT_FALSE(Contains(Find(report, "memory").fix, "--prefetch"));  // the Loader has no such option
  options_.plan.preset.layout = OutputLayout::kUint8Nhwc;  // the fix: a quarter of the batch bytes
  EXPECT_NE(Find(Run(small, CpuTorch()), "memory").status, CheckStatus::kError);
}

TEST_F(DoctorTest, ACgroupMemoryLimitCounts) {
  FakeSystemTree tree("memory_cgroup");
  tree.AddLinuxHost();  // 60 GB available on the machine
  tree.Write("/sys/fs/cgroup/user.slice/memory.max", std::to_string(256 << 20) + "\n");
  DoctorReport report = Run(tree, CpuTorch());
  EXPECT_EQ(Find(report, "memory").status, CheckStatus::kError) << Describe(report);
}

TEST_F(DoctorTest, MoreThreadsThanCpusAndTooFewCpusPerGpu) {
  FakeSystemTree tree("cpus");
  MakeGpuServer(tree, 4);
  AddCuda12Libraries("libcudnn.so.9");
  tree.Write("/proc/self/status", "Cpus_allowed_list:\t0-7\n");
  options_.plan.threads = 4;  // x 4 processes = 16 on 8 CPUs
  DoctorReport report = Run(tree, CudaTorch(true, 4));
  ExpectCheck(report, "CPUs", CheckStatus::kWarning, {}, {"--threads 2"});
  ExpectCheck(report, "CPUs per GPU", CheckStatus::kWarning, {"8 CPUs for 4 GPUs"});
}

// A data folder on this machine whose device is, in the fake tree, a partition of `disk`.
class DoctorDataTest : public DoctorTest {
 protected:
  void PutDataOnFakeDisk(FakeSystemTree& tree, const std::string& disk, bool rotational) {
    data_ = JoinPath(tree.root(), "data");
    MakeDirectories(data_);
    struct stat st;
    ASSERT_EQ(::stat(data_.c_str(), &st), 0);
    std::string number = std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev));
    std::string folder =
        "/sys/devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/" + disk;
    tree.Write(folder + "/queue/rotational", rotational ? "1\n" : "0\n");
    tree.Write(folder + "/" + disk + "1/partition", "1\n");
    tree.Link("/sys/dev/block/" + number,
              "../../devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/" + disk +
                  "/" + disk + "1");
    options_.data = data_;
  }
  void WriteShards(int count, bool with_index) {
    for (int i = 0; i < count; ++i) {
      std::string shard = JoinPath(data_, "train-0000" + std::to_string(i) + ".tfrecord");
      WriteFileAtomic(shard, std::string(4000, 'x'), false);
      if (with_index) WriteIndexFile(IndexPathFor(shard), {{0, 1000}, {1000, 3000}});
    }
  }
  std::string data_;
};

TEST_F(DoctorDataTest, RotationalDiskIsAWarning) {
  FakeSystemTree tree("rotational");
  tree.AddLinuxHost();
  PutDataOnFakeDisk(tree, "sda", /*rotational=*/true);
  WriteShards(64, true);
  DoctorReport report = Run(tree, CpuTorch());
  EXPECT_TRUE(report.ok()) << Describe(report);
  ExpectCheck(report, "storage", CheckStatus::kWarning, {"a rotational disk (sda via sda1)"},
              {"SSD"});
  EXPECT_EQ(Find(report, "shards").status, CheckStatus::kOk) << Describe(report);
  // The record size comes from the index files: 1024 x 2000 bytes of shuffle buffer.
  EXPECT_TRUE(Contains(Find(report, "memory").detail, "measured from the index files"));
}

TEST_F(DoctorDataTest, SolidStateDiskIsOk) {
  FakeSystemTree tree("ssd");
  tree.AddLinuxHost();
  PutDataOnFakeDisk(tree, "sdb", /*rotational=*/false);
  DoctorReport report = Run(tree, CpuTorch());
  ExpectCheck(report, "storage", CheckStatus::kOk, {"solid-state storage (sdb via sdb1)"});
  // No shards: an image folder.
  ExpectCheck(report, "shards", CheckStatus::kInfo, {}, {"imgpipe convert"});
}

TEST_F(DoctorDataTest, FewerShardsThanReaders) {
  FakeSystemTree tree("few_shards");
  tree.AddLinuxHost();  // 32 CPUs: 1 process x min(cycle_length 4, 32) readers
  PutDataOnFakeDisk(tree, "nvme", false);
  WriteShards(2, true);
  DoctorReport report = Run(tree, CpuTorch());
  ExpectCheck(report, "shards", CheckStatus::kWarning, {"2 shards", "4 parallel readers"},
              {"--min-shards 16", "kData"});
}

TEST_F(DoctorDataTest, FewerShardsThanProcessesWithoutIndexFiles) {
  FakeSystemTree tree("shards_per_gpu");
  MakeGpuServer(tree, 8);
  AddCuda12Libraries("libcudnn.so.9");
  PutDataOnFakeDisk(tree, "nvme", false);
  WriteShards(4, false);
  DoctorReport report = Run(tree, CudaTorch(true, 8));
  ExpectCheck(report, "shards", CheckStatus::kError,
              {"fewer shards than processes", ".idx index files that are missing"});
}

// The doctor's memory line is the Loader's own estimate over the same shards: the same
// figures as a real Loader's memory(), and the Loader refuses exactly what the doctor
// calls over its budget, with the same terms; the doctor's fix makes the Loader accept.
TEST_F(DoctorDataTest, MemoryIsTheLoadersEstimateOverTheSameShards) {
  FakeSystemTree tree("memory_loader");
  tree.AddLinuxHost();
  PutDataOnFakeDisk(tree, "nvme", false);
  ConvertOptions convert;  // the 153 photos in 4 shards with index files
  convert.input = std::string(IMGPIPE_TESTDATA_DIR) + "/images/hymenoptera/val";
  convert.output = data_;
  convert.plan.min_shards = 4;
  convert.threads = 2;
  RunConvert(convert);
  options_.plan.pipeline.batch_size = 16;
  options_.plan.preset.size = 224;  // batches large enough that uint8 halves the need
  options_.plan.processes = 2;  // 77 records a rank: fewer than the shuffle buffer
  const DoctorReport report = Run(tree, CpuTorch());
  loader::LoaderOptions o;
  o.batch_size = 16;
  o.image_size = 224;
  o.layout = "float32";
  o.world_size = 2;
  o.split = "";
  o.threads = 2;
  const loader::MemoryNeed want = loader::Loader(data_, o).memory();
  const loader::MemoryNeed& got = report.loader_memory;
  EXPECT_EQ(got.batch_bytes, want.batch_bytes);
  EXPECT_EQ(got.batches_per_pass, want.batches_per_pass);
  EXPECT_EQ(got.shuffle_bytes, want.shuffle_bytes);
  EXPECT_EQ(got.passes, want.passes);
  EXPECT_EQ(got.minimum_bytes, want.minimum_bytes);
  EXPECT_EQ(report.planned_buffer_bytes, 2 * want.minimum_bytes);
  // A machine whose half is below one process's need: both refuse, naming the same terms.
  const uint64_t total = want.minimum_bytes * 3 / 2;
  tree.Write("/proc/meminfo", "MemTotal: " + std::to_string(total / 1024) + " kB\nMemAvailable: " +
                                  std::to_string(total / 1024) + " kB\n");
  const DoctorReport refused = Run(tree, CpuTorch());
  ExpectCheck(refused, "memory", CheckStatus::kError, {"it refuses", loader::MemoryTerms(refused.loader_memory)});
  o.ram_budget_bytes = refused.loader_memory.budget_bytes;  // the budget the doctor judged against
  try {
    loader::Loader loader(data_, o);
    ADD_FAILURE() << "the Loader accepted what the doctor calls over its budget";
  } catch (const InvalidArgument& e) {
    EXPECT_TRUE(Contains(e.what(), loader::MemoryTerms(refused.loader_memory))) << e.what();
  }
  // The fix the doctor gives (uint8) is one the Loader accepts.
  options_.plan.preset.layout = OutputLayout::kUint8Nhwc;
  EXPECT_NE(Find(Run(tree, CpuTorch()), "memory").status, CheckStatus::kError);
  o.layout = "uint8";
  EXPECT_NO_THROW({ loader::Loader accepted(data_, o); });
}

TEST_F(DoctorDataTest, MissingDataPathIsAnError) {
  FakeSystemTree tree("missing_data");
  tree.AddLinuxHost();
  options_.data = JoinPath(tree.root(), "no-such-folder");
  DoctorReport report = Run(tree, CpuTorch());
  EXPECT_FALSE(report.ok());
  EXPECT_TRUE(Contains(Find(report, "data").detail, "does not exist"));
}

// The real machine, with the real loader: whatever it has, the doctor runs; without
// an NVIDIA GPU nothing can be an error (a plan small enough for any CI machine).
TEST(DoctorThisMachineTest, RunsAndIsOkWithoutAGpu) {
  DlopenLibraryLoader loader;
  DoctorOptions options;
  options.plan.pipeline.batch_size = 8;
  options.plan.pipeline.shuffle_buffer = 16;
  options.data = ::testing::TempDir();
  DoctorReport report = RunDoctor(options, loader, TorchBuildInfo{});
  EXPECT_FALSE(report.checks.empty());
  if (report.driver.GpuCount() == 0) {
    EXPECT_TRUE(report.ok()) << Describe(report);
    EXPECT_EQ(Find(report, "libtorch").status, CheckStatus::kInfo);
  }
  EXPECT_GE(report.cpus.usable, 1);
}

}  // namespace
}  // namespace imgpipe::env
