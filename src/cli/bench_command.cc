#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/data_options.h"
#include "cli/loader_flags.h"
#include "io/storage.h"
#include "monitor/pipeline_bench.h"
#include "monitor/preset_costs.h"
#include "util/error.h"
#include "util/file.h"
#include "util/thread_pool.h"
#include "util/trace.h"

namespace imgpipe::cli {
namespace {

struct BenchFlags {
  std::string data;
  std::string images;
  // The Loader options bench takes (AddLoaderFlags(kBench): --preset, --threads,
  // --batch-size, --image-size, --layout, --draft-decode, the augmentation), with
  // bench's own batch of 64.
  loader::LoaderOptions loader = [] {
    loader::LoaderOptions o;
    o.batch_size = 64;
    return o;
  }();
  bool ladder = false;
  double seconds = 10;
  double warmup = 2;
  std::string trace;
  bool json = false;
  size_t cost_images = 100;
  int cost_rounds = 3;
  bool endless = false;
  pipeline::DataSourceOptions source;
};

// The Loader's options of these flags (every file of --data), checked; the presets the
// other modes run (--endless, --ladder, --cost-images) are made from them too.
loader::LoaderOptions BenchLoaderOptions(const BenchFlags& f, const BenchOptions& options) {
  loader::LoaderOptions lo = f.loader;
  lo.threads = options.threads;  // --threads, resolved (0: the CPUs available)
  lo.deterministic = options.deterministic;  // speed: parallel stages may deliver out of order
  lo.split = "";                             // every file of --data
  lo.last_batch = "partial";                 // every record counts, data smaller than a batch too
  loader::SetDataSourceOptions(f.source, lo);
  loader::CheckOptions(lo);
  return lo;
}

// `imgpipe bench`'s preset over --data: through the Loader, epoch after epoch, as
// training and Python read it; or (--endless) one pipeline whose records repeat
// without epochs, so without epoch boundaries: the ceiling the Loader is held to.
BenchResult RunPresetBench(const BenchFlags& f, const pipeline::DataSource& source, const BenchOptions& options,
                           const loader::LoaderOptions& lo) {
  const std::string label = f.loader.preset + " preset" + (f.endless ? ", endless" : "");
  if (f.endless) {
    pipeline::ImagePipelineConfig config;
    config.patterns = source.layout == pipeline::DataLayout::kImageFolder ? std::vector<std::string>{f.data}
                                                                          : source.Paths();
    config.schema = source.schema;
    config.batch_size = f.loader.batch_size;
    config.repeat = true;
    return f.loader.preset == "train"
               ? RunPipelineBench(pipeline::TrainPipeline(config, loader::TrainPresetOf(lo)), options, label)
               : RunPipelineBench(pipeline::EvalPipeline(config, loader::EvalPresetOf(lo)), options, label);
  }
  loader::Loader loader(source, lo);  // resolved once, above
  return RunLoaderBench(loader, options, label);
}

nlohmann::json StagesJson(const BenchResult& r) {
  nlohmann::json stages = nlohmann::json::array();
  for (size_t i = 0; i < r.stats_after.size(); ++i) {
    const auto& a = r.stats_after[i];
    pipeline::StageSnapshot b = pipeline::MatchingStage(a, r.stats_before);
    double s = r.seconds > 0 ? r.seconds : 1e-9;
    stages.push_back({{"name", a.name},
                      {"depth", a.depth},
                      {"elements_per_s", (a.elements - b.elements) / s},
                      {"mb_per_s", (a.bytes - b.bytes) / s / 1e6},
                      {"busy_s", (a.busy_ns - b.busy_ns) / 1e9},
                      {"input_wait_s", (a.input_wait_ns - b.input_wait_ns) / 1e9},
                      {"output_wait_s", (a.output_wait_ns - b.output_wait_ns) / 1e9},
                      {"errors", a.errors - b.errors},
                      {"stand_ins", a.stand_ins - b.stand_ins},
                      {"warnings", a.warnings - b.warnings},
                      {"parallelism", a.parallelism},
                      {"buffer_fill", a.buffer_fill},
                      {"buffer_capacity", a.buffer_capacity}});
  }
  return stages;
}

nlohmann::json ResultJson(const BenchResult& r) {
  return {{"label", r.label},
          {"images", r.images},
          {"seconds", r.seconds},
          {"images_per_s", r.images_per_s},
          {"threads", r.threads},
          {"cpu_utilization", r.cpu_utilization},
          {"bottleneck", r.bottleneck},
          {"stages", StagesJson(r)}};
}

// What the run sent and received over the network (data at a URL): requests, connections,
// bytes per request, retries; printed unless --json.
nlohmann::json ReportStorageTraffic(const BenchFlags& f) {
  const HttpTraffic t = StorageTraffic();
  const ShardCacheCounters c = StorageCacheCounters();
  const double per_request = t.requests > 0 ? static_cast<double>(t.bytes_received) / t.requests : 0;
  if (!f.json) {
    std::printf("storage: %llu requests on %llu connections, %.1f MB received (%.0f KiB a request), %llu retries\n",
                static_cast<unsigned long long>(t.requests), static_cast<unsigned long long>(t.connections),
                t.bytes_received / 1e6, per_request / 1024, static_cast<unsigned long long>(t.retries));
    if (c.hits + c.misses > 0) {
      std::printf("cache: %llu shard opens from local copies, %llu from the network, %llu copies kept, %llu evicted\n",
                  static_cast<unsigned long long>(c.hits), static_cast<unsigned long long>(c.misses),
                  static_cast<unsigned long long>(c.stored), static_cast<unsigned long long>(c.evicted));
    }
  }
  return {{"requests", t.requests},
          {"connections", t.connections},
          {"bytes_received", t.bytes_received},
          {"bytes_per_request", per_request},
          {"retries", t.retries},
          {"cache_hits", c.hits},
          {"cache_misses", c.misses},
          {"cache_stored", c.stored},
          {"cache_evicted", c.evicted}};
}

void PrintResult(const BenchResult& r) {
  std::printf("%s: %.1f images/s on %d thread(s), CPU %.0f%% (%llu images in %.1f s)\n",
              r.label.c_str(), r.images_per_s, r.threads, 100 * r.cpu_utilization,
              static_cast<unsigned long long>(r.images), r.seconds);
  std::printf("%s", r.stats_table.c_str());
  std::printf("bottleneck: %s\n", r.bottleneck.c_str());
}

// Measures the preset's per-image costs on a sample of the data, prints them (unless
// --json) beside the pipeline's CPU time per image, and returns them as JSON.
nlohmann::json ReportCosts(const BenchFlags& f, const pipeline::DataSource& source,
                           const TrainPreset& train, const EvalPreset& eval,
                           const BenchResult& r) {
  const std::vector<std::string> images = SampleEncodedImages(source, f.cost_images);
  const PresetCosts c = f.loader.preset == "train" ? MeasureTrainPresetCosts(images, train, f.cost_rounds)
                                            : MeasureEvalPresetCosts(images, eval, f.cost_rounds);
  const double pipeline_cpu = PipelineCpuPerImage(r);
  if (!f.json) std::printf("%s", PresetCostsTable(c, pipeline_cpu).c_str());
  const auto ms = [](double s) { return 1e3 * s; };
  return {{"images", c.images},
          {"rounds", c.rounds},
          {"entropy_ms", ms(c.entropy)},
          {"idct_upsample_color_ms", ms(c.idct_color)},
          {"whole_decode_ms", ms(c.whole_decode)},
          {"header_and_window_ms", ms(c.window)},
          {"resize_ms", ms(c.resize)},
          {"flip_normalize_ms", ms(c.output)},
          {"augment_ms", ms(c.augment)},
          {"sum_ms", ms(c.Sum())},
          {"preset_alone_ms", ms(c.measured)},
          {"pipeline_cpu_ms", ms(pipeline_cpu)},
          {"pipeline_overhead_ms", ms(pipeline_cpu - c.measured)}};
}

// --ladder: the four optimisation rows, then the best row against its ceiling (the
// preset looping on 1 and on N threads without a pipeline); printed unless --json, and
// returned as JSON.
nlohmann::json RunLadderBench(const BenchFlags& f, const pipeline::DataSource& source, const BenchOptions& options,
                              const TrainPreset& train) {
  if (source.layout == pipeline::DataLayout::kImageFolder) {
    throw Error("--ladder needs --data with TFRecord shards (imgpipe convert's output)");
  }
  LadderConfig ladder;
  ladder.tfrecord_files = source.Paths();
  ladder.schema = source.schema;
  ladder.images_dir = f.images;
  if (ladder.images_dir.empty()) {
    throw Error("--ladder needs --images DIR: the image folder the shards were made from");
  }
  ladder.preset = train;
  ladder.batch_size = f.loader.batch_size;
  std::vector<BenchResult> rows = RunLadder(ladder, options);
  BenchOptions check_options = options;
  check_options.seconds = std::min(3.0, f.seconds);
  check_options.warmup_seconds = std::min(1.0, f.warmup);
  const CeilingCheck check = RunCeilingCheck(ladder, check_options, 3);
  nlohmann::json json_rows = nlohmann::json::array();
  if (!f.json) {
    std::printf("%-48s %12s %10s %8s\n", "ladder (train preset)", "images/s", "vs row 1", "CPU");
  }
  for (const BenchResult& r : rows) {
    double ratio = rows[0].images_per_s > 0 ? r.images_per_s / rows[0].images_per_s : 0;
    if (!f.json) {
      std::printf("%-48s %12.1f %9.2fx %7.0f%%\n", r.label.c_str(), r.images_per_s, ratio,
                  100 * r.cpu_utilization);
    }
    nlohmann::json row = ResultJson(r);
    row["ratio_to_row_1"] = ratio;
    json_rows.push_back(row);
  }
  const double single_times_threads = check.single_loop * check.threads;
  const double of_single = single_times_threads > 0 ? check.pipeline / single_times_threads : 0;
  const double of_loops = check.parallel_loops > 0 ? check.pipeline / check.parallel_loops : 0;
  if (!f.json) {
    std::printf("\npipeline against its ceiling (medians of %d alternating rounds, %d thread(s)):\n"
                "  1 thread looping over decode+crop+resize  %10.1f images/s\n"
                "  %d threads looping (no pipeline)           %10.1f images/s (%.2fx 1 thread)\n"
                "  the pipeline of row 4                      %10.1f images/s: %.0f%% of 1 thread x "
                "%d, %.0f%% of %d looping threads\n",
                check.rounds, check.threads, check.single_loop, check.threads,
                check.parallel_loops,
                check.single_loop > 0 ? check.parallel_loops / check.single_loop : 0,
                check.pipeline, 100 * of_single, check.threads, 100 * of_loops, check.threads);
    std::printf("best row's stages:\n%s", rows.back().stats_table.c_str());
    std::printf("bottleneck: %s\n", rows.back().bottleneck.c_str());
  }
  return {{"ladder", json_rows},
          {"single_thread_preset_images_per_s", check.single_loop},
          {"parallel_preset_loops_images_per_s", check.parallel_loops},
          {"ceiling_check_pipeline_images_per_s", check.pipeline},
          {"pipeline_of_single_times_threads", of_single},
          {"pipeline_of_parallel_loops", of_loops},
          {"images_per_s", rows.back().images_per_s},
          {"threads", options.threads},
          {"cpu_utilization", rows.back().cpu_utilization},
          {"stages", StagesJson(rows.back())}};
}

void RunBench(const BenchFlags& f) {
  BenchOptions options;
  options.seconds = f.seconds;
  options.warmup_seconds = f.warmup;
  // N threads means N cores: every thread of the pipeline (readers, workers,
  // prefetchers, this consumer) shares them.
  options.threads = f.loader.threads > 0 ? RestrictToCpus(f.loader.threads) : AvailableCpus();
  const loader::LoaderOptions lo = BenchLoaderOptions(f, options);
  const TrainPreset train = loader::TrainPresetOf(lo);
  const EvalPreset eval = loader::EvalPresetOf(lo);
  if (!f.trace.empty()) trace::Enable();

  const pipeline::DataSource source = ResolveAndReport(f.data, f.source);
  nlohmann::json out;
  if (f.ladder) {
    out = RunLadderBench(f, source, options, train);
  } else {
    BenchResult r = RunPresetBench(f, source, options, lo);
    if (!f.json) PrintResult(r);
    out = ResultJson(r);
    if (f.cost_images > 0) out["per_image_costs"] = ReportCosts(f, source, train, eval, r);
  }
  if (IsUrl(f.data)) out["storage"] = ReportStorageTraffic(f);
  if (!f.trace.empty()) {
    trace::Disable();
    size_t events = trace::WriteChromeTrace(f.trace);
    if (!f.json) std::printf("trace: %zu events in %s (open in Perfetto or chrome://tracing)\n", events, f.trace.c_str());
    out["trace_events"] = events;
  }
  if (f.json) std::printf("%s\n", out.dump().c_str());
}

}  // namespace

void AddBenchCommand(CLI::App& app) {
  auto f = std::make_shared<BenchFlags>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "Measure the input pipeline stage by stage and name the bottleneck");
  cmd->add_option("--data", f->data, kDataDoc)->required();
  AddDataSourceOptions(cmd, f->source);
  AddStorageCacheOptions(cmd);
  cmd->add_option("--images", f->images, "--ladder: the image folder the shards were made from");
  AddLoaderFlags(cmd, loader::kBench, f->loader);
  cmd->add_flag("--ladder", f->ladder, "Run the four-step optimisation ladder");
  cmd->add_option("--seconds", f->seconds, "Measured seconds (per ladder row)")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--warmup", f->warmup, "Warm-up seconds before measuring")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--cost-images", f->cost_images,
                  "Per-image cost breakdown of the preset (entropy decoding, IDCT+colour, "
                  "window, resize, flip/normalise, policy and erasing, pipeline overhead) on this many of the "
                  "data's images held in memory, one thread (0: none)")
      ->capture_default_str();
  cmd->add_option("--cost-rounds", f->cost_rounds, "Rounds of the cost breakdown (medians)")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_flag("--endless", f->endless,
                "Repeat the records without epochs (one pipeline, no epoch boundaries) instead of the "
                "Loader's epochs: the ceiling the Loader is measured against");
  cmd->add_option("--trace", f->trace, "Write a Chrome trace-event JSON file of every thread");
  cmd->add_flag("--json", f->json, "Print one JSON object");
  cmd->callback([f] { RunBench(*f); });
}

}  // namespace imgpipe::cli
