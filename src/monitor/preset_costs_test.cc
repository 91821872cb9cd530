#include "monitor/preset_costs.h"

#include <gtest/gtest.h>

#include "image/image_test_util.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe {
namespace {

std::vector<std::string> Read(const std::vector<std::string>& paths) {
  std::vector<std::string> bytes;
  for (const std::string& path : paths) bytes.push_back(ReadFile(path));
  return bytes;
}

// Every part of a region-decoded JPEG's cost is there (the split of the decode into
// entropy decoding and the rest is a difference of two timings, so only their sum, the
// decode, is surely positive; how the parts compare is for the benchmark, not a test);
// whole decodes (region decode off) have no entropy/IDCT split.
TEST(PresetCostsTest, TrainPartsArePositiveAndSumToTheWhole) {
  std::vector<std::string> paths = ImageFilesIn("images/hymenoptera/val/bees");
  paths.resize(12);
  const std::vector<std::string> images = Read(paths);
  const PresetCosts costs = MeasureTrainPresetCosts(images, TrainPreset{}, 3);
  EXPECT_EQ(costs.images, 12u);
  EXPECT_GT(costs.entropy, 0);
  EXPECT_GT(costs.entropy + costs.idct_color, 0);
  EXPECT_EQ(costs.whole_decode, 0);
  EXPECT_GT(costs.window, 0);
  EXPECT_GT(costs.resize, 0);
  EXPECT_GT(costs.output, 0);
  EXPECT_GT(costs.measured, 0);
  const std::string table = PresetCostsTable(costs, 2 * costs.Sum());
  EXPECT_NE(table.find("entropy decoding"), std::string::npos);
  EXPECT_NE(table.find("the pipeline"), std::string::npos);

  TrainPreset whole;
  whole.use_region_decode = false;
  const PresetCosts full = MeasureTrainPresetCosts(images, whole, 1);
  EXPECT_EQ(full.entropy, 0);
  EXPECT_EQ(full.idct_color, 0);
  EXPECT_GT(full.whole_decode, 0);
}

// A GIF and PNGs (no JPEG region decode) beside JPEGs: their decode counts as whole, the
// JPEGs' still split; the eval preset's parts too.
TEST(PresetCostsTest, NonJpegImagesAndTheEvalPreset) {
  std::vector<std::string> paths = {
      TestDataPath("images/hymenoptera/train/ants/imageNotFound.gif"),
      TestDataPath("images/mixed-formats/2/cat-3504008_640.png")};
  for (const std::string& p : ImageFilesIn("images/photos-by-class/100")) paths.push_back(p);
  const std::vector<std::string> images = Read(paths);
  for (const PresetCosts& costs : {MeasureTrainPresetCosts(images, TrainPreset{}, 3),
                                   MeasureEvalPresetCosts(images, EvalPreset{}, 3)}) {
    EXPECT_GT(costs.whole_decode, 0);
    EXPECT_GT(costs.entropy, 0);
    EXPECT_GT(costs.entropy + costs.idct_color, 0);
    EXPECT_GT(costs.resize, 0);
    EXPECT_GT(costs.measured, 0);
  }
  EXPECT_THROW(MeasureTrainPresetCosts({}, TrainPreset{}, 1), Error);
  EXPECT_THROW(MeasureTrainPresetCosts({"not an image"}, TrainPreset{}, 1), DataError);
}

}  // namespace
}  // namespace imgpipe
