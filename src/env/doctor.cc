#include "env/doctor.h"

#include <algorithm>

#include "env/data_checks.h"
#include "env/gpu_stack_checks.h"
#include "env/system_root.h"

namespace imgpipe::env {

const char* CheckStatusName(CheckStatus status) {
  switch (status) {
    case CheckStatus::kOk:
      return "ok";
    case CheckStatus::kInfo:
      return "info";
    case CheckStatus::kWarning:
      return "warning";
    case CheckStatus::kError:
      return "error";
  }
  return "?";
}

bool DoctorReport::ok() const { return Count(CheckStatus::kError) == 0; }

int DoctorReport::Count(CheckStatus status) const {
  return static_cast<int>(std::count_if(checks.begin(), checks.end(),
                                        [&](const Check& c) { return c.status == status; }));
}

DoctorReport RunDoctor(const DoctorOptions& options, LibraryLoader& loader, const TorchBuildInfo& torch) {
  const SystemRoot root(options.root);
  DoctorReport r;
  // 1. Probe: the GPU stack, then the host and the data (processes follow the GPUs).
  ProbeGpuStack(root, loader, torch, &r);
  const DataProbe data = ProbeHostAndData(root, options, &r);
  // 2. Judge, layer by layer: platform, driver, cuda, gpu, libtorch; host; data.
  CheckGpuStack(&r);
  CheckHost(&r, options.plan, data);
  CheckData(&r, options, data);
  return r;
}

}  // namespace imgpipe::env
