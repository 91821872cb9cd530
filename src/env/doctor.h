// `imgpipe doctor`: checks the stack training runs on, layer by layer (platform, NVIDIA
// driver, CUDA libraries, GPUs, libtorch, host CPUs and memory, data), and says what is
// wrong and how to fix it, in one report. Two jobs, in files of their own: the GPU stack
// (gpu_stack_checks.h) and the input pipeline's host and data (data_checks.h), whose
// memory check states the Loader's own estimate (loader/memory_estimate.h). Everything
// is read below a SystemRoot and loaded through a LibraryLoader, so tests run it on
// fake machines.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "env/cuda_libraries.h"
#include "env/host_probe.h"
#include "env/library_loader.h"
#include "env/network_probe.h"
#include "env/nvidia_driver.h"
#include "env/storage_probe.h"
#include "env/torch_build_info.h"
#include "image/presets.h"
#include "loader/memory_estimate.h"
#include "pipeline/image_samples.h"

namespace imgpipe::env {

enum class CheckStatus { kOk, kInfo, kWarning, kError };
// "ok", "info", "warning", "error".
const char* CheckStatusName(CheckStatus status);

struct Check {
  std::string layer;  // "platform", "driver", "cuda", "gpu", "libtorch", "host", "data"
  std::string name;   // what was checked: "NVIDIA driver", "cuDNN", "GPU 0", ...
  CheckStatus status = CheckStatus::kOk;
  std::string detail;  // what was found
  std::string fix;     // what to do about it; "" when nothing
};

// The training run the checks plan for. The defaults are the train pipeline's own.
struct PlannedTraining {
  pipeline::ImagePipelineConfig pipeline;  // batch_size, shuffle_buffer, cycle_length
  TrainPreset preset;                      // output size and layout
  int threads = 0;    // decode threads per training process; 0: every usable CPU
  int processes = 0;  // training processes (one per GPU); 0: one per GPU present, at least 1
};

struct DoctorOptions {
  std::string root = "/";  // where /proc, /sys, /dev and /usr/lib are read
  std::string data;        // the training data (shards or an image folder, a path or URL); "": not checked
  PlannedTraining plan;
  // For data at a URL, the rate its store must feed: images/s given by the user (0: none),
  // else estimated from the train preset's CPU seconds per image measured on the data
  // (0: not measured) and the planned decode threads.
  double images_per_s = 0;
  double preset_cpu_seconds_per_image = 0;
  NetworkProbeOptions network;
};

// Encoded bytes assumed per record when the data has no index files to measure:
// ImageNet's training JPEGs average about 110 KB.
inline constexpr double kAssumedRecordBytes = 110e3;

// What the doctor found (the probes' results) and its verdicts.
struct DoctorReport {
  std::vector<Check> checks;  // in layer order
  WslInfo wsl;
  std::string container;  // "" when not in a container
  NvidiaDriverInfo driver;
  std::vector<CudaLibrary> libraries;  // CUDA runtime, cuDNN, cuBLAS, NCCL
  TorchBuildInfo torch;
  CpuInfo cpus;
  MemoryInfo memory;
  int processes = 1;                   // training processes planned
  loader::MemoryNeed loader_memory;    // one process's Loader buffers, as the Loader estimates them
  uint64_t planned_buffer_bytes = 0;   // loader_memory.minimum_bytes x processes
  std::optional<StorageInfo> storage;  // when --data is given and exists
  std::optional<ShardList> shards;
  std::optional<NetworkProbe> network;  // when --data is a URL
  double needed_images_per_s = 0;       // the rate the network check judged against (0: none)

  // Training can use what is present: no check is an error.
  bool ok() const;
  int Count(CheckStatus status) const;
};

// Probes the machine below `options.root` (libraries through `loader`), judges it
// against `torch` and the planned training, and returns every check. Never throws for
// what it finds; a problem is a check.
DoctorReport RunDoctor(const DoctorOptions& options, LibraryLoader& loader,
                       const TorchBuildInfo& torch);

}  // namespace imgpipe::env
