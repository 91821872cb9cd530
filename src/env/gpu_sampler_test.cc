#include "env/gpu_sampler.h"

#include <gtest/gtest.h>

#include "env/env_test_util.h"

namespace imgpipe::env {
namespace {

using GpuSamplerTest = FakeNvidiaTest;

TEST_F(GpuSamplerTest, ReadsUtilisationAndMemoryOfEachGpu) {
  stack_.gpus.resize(2);
  stack_.gpus[1].utilization = 87;
  stack_.gpus[1].memory_used = 3ull << 30;
  loader_.Add("libnvidia-ml.so.1", FakeNvmlSymbols());
  GpuSampler sampler(loader_);
  ASSERT_TRUE(sampler.available());
  std::optional<GpuSample> s = sampler.Sample(1);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->utilization_percent, 87);
  EXPECT_EQ(s->memory_used, 3ull << 30);
  EXPECT_EQ(s->memory_total, stack_.gpus[1].memory_total);
  stack_.gpus[1].utilization = 12;  // a later reading sees the change
  EXPECT_EQ(sampler.Sample(1)->utilization_percent, 12);
  EXPECT_FALSE(sampler.Sample(2).has_value());
  EXPECT_FALSE(sampler.Sample(-1).has_value());
}

TEST_F(GpuSamplerTest, AbsentWithoutADriver) {
  GpuSampler no_library(loader_);
  EXPECT_FALSE(no_library.available());
  EXPECT_FALSE(no_library.Sample(0).has_value());
  stack_.nvml_init_status = abi::kNvmlErrorDriverNotLoaded;
  loader_.Add("libnvidia-ml.so.1", FakeNvmlSymbols());
  GpuSampler driver_not_loaded(loader_);
  EXPECT_FALSE(driver_not_loaded.available());
}

TEST(GpuSampler, ThisMachineAnswersOrIsAbsentWithoutCrashing) {
  DlopenLibraryLoader loader;
  GpuSampler sampler(loader);
  if (sampler.available()) {
    EXPECT_TRUE(sampler.Sample(0).has_value());
  } else {
    EXPECT_FALSE(sampler.Sample(0).has_value());
  }
}

}  // namespace
}  // namespace imgpipe::env
