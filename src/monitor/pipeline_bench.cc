#include "monitor/pipeline_bench.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <thread>

#include "monitor/cpu_usage.h"
#include "record/tfrecord_reader.h"
#include "util/clock.h"
#include "util/median.h"
#include "util/thread_pool.h"

namespace imgpipe {
namespace {

using pipeline::Batch;
using pipeline::Pipeline;
using pipeline::PipelineOptions;
using Clock = std::chrono::steady_clock;

// The ladder's TFRecord rows: endless passes over the shards, `map_parallelism` threads.
pipeline::ImagePipelineConfig ShardsConfig(const LadderConfig& config, int map_parallelism) {
  pipeline::ImagePipelineConfig shards;
  shards.patterns = config.tfrecord_files;
  shards.batch_size = config.batch_size;
  shards.repeat = true;
  shards.map_parallelism = map_parallelism;
  shards.schema = config.schema;
  return shards;
}

}  // namespace

namespace {

// Warms up for options.warmup_seconds, then counts the images of `next_batch` (their
// count; none: the batches ended) for options.seconds on `threads` cores, with the
// statistics `stats` gives before and after.
BenchResult MeasureBatches(const std::function<std::optional<size_t>()>& next_batch,
                           const std::function<std::vector<pipeline::StageSnapshot>()>& stats,
                           const BenchOptions& options, int threads, const std::string& label) {
  BenchResult result;
  result.label = label;
  result.threads = threads;
  // 1. Warm up: fill the buffers, let autotune settle.
  auto start = Clock::now();
  while (SecondsSince(start) < options.warmup_seconds) {
    if (!next_batch()) break;
  }
  // 2. Measure.
  result.stats_before = stats();
  CpuUsageMeter cpu(result.threads);
  auto measure_start = Clock::now();
  while (SecondsSince(measure_start) < options.seconds) {
    std::optional<size_t> images = next_batch();
    if (!images) break;
    result.images += *images;
  }
  result.seconds = SecondsSince(measure_start);
  result.cpu_utilization = cpu.Utilisation();
  result.stats_after = stats();
  result.images_per_s = result.seconds > 0 ? result.images / result.seconds : 0;
  result.bottleneck = pipeline::BottleneckReport(result.stats_before, result.stats_after,
                                                 result.seconds, result.cpu_utilization);
  result.stats_table = pipeline::StatsTable(result.stats_before, result.stats_after, result.seconds);
  return result;
}

}  // namespace

BenchResult RunPipelineBench(const Pipeline<Batch>& batches, const BenchOptions& options,
                             const std::string& label) {
  const int threads = options.threads > 0 ? options.threads : AvailableCpus();
  PipelineOptions pipeline_options;
  pipeline_options.deterministic = options.deterministic;
  pipeline_options.cpu_budget = threads;
  auto it = batches.MakeIterator(pipeline_options);
  auto next_batch = [&]() -> std::optional<size_t> {
    std::optional<Batch> batch = it.Next();
    if (!batch) return std::nullopt;
    return batch->size;
  };
  return MeasureBatches(next_batch, [&] { return it.Stats(); }, options, threads, label);
}

BenchResult RunLoaderBench(loader::Loader& loader, const BenchOptions& options, const std::string& label) {
  const int threads = loader.options().threads > 0 ? loader.options().threads : AvailableCpus();
  // Epoch after epoch: the statistics of the passes that ended, and the current pass.
  int64_t epoch = 0;
  std::shared_ptr<loader::LoaderPass> pass;
  std::vector<pipeline::StageSnapshot> ended;
  auto next_batch = [&]() -> std::optional<size_t> {
    for (;;) {
      if (!pass) {
        loader.SetEpoch(epoch++);
        pass = loader.Iterate();
      }
      if (std::optional<loader::LoaderBatch> batch = pass->Next()) return batch->batch->size;
      ended = pipeline::AddStages(ended, pass->Stats());
      pass.reset();
    }
  };
  auto stats = [&] { return pass ? pipeline::AddStages(ended, pass->Stats()) : ended; };
  return MeasureBatches(next_batch, stats, options, threads, label);
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
  // (2) + TFRecord shards, interleave and prefetch.
  ImagePipelineConfig shards = ShardsConfig(config, 1);
  rows.push_back(RunPipelineBench(TrainPipeline(shards, full_decode), options,
                                  "2. + TFRecord shards, interleave, prefetch"));
  // (3) + parallel map with autotune.
  shards.map_parallelism = kAutotune;
  rows.push_back(RunPipelineBench(TrainPipeline(shards, full_decode), options,
                                  "3. + parallel map, autotune"));
  // (4) + DCT-scaled and crop-window decode.
  rows.push_back(RunPipelineBench(BestLadderPipeline(config), options,
                                  "4. + DCT-scaled, crop-window decode"));
  return rows;
}

Pipeline<Batch> BestLadderPipeline(const LadderConfig& config) {
  TrainPreset region = config.preset;
  region.use_region_decode = true;
  return TrainPipeline(ShardsConfig(config, pipeline::kAutotune), region);
}

CeilingCheck RunCeilingCheck(const LadderConfig& config, const BenchOptions& options,
                             int rounds) {
  CeilingCheck check;
  check.rounds = rounds;
  check.threads = options.threads > 0 ? options.threads : AvailableCpus();
  const std::vector<std::string> encoded = LoadEncodedImages(config.tfrecord_files, 1000, config.schema);
  const Pipeline<Batch> best = BestLadderPipeline(config);
  std::vector<double> single, loops, piped;
  for (int round = 0; round < rounds; ++round) {
    single.push_back(PresetLoopRate(encoded, config.preset, 1, options.seconds));
    loops.push_back(PresetLoopRate(encoded, config.preset, check.threads, options.seconds));
    piped.push_back(RunPipelineBench(best, options, "ceiling check").images_per_s);
  }
  check.single_loop = Median(single);
  check.parallel_loops = Median(loops);
  check.pipeline = Median(piped);
  return check;
}

double PresetLoopRate(const std::vector<std::string>& encoded_images, const TrainPreset& preset,
                      int threads, double seconds) {
  if (encoded_images.empty() || threads < 1) return 0;
  std::atomic<uint64_t> done{0};
  auto loop = [&](int thread) {
    std::vector<uint8_t> out(OutputBytes(preset.layout, preset.size));
    const auto start = Clock::now();
    uint64_t i = static_cast<uint64_t>(thread) * encoded_images.size() / threads, n = 0;
    while (SecondsSince(start) < seconds) {
      ApplyTrainPreset(encoded_images[i % encoded_images.size()], "memory", preset, i, out.data());
      ++i;
      ++n;
    }
    done += n;
  };
  const auto start = Clock::now();
  std::vector<std::thread> others;
  for (int t = 1; t < threads; ++t) others.emplace_back(loop, t);
  loop(0);
  for (std::thread& t : others) t.join();
  return done / SecondsSince(start);
}

std::vector<std::string> LoadEncodedImages(const std::vector<std::string>& tfrecord_files,
                                           size_t max_images, const pipeline::RecordSchema& schema) {
  std::vector<std::string> images;
  for (const std::string& file : tfrecord_files) {
    TfRecordReader reader(file);
    std::string data;
    while (images.size() < max_images && reader.Next(&data)) {
      pipeline::Record record{std::move(data), file, reader.record_offset()};
      images.push_back(pipeline::ExtractEncodedImage(std::move(record), schema).bytes);
    }
  }
  return images;
}

}  // namespace imgpipe
