#include "monitor/pipeline_bench.h"

#include <chrono>

#include "monitor/cpu_usage.h"
#include "record/tfrecord_reader.h"
#include "util/thread_pool.h"

namespace imgpipe {
namespace {

using pipeline::Batch;
using pipeline::Pipeline;
using pipeline::PipelineOptions;
using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

BenchResult RunPipelineBench(const Pipeline<Batch>& batches, const BenchOptions& options,
                             const std::string& label) {
  BenchResult result;
  result.label = label;
  result.threads = options.threads > 0 ? options.threads : AvailableCpus();
  PipelineOptions pipeline_options;
  pipeline_options.deterministic = options.deterministic;
  pipeline_options.cpu_budget = result.threads;
  auto it = batches.MakeIterator(pipeline_options);

  // 1. Warm up: fill the buffers, let autotune settle.
  auto start = Clock::now();
  while (SecondsSince(start) < options.warmup_seconds) {
    if (!it.Next()) break;
  }
  // 2. Measure.
  result.stats_before = it.Stats();
  CpuUsageMeter cpu(result.threads);
  auto measure_start = Clock::now();
  while (SecondsSince(measure_start) < options.seconds) {
    std::optional<Batch> batch = it.Next();
    if (!batch) break;
    result.images += batch->size;
  }
  result.seconds = SecondsSince(measure_start);
  result.cpu_utilization = cpu.Utilisation();
  result.stats_after = it.Stats();
  result.images_per_s = result.seconds > 0 ? result.images / result.seconds : 0;
  result.bottleneck = pipeline::BottleneckReport(result.stats_before, result.stats_after,
                                                 result.seconds, result.cpu_utilization);
  result.stats_table = pipeline::StatsTable(result.stats_before, result.stats_after, result.seconds);
  return result;
}

std::vector<BenchResult> RunLadder(const LadderConfig& config, const BenchOptions& options) {
  using namespace pipeline;
  std::vector<BenchResult> rows;
  TrainPreset full_decode = config.preset;
  full_decode.use_region_decode = false;

  // (1) Raw JPEG files, serial decode, no prefetch.
  {
    auto batches = Pipeline<Record>(ImageFiles(config.images_dir, true))
                       .Repeat()
                       .Map(TrainSampleFunction(full_decode), 1, "map(train_preset)")
                       .Batch(config.batch_size, true);
    BenchOptions one = options;
    one.threads = 1;
    rows.push_back(RunPipelineBench(batches, one, "1. raw JPEG files, serial decode, no prefetch"));
  }
  ImagePipelineConfig shards;
  shards.patterns = config.tfrecord_files;
  shards.batch_size = config.batch_size;
  shards.repeat = true;
  // (2) + TFRecord shards, interleave and prefetch.
  shards.map_parallelism = 1;
  rows.push_back(RunPipelineBench(TrainPipeline(shards, full_decode), options,
                                  "2. + TFRecord shards, interleave, prefetch"));
  // (3) + parallel map with autotune.
  shards.map_parallelism = kAutotune;
  rows.push_back(RunPipelineBench(TrainPipeline(shards, full_decode), options,
                                  "3. + parallel map, autotune"));
  // (4) + DCT-scaled and crop-window decode.
  TrainPreset region = config.preset;
  region.use_region_decode = true;
  rows.push_back(RunPipelineBench(TrainPipeline(shards, region), options,
                                  "4. + DCT-scaled, crop-window decode"));
  return rows;
}

double SingleThreadPresetRate(const std::vector<std::string>& encoded_images,
                              const TrainPreset& preset, double seconds) {
  if (encoded_images.empty()) return 0;
  std::vector<uint8_t> out(OutputBytes(preset.layout, preset.size));
  auto start = Clock::now();
  uint64_t done = 0;
  while (SecondsSince(start) < seconds) {
    const std::string& image = encoded_images[done % encoded_images.size()];
    ApplyTrainPreset(image, "memory", preset, done, out.data());
    ++done;
  }
  return done / SecondsSince(start);
}

std::vector<std::string> LoadEncodedImages(const std::vector<std::string>& tfrecord_files,
                                           size_t max_images) {
  std::vector<std::string> images;
  for (const std::string& file : tfrecord_files) {
    TfRecordReader reader(file);
    std::string data;
    while (images.size() < max_images && reader.Next(&data)) {
      pipeline::Record record{std::move(data), file, reader.record_offset()};
      images.push_back(pipeline::ExtractEncodedImage(std::move(record)).bytes);
    }
  }
  return images;
}

}  // namespace imgpipe
