// The doctor's first job: the GPU stack training runs on (platform, NVIDIA driver, CUDA
// libraries, GPUs, libtorch), probed below a SystemRoot and judged against libtorch.
#pragma once

#include "env/doctor.h"
#include "env/library_loader.h"
#include "env/system_root.h"
#include "env/torch_build_info.h"

namespace imgpipe::env {

// Fills r->torch, wsl, container, driver and libraries: the machine below `root`, the
// libraries through `loader` (the sonames `torch` needs tried first).
void ProbeGpuStack(const SystemRoot& root, LibraryLoader& loader, const TorchBuildInfo& torch, DoctorReport* r);

// Appends the checks of layers platform, driver, cuda, gpu and libtorch, in that order.
void CheckGpuStack(DoctorReport* r);

}  // namespace imgpipe::env
