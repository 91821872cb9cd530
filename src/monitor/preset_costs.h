// Where one image's time goes in the train or eval preset: entropy decoding, the rest of
// the decode (IDCT, upsampling, colour conversion), the header and crop window, resize,
// the output step (jitter, flip, normalise) and the train preset's policy and random
// erasing, each measured on the preset's real steps (same window, same DCT scale) over
// encoded images held in memory, on one thread; and the pipeline's own overhead beside
// them. Throws what the presets throw.
#pragma once

#include <string>
#include <vector>

#include "image/presets.h"
#include "monitor/pipeline_bench.h"
#include "pipeline/data_source.h"

namespace imgpipe {

// Mean CPU seconds (of the measuring thread) per image of each part; the medians of
// `rounds` rounds, a pass over the images each.
struct PresetCosts {
  size_t images = 0;
  int rounds = 0;
  double entropy = 0;      // Huffman decoding of what the JPEG region decode reads
                           // (EntropyDecodeJpeg: its rows, skipped, not IDCT'd)
  double idct_color = 0;   // the JPEG region decode minus `entropy` (IDCT, upsampling,
                           // colour conversion, and the window copy)
  double whole_decode = 0; // decodes of whole images (other formats; region decode off)
  double window = 0;       // header read and the crop window's geometry
  double resize = 0;
  double output = 0;       // jitter, flip, normalise / lay out
  double augment = 0;      // the train preset's policy and random erasing
  double measured = 0;     // the preset call itself, timed alone in the same rounds

  // The parts added up.
  double Sum() const;
};

// Measures the parts of the train (or eval) preset on `encoded_images` (each image once
// a round, after one untimed round; seed i for image i). Throws Error if there are no images or rounds < 1.
PresetCosts MeasureTrainPresetCosts(const std::vector<std::string>& encoded_images,
                                    const TrainPreset& preset, int rounds);
PresetCosts MeasureEvalPresetCosts(const std::vector<std::string>& encoded_images,
                                   const EvalPreset& preset, int rounds);

// Up to `max_images` encoded images of `source`: the first records of its TFRecord
// files, or files of its image folder spread evenly over the sorted list.
std::vector<std::string> SampleEncodedImages(const pipeline::DataSource& source,
                                             size_t max_images);

// CPU seconds the pipeline of `result` spent per image (all its threads).
double PipelineCpuPerImage(const BenchResult& result);

// A text table of `costs` (ms per image and share of the sum) and, when
// pipeline_cpu_per_image > 0, the pipeline's overhead: its CPU time per image minus
// the preset's timed alone (the sum of the parts carries the timing's own costs).
std::string PresetCostsTable(const PresetCosts& costs, double pipeline_cpu_per_image);

}  // namespace imgpipe
