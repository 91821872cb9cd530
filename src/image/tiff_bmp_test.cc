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

// The variants in `dir` whose names start with `prefix`.
std::vector<std::string> VariantsIn(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> names;
  for (const std::string& name : ListDirectory(dir)) {
    if (name.starts_with(prefix) && (name.ends_with(".tif") || name.ends_with(".bmp"))) {
      names.push_back(name);
    }
  }
  return names;
}

// Each variant `prefix`* of `dir` that Pillow decodes, DecodeImage decodes to Pillow's
// pixels (max difference 0: all are lossless, or JPEG-in-TIFF through the same libjpeg)
// and, in gray, to one channel of the same size. Among them the cases where OpenCV's
// pixels differ from Pillow's (opencv_decoder.h): unassociated alpha and float gray
// TIFFs, 16-bit BMPs. 16-bit gray is compared with Pillow's values' high byte, as
// imgpipe keeps it (pil_decode.py; docs/image-formats.md).
void ExpectPillowsPixels(const std::string& dir, const std::string& prefix) {
  const std::vector<std::string> names = VariantsIn(dir, prefix);
  ASSERT_FALSE(names.empty()) << prefix;
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const std::optional<Image> pil = ReadPillowDecode(dir, name);
    ASSERT_TRUE(pil) << "Pillow refused it";
    const std::string bytes = ReadFile(JoinPath(dir, name));
    try {
      const Image image = DecodeImage(bytes, name);
      EXPECT_TRUE(SameImage(image, *pil));
      const ImageInfo info = ReadImageInfo(bytes, name);
      EXPECT_EQ(info.decoded_width(), pil->width);
      EXPECT_EQ(info.decoded_height(), pil->height);
      DecodeOptions gray;
      gray.channels = 1;
      const Image one = DecodeImage(bytes, name, gray);
      EXPECT_EQ(one.width, pil->width);
      EXPECT_EQ(one.height, pil->height);
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
    }
    // Cut short, it is refused, as Pillow refuses it ("image file is truncated").
    EXPECT_THROW(DecodeImage(bytes.substr(0, bytes.size() * 3 / 4), name), DataError);
  }
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
TEST_F(TiffBmpTest, TiffOrientationsDecodeAsPillowDoes) { ExpectPillowsPixels(*dir_, "orient-"); }

TEST_F(TiffBmpTest, TiffVariantsDecodeAsPillowDoes) { ExpectPillowsPixels(*dir_, "tiff-"); }

TEST_F(TiffBmpTest, BmpVariantsDecodeAsPillowDoes) { ExpectPillowsPixels(*dir_, "bmp-"); }

}  // namespace
}  // namespace imgpipe
