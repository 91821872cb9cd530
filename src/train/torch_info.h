// What the linked libtorch was built with and can use now, for `imgpipe doctor`.
#pragma once

#include "env/torch_build_info.h"

namespace imgpipe::train {

// Version, CUDA and cuDNN it was built with (CPU-only: cuda_build false), and whether
// it can use a GPU now. Never throws; asking starts no CUDA context.
env::TorchBuildInfo CurrentTorchBuildInfo();

}  // namespace imgpipe::train
