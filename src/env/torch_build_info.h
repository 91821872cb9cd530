// What the linked libtorch was built with and can use, as plain data: filled by
// train/torch_info.h (the only code that includes libtorch), in imgpipe-torch, which
// `imgpipe doctor` asks (cli/model_commands.h), and checked by the doctor.
#pragma once

#include <string>

namespace imgpipe::env {

struct TorchBuildInfo {
  bool linked = false;          // false: imgpipe was built without libtorch, or see `problem`
  std::string problem;          // not linked although imgpipe-torch exists: why it did not answer
  std::string version;          // TORCH_VERSION, e.g. "2.4.0"
  bool cuda_build = false;      // libtorch was built with CUDA (libtorch_cuda is loaded)
  int cuda_version = 0;         // CUDART_VERSION it was built with, e.g. 12040; 0: CPU-only
  int cudnn_version = 0;        // CUDNN_VERSION it was built with, e.g. 90100 or 8902; 0: none
  bool cuda_available = false;  // libtorch can use a GPU now
  int cuda_device_count = 0;    // GPUs libtorch sees (after CUDA_VISIBLE_DEVICES)
};

}  // namespace imgpipe::env
