#include "env/nvidia_driver.h"

#include <gtest/gtest.h>

#include "env/env_test_util.h"

namespace imgpipe::env {
namespace {

TEST(KernelModuleVersionTest, ProprietaryAndOpenModules) {
  EXPECT_EQ(ParseKernelModuleVersion("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.161.07  "
                                     "Sat Feb 17 22:55:48 UTC 2024\nGCC version:  gcc 12\n"),
            "535.161.07");
  EXPECT_EQ(ParseKernelModuleVersion(
                "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
                "550.54.15  Release Build  (dvs-builder@U16-I3-B03-4-3)  Tue Mar 5\n"),
            "550.54.15");
  EXPECT_EQ(ParseKernelModuleVersion("NVRM version: NVIDIA UNIX aarch64 Kernel Module  470.82\n"),
            "470.82");
  EXPECT_EQ(ParseKernelModuleVersion("garbage 12:00:01\n"), "");
}

using NvidiaDriverTest = FakeNvidiaTest;

TEST_F(NvidiaDriverTest, ReadsDriverAndEveryGpuFromNvml) {
  FakeSystemTree tree("nvml");
  tree.AddKernelModule("550.54.15");
  stack_.gpus.resize(2);
  stack_.gpus[1].name = "NVIDIA H100 80GB HBM3";
  stack_.gpus[1].compute_major = 9;
  stack_.gpus[1].utilization = 87;
  stack_.driver_cuda_version = 12040;
  AddFakeDriver(loader_);
  NvidiaDriverInfo info = ProbeNvidiaDriver(SystemRoot(tree.root()), loader_);
  EXPECT_EQ(info.kernel_module_version, "550.54.15");
  EXPECT_EQ(info.nvml_error, "");
  EXPECT_EQ(info.driver_version, "550.54.15");
  EXPECT_EQ(info.driver_cuda_version, 12040);
  EXPECT_TRUE(info.libcuda_loaded);
  ASSERT_EQ(info.gpus.size(), 2u);
  EXPECT_EQ(info.GpuCount(), 2);
  EXPECT_EQ(info.gpus[0].name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(info.gpus[0].memory_total_bytes, 85899345920ull);
  EXPECT_EQ(info.gpus[0].compute_capability_major, 8);
  EXPECT_EQ(info.gpus[1].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(info.gpus[1].index, 1);
  EXPECT_EQ(info.gpus[1].compute_capability_major, 9);
  EXPECT_EQ(info.gpus[1].utilization_percent, 87);
  EXPECT_EQ(info.gpus[1].source, "NVML");
}

TEST_F(NvidiaDriverTest, LibcudaVersionWinsOverNvmls) {
  FakeSystemTree tree("libcuda_wins");
  loader_.Add("libcuda.so.1",
              {{"cuDriverGetVersion", SymbolOf<abi::CuDriverGetVersion>(+[](int* v) {
                  *v = 12020;
                  return 0;
                })}});
  loader_.Add("libnvidia-ml.so.1", FakeNvmlSymbols());
  stack_.driver_cuda_version = 12040;
  NvidiaDriverInfo info = ProbeNvidiaDriver(SystemRoot(tree.root()), loader_);
  EXPECT_EQ(info.driver_cuda_version, 12020);
}

TEST_F(NvidiaDriverTest, WithoutNvmlGpusComeFromLibcuda) {
  FakeSystemTree tree("libcuda_gpus");
  for (int i = 0; i < 8; ++i)
    tree.AddPciGpu("0000:" + std::to_string(10 + i) + ":00.0");  // the host's
  stack_.gpus.resize(2);                                         // the container's
  stack_.gpus[1].compute_minor = 6;
  AddFakeLibcuda(loader_);
  NvidiaDriverInfo info = ProbeNvidiaDriver(SystemRoot(tree.root()), loader_);
  EXPECT_TRUE(info.cuda_init_ok);
  ASSERT_EQ(info.gpus.size(), 2u);
  EXPECT_EQ(info.gpus[1].source, "libcuda");
  EXPECT_EQ(info.gpus[1].name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(info.gpus[1].memory_total_bytes, 85899345920ull);
  EXPECT_EQ(info.gpus[1].compute_capability_minor, 6);
  EXPECT_EQ(info.pci_gpu_count, 8);
  EXPECT_EQ(info.GpuCount(), 2);  // what CUDA sees, not the host's PCI bus
}

TEST_F(NvidiaDriverTest, CuInitFailureIsReportedWithItsName) {
  FakeSystemTree tree("cuinit_fails");
  stack_.cuda_init_status = abi::kCudaErrorNoDevice;
  AddFakeLibcuda(loader_);
  NvidiaDriverInfo info = ProbeNvidiaDriver(SystemRoot(tree.root()), loader_);
  EXPECT_TRUE(info.libcuda_loaded);
  EXPECT_FALSE(info.cuda_init_ok);
  EXPECT_EQ(info.cuda_init_code, 100);
  EXPECT_EQ(info.cuda_init_error, "cuInit: CUDA_ERROR_NO_DEVICE (100)");
}

TEST_F(NvidiaDriverTest, NvmlVersionMismatchIsReportedWithItsCode) {
  FakeSystemTree tree("mismatch");
  tree.AddKernelModule("550.54.15");
  stack_.nvml_init_status = abi::kNvmlErrorLibRmVersionMismatch;
  AddFakeDriver(loader_);
  NvidiaDriverInfo info = ProbeNvidiaDriver(SystemRoot(tree.root()), loader_);
  EXPECT_EQ(info.nvml_error_code, 18);
  EXPECT_NE(info.nvml_error.find("Driver/library version mismatch"), std::string::npos)
      << info.nvml_error;
  EXPECT_EQ(info.driver_version, "550.54.15");  // from the kernel module
}

TEST_F(NvidiaDriverTest, WithoutNvmlGpusComeFromProcAndThePciBus) {
  FakeSystemTree tree("proc_gpus");
  tree.AddKernelModule("535.161.07");
  tree.Write("/proc/driver/nvidia/gpus/0000:17:00.0/information",
             "Model: \t\t NVIDIA L40S\nIRQ:   \t\t 35\nBus Location: \t 0000:17:00.0\n");
  tree.Write("/proc/driver/nvidia/gpus/0000:65:00.0/information", "Model: \t\t NVIDIA L40S\n");
  tree.AddPciGpu("0000:17:00.0");
  tree.AddPciGpu("0000:65:00.0");
  tree.Write("/sys/bus/pci/devices/0000:17:00.1/vendor", "0x10de\n");  // its audio function
  tree.Write("/sys/bus/pci/devices/0000:17:00.1/class", "0x040300\n");
  tree.Write("/sys/bus/pci/devices/0000:00:02.0/vendor", "0x8086\n");  // an Intel GPU
  tree.Write("/sys/bus/pci/devices/0000:00:02.0/class", "0x030000\n");
  NvidiaDriverInfo info = ProbeNvidiaDriver(SystemRoot(tree.root()), loader_);
  EXPECT_EQ(info.nvml_soname, "");
  EXPECT_NE(info.nvml_error.find("libnvidia-ml.so.1"), std::string::npos);
  EXPECT_EQ(info.driver_version, "535.161.07");
  ASSERT_EQ(info.gpus.size(), 2u);
  EXPECT_EQ(info.gpus[0].name, "NVIDIA L40S");
  EXPECT_EQ(info.gpus[0].source, "/proc/driver/nvidia");
  EXPECT_EQ(info.pci_gpu_count, 2);
  EXPECT_EQ(info.GpuCount(), 2);
}

TEST_F(NvidiaDriverTest, NothingOnAMachineWithoutNvidia) {
  FakeSystemTree tree("nothing");
  tree.AddLinuxHost();
  NvidiaDriverInfo info = ProbeNvidiaDriver(SystemRoot(tree.root()), loader_);
  EXPECT_EQ(info.kernel_module_version, "");
  EXPECT_EQ(info.driver_version, "");
  EXPECT_FALSE(info.libcuda_loaded);
  EXPECT_EQ(info.GpuCount(), 0);
  EXPECT_EQ(loader_.opened, (std::vector<std::string>{"libcuda.so.1", "libnvidia-ml.so.1"}));
}

}  // namespace
}  // namespace imgpipe::env
