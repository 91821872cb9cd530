#include "monitor/pipeline_bench.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "convert/converter.h"
#include "convert/synth_dataset.h"
#include "util/file.h"

namespace imgpipe {
namespace {

// A small synthetic set as an image folder and as TFRecord shards.
struct BenchData {
  std::string images;
  std::vector<std::string> shards;
};

BenchData MakeBenchData() {
  std::string dir = JoinPath(::testing::TempDir(), "pipeline_bench_" + std::to_string(::getpid()));
  BenchData data;
  data.images = dir + "/images";
  if (!IsDirectory(data.images)) {
    SynthOptions synth;
    synth.out_dir = data.images;
    synth.classes = 3;
    synth.per_class = 20;
    synth.width = 96;
    synth.height = 80;
    WriteSynthDataset(synth);
  }
  ConvertOptions convert;
  convert.input = data.images;
  convert.output = dir + "/shards";
  convert.plan.min_shards = 3;
  convert.resume = true;
  for (const ShardSummary& s : RunConvert(convert).shards) {
    data.shards.push_back(JoinPath(convert.output, s.file_name));
  }
  return data;
}

TEST(PipelineBench, MeasuresImagesStagesAndBottleneck) {
  BenchData data = MakeBenchData();
  pipeline::ImagePipelineConfig config;
  config.patterns = data.shards;
  config.batch_size = 8;
  config.repeat = true;
  TrainPreset preset;
  preset.size = 64;
  BenchOptions options;
  options.seconds = 0.5;
  options.warmup_seconds = 0.2;
  options.threads = 2;
  BenchResult r = RunPipelineBench(pipeline::TrainPipeline(config, preset), options, "train");
  EXPECT_GT(r.images, 0u);
  EXPECT_EQ(r.images % 8, 0u);
  EXPECT_GT(r.images_per_s, 0);
  EXPECT_GT(r.cpu_utilization, 0);
  EXPECT_FALSE(r.bottleneck.empty());
  bool has_map = false;
  for (auto& s : r.stats_after) has_map = has_map || s.name == "map(train_preset)";
  EXPECT_TRUE(has_map);
  EXPECT_NE(r.stats_table.find("map(train_preset)"), std::string::npos);
}

TEST(PipelineBench, LadderHasFourRowsOnTheSameData) {
  BenchData data = MakeBenchData();
  LadderConfig ladder;
  ladder.images_dir = data.images;
  ladder.tfrecord_files = data.shards;
  ladder.preset.size = 48;
  ladder.batch_size = 4;
  BenchOptions options;
  options.seconds = 0.3;
  options.warmup_seconds = 0.1;
  std::vector<BenchResult> rows = RunLadder(ladder, options);
  ASSERT_EQ(rows.size(), 4u);
  for (const BenchResult& r : rows) EXPECT_GT(r.images, 0u) << r.label;
  EXPECT_EQ(rows[0].threads, 1);
  std::vector<std::string> encoded = LoadEncodedImages(data.shards, 10);
  EXPECT_EQ(encoded.size(), 10u);
  EXPECT_GT(PresetLoopRate(encoded, ladder.preset, 1, 0.2), 0);
  EXPECT_GT(PresetLoopRate(encoded, ladder.preset, 2, 0.2), 0);
  options.threads = 2;
  CeilingCheck check = RunCeilingCheck(ladder, options, 3);
  EXPECT_EQ(check.rounds, 3);
  EXPECT_EQ(check.threads, 2);
  EXPECT_GT(check.single_loop, 0);
  EXPECT_GT(check.parallel_loops, 0);
  EXPECT_GT(check.pipeline, 0);
}

}  // namespace
}  // namespace imgpipe
