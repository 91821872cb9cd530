#include "monitor/preset_costs.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>

#include "image/jpeg_region_decoder.h"
#include "pipeline/input_list.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/median.h"
#include "util/error.h"

namespace imgpipe {
namespace {

// One preset call on image i, writing `out`, adding its steps to `times` if not null.
using PresetCall = std::function<void(size_t i, void* out, PresetStepTimes* times)>;

// The parts of one pass over the images, in seconds per image.
PresetCosts MeasurePass(const std::vector<std::string>& images, const PresetCall& call,
                        void* out) {
  PresetCosts pass;
  PresetStepTimes steps;
  for (size_t i = 0; i < images.size(); ++i) {
    // 1. The preset's steps, timed one by one.
    const double decode_before = steps.decode;
    call(i, out, &steps);
    const double decode = steps.decode - decode_before;
    // 2. Entropy decoding of what its region decode read, if any.
    if (steps.region) {
      const double start = ThreadCpuSeconds();
      EntropyDecodeJpeg(images[i], "memory", *steps.region);
      const double entropy = ThreadCpuSeconds() - start;
      pass.entropy += entropy;
      pass.idct_color += decode - entropy;
    } else {
      pass.whole_decode += decode;
    }
    // 3. The whole call alone.
    const double start = ThreadCpuSeconds();
    call(i, out, nullptr);
    pass.measured += ThreadCpuSeconds() - start;
  }
  const double n = static_cast<double>(images.size());
  pass.window = steps.window / n;
  pass.resize = steps.resize / n;
  pass.output = steps.output / n;
  pass.augment = steps.augment / n;
  pass.entropy /= n;
  pass.idct_color /= n;
  pass.whole_decode /= n;
  pass.measured /= n;
  return pass;
}

PresetCosts MeasureCosts(const std::vector<std::string>& images, int rounds, size_t out_bytes,
                         const PresetCall& call) {
  if (images.empty() || rounds < 1) {
    throw Error("MeasurePresetCosts needs at least one image and one round, not " +
                std::to_string(images.size()) + " and " + std::to_string(rounds));
  }
  std::vector<uint8_t> out(out_bytes);
  // An untimed pass first: lazy initialisation (codecs, buffers) is not per-image cost.
  MeasurePass(images, call, out.data());
  std::vector<PresetCosts> passes;
  for (int r = 0; r < rounds; ++r) passes.push_back(MeasurePass(images, call, out.data()));
  PresetCosts costs;
  costs.images = images.size();
  costs.rounds = rounds;
  for (double PresetCosts::*part :
       {&PresetCosts::entropy, &PresetCosts::idct_color, &PresetCosts::whole_decode,
        &PresetCosts::window, &PresetCosts::resize, &PresetCosts::output,
        &PresetCosts::augment, &PresetCosts::measured}) {
    std::vector<double> values;
    for (const PresetCosts& p : passes) values.push_back(p.*part);
    costs.*part = Median(values);
  }
  return costs;
}

}  // namespace

double PresetCosts::Sum() const {
  return entropy + idct_color + whole_decode + window + resize + output + augment;
}

PresetCosts MeasureTrainPresetCosts(const std::vector<std::string>& encoded_images,
                                    const TrainPreset& preset, int rounds) {
  return MeasureCosts(encoded_images, rounds, OutputBytes(preset.layout, preset.size),
                      [&](size_t i, void* out, PresetStepTimes* times) {
                        ApplyTrainPreset(encoded_images[i], "memory", preset, i, out, times);
                      });
}

PresetCosts MeasureEvalPresetCosts(const std::vector<std::string>& encoded_images,
                                   const EvalPreset& preset, int rounds) {
  return MeasureCosts(encoded_images, rounds, OutputBytes(preset.layout, preset.crop_size),
                      [&](size_t i, void* out, PresetStepTimes* times) {
                        ApplyEvalPreset(encoded_images[i], "memory", preset, out, times);
                      });
}

std::vector<std::string> SampleEncodedImages(const pipeline::DataSource& source,
                                             size_t max_images) {
  if (source.layout != pipeline::DataLayout::kImageFolder) {
    return LoadEncodedImages(source.Paths(), max_images, source.schema);
  }
  const InputList list = ListImageFolder(source.data);
  const size_t n = list.size(), take = std::min(n, max_images);
  std::vector<std::string> images;
  for (size_t k = 0; k < take; ++k) images.push_back(ReadFile(list.path(k * n / take)));
  return images;
}

double PipelineCpuPerImage(const BenchResult& result) {
  if (result.images == 0) return 0;
  return result.cpu_utilization * result.threads * result.seconds / result.images;
}

std::string PresetCostsTable(const PresetCosts& costs, double pipeline_cpu_per_image) {
  const double sum = costs.Sum() > 0 ? costs.Sum() : 1e-12;
  std::string table;
  char line[160];
  const auto row = [&](const char* name, double seconds) {
    std::snprintf(line, sizeof line, "  %-44s %8.3f ms %6.1f%%\n", name, 1e3 * seconds,
                  100 * seconds / sum);
    table += line;
  };
  std::snprintf(line, sizeof line,
                "per-image cost (%zu images in memory, 1 thread, medians of %d rounds):\n",
                costs.images, costs.rounds);
  table += line;
  row("entropy decoding (Huffman)", costs.entropy);
  row("IDCT + upsampling + colour conversion", costs.idct_color);
  if (costs.whole_decode > 0) row("whole-image decode (not region-decoded)", costs.whole_decode);
  row("header + crop window", costs.window);
  row("resize", costs.resize);
  row("jitter + flip + normalise / layout", costs.output);
  if (costs.augment > 0) row("policy + random erasing (--auto-augment ...)", costs.augment);
  std::snprintf(line, sizeof line, "  %-44s %8.3f ms (the preset timed alone: %.3f ms)\n",
                "sum of the parts", 1e3 * costs.Sum(), 1e3 * costs.measured);
  table += line;
  if (pipeline_cpu_per_image > 0) {
    // Against the preset timed alone: timing each part adds clock reads and a second
    // decode to the sum, which the pipeline does not do.
    const double alone = costs.measured > 0 ? costs.measured : sum;
    std::snprintf(line, sizeof line,
                  "  %-44s %8.3f ms CPU per image, %+.3f ms (%+.0f%%) over the preset alone\n",
                  "the pipeline", 1e3 * pipeline_cpu_per_image,
                  1e3 * (pipeline_cpu_per_image - alone),
                  100 * (pipeline_cpu_per_image - alone) / alone);
    table += line;
  }
  return table;
}

}  // namespace imgpipe
