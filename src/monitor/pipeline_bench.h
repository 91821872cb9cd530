// `imgpipe bench`: runs an input pipeline flat out and measures it, stage by stage;
// the ladder reproduces the classic optimisation steps on the user's own data.
#pragma once

#include <string>
#include <vector>

#include "loader/loader.h"
#include "pipeline/image_samples.h"

namespace imgpipe {

struct BenchResult {
  std::string label;
  uint64_t images = 0;
  double seconds = 0;
  double images_per_s = 0;
  double cpu_utilization = 0;  // of `threads` cores
  int threads = 0;
  std::vector<pipeline::StageSnapshot> stats_before;  // at the end of the warm-up
  std::vector<pipeline::StageSnapshot> stats_after;
  std::string bottleneck;  // BottleneckReport
  std::string stats_table; // StatsTable
};

struct BenchOptions {
  double seconds = 10;        // measured time
  double warmup_seconds = 2;  // before measuring (fills buffers, autotune settles)
  int threads = 0;            // CPU budget; 0: all available
  bool deterministic = false; // speed: parallel stages may deliver out of order
};

// Runs `batches` (repeating passes as needed) for options.seconds after the warm-up.
BenchResult RunPipelineBench(const pipeline::Pipeline<pipeline::Batch>& batches,
                             const BenchOptions& options, const std::string& label);

// Runs `loader` epoch after epoch (SetEpoch(0), (1), ...) for options.seconds after the
// warm-up: the rate a training loop over it gets, epoch boundaries included (options'
// threads and determinism are the loader's own). Statistics add up over the passes.
BenchResult RunLoaderBench(loader::Loader& loader, const BenchOptions& options, const std::string& label);

struct LadderConfig {
  std::string images_dir;                  // folder of class sub-folders (row 1)
  std::vector<std::string> tfrecord_files; // the same images as TFRecord shards (rows 2-4)
  pipeline::RecordSchema schema;           // their records' keys (DataSource::schema)
  TrainPreset preset;
  size_t batch_size = 64;
};

// The four rows: (1) raw JPEG files, serial decode, no prefetch; (2) + TFRecord
// shards, interleave and prefetch; (3) + parallel map with autotune; (4) + DCT-scaled
// and crop-window decode. Rows 1-3 decode whole images.
std::vector<BenchResult> RunLadder(const LadderConfig& config, const BenchOptions& options);

// The ladder's last row's pipeline: TFRecord shards, parallel map with autotune,
// DCT-scaled and crop-window decode.
pipeline::Pipeline<pipeline::Batch> BestLadderPipeline(const LadderConfig& config);

// The best pipeline against its ceiling, measured in alternation so that a machine
// whose speed drifts (shared hosts) affects all three alike: `rounds` times one thread
// looping over the preset, options.threads threads looping, then the pipeline; medians.
struct CeilingCheck {
  int rounds = 0;
  int threads = 0;
  double single_loop = 0;     // images/s of one thread looping over the preset
  double parallel_loops = 0;  // images/s of `threads` threads looping
  double pipeline = 0;        // images/s of BestLadderPipeline on `threads` threads
};
CeilingCheck RunCeilingCheck(const LadderConfig& config, const BenchOptions& options,
                             int rounds);

// Images per second of decode + crop + resize (the train preset) over encoded images
// held in memory, on `threads` threads each running its own loop (no pipeline): with
// 1, the ceiling one core can reach; with N, the machine's for N cores (less than N
// times the first when the cores share caches, memory bandwidth or a clock budget).
double PresetLoopRate(const std::vector<std::string>& encoded_images, const TrainPreset& preset,
                      int threads, double seconds);

// Up to `max_images` encoded images from `tfrecord_files`, read by `schema`.
std::vector<std::string> LoadEncodedImages(const std::vector<std::string>& tfrecord_files,
                                           size_t max_images,
                                           const pipeline::RecordSchema& schema = {});

}  // namespace imgpipe
