// TIFF and BMP variants (pil_tiff_bmp.py writes them) decode to exactly Pillow's
// Image.open(path).convert("RGB"), TIFF orientations 1-8 included.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "image/codec.h"
#include "image/pil_test_util.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe {
namespace {

// Runs pil_tiff_bmp.py into a fresh folder; returns the folder.
std::string WriteVariants() {
  const std::string dir = TestDir("tiff_bmp");
  const std::string command =
      "cd " + IMGPIPE_SOURCE_DIR + "/src/image && /usr/bin/python3 pil_tiff_bmp.py " + dir;
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return dir;
}

class TiffBmpTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { dir_ = new std::string(WriteVariants()); }
  static void TearDownTestSuite() { delete dir_; }
  static std::string* dir_;
};
std::string* TiffBmpTest::dir_ = nullptr;

// Orientation 1-8: Pillow and OpenCV apply the tag when they decode (5-8 swap width
// and height); imgpipe gives that, as it applies a JPEG's EXIF orientation.
// Among them the cases where a plain decode's pixels differ from Pillow's: unassociated
// alpha and float gray TIFFs (tiff_decoder.h), 16-bit BMPs (opencv_decoder.h).
TEST_F(TiffBmpTest, TiffOrientationsDecodeAsPillowDoes) {
  ExpectPillowsPixels(*dir_, "orient-", ".tif");
}

TEST_F(TiffBmpTest, TiffVariantsDecodeAsPillowDoes) { ExpectPillowsPixels(*dir_, "tiff-", ".tif"); }

TEST_F(TiffBmpTest, BmpVariantsDecodeAsPillowDoes) { ExpectPillowsPixels(*dir_, "bmp-", ".bmp"); }

}  // namespace
}  // namespace imgpipe
