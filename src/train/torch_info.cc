#include "train/torch_info.h"

#include <ATen/detail/CUDAHooksInterface.h>
#include <torch/version.h>

#include <exception>

namespace imgpipe::train {

env::TorchBuildInfo CurrentTorchBuildInfo() {
  env::TorchBuildInfo info;
  info.linked = true;
  info.version = TORCH_VERSION;
  // CUDA hooks are registered when libtorch_cuda is loaded; without them every CUDA
  // query but hasCUDA() throws (a CPU-only build).
  const at::CUDAHooksInterface& hooks = at::detail::getCUDAHooks();
  try {
    info.cuda_version = static_cast<int>(hooks.versionCUDART());
    info.cuda_build = info.cuda_version > 0;
  } catch (const std::exception&) {
    return info;
  }
  try {
    if (hooks.compiledWithCuDNN()) info.cudnn_version = static_cast<int>(hooks.versionCuDNN());
  } catch (const std::exception&) {
    // Built without cuDNN: cudnn_version stays 0.
  }
  try {
    info.cuda_available = hooks.hasCUDA();
    info.cuda_device_count = info.cuda_available ? hooks.getNumGPUs() : 0;
  } catch (const std::exception&) {
    info.cuda_available = false;  // the driver or runtime failed to start
  }
  return info;
}

}  // namespace imgpipe::train
