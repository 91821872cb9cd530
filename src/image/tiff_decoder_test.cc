// TIFFs of every layout Pillow 9.4 reads (pil_tiff_layouts.py writes them, by hand and
// with libtiff's tiffcp) decode to Pillow's pixels; bad ones throw DataError naming the
// file, on many threads at once.
#include "image/tiff_decoder.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "image/byte_order.h"
#include "image/image_format.h"
#include "image/pil_test_util.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe {
namespace {

class TiffDecoderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(TestDir("tiff_layouts"));
    const std::string command = "cd " + IMGPIPE_SOURCE_DIR +
                                "/src/image && /usr/bin/python3 pil_tiff_layouts.py " + *dir_;
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string Read(const std::string& name) { return ReadFile(JoinPath(*dir_, name)); }
  static std::string* dir_;
};
std::string* TiffDecoderTest::dir_ = nullptr;

// `tiff` (little-endian, IFD0 at 8, as pil_tiff_layouts.py writes) with the SHORT value
// of `tag` set to `value`.
std::string WithShortTag(std::string tiff, uint16_t tag, uint16_t value) {
  const uint32_t count = LoadU16(tiff, 8, false);
  for (uint32_t i = 0; i < count; ++i) {
    const size_t at = 10 + 12 * i;
    if (LoadU16(tiff, at, false) == tag) {
      tiff[at + 8] = static_cast<char>(value & 0xFF);
      tiff[at + 9] = static_cast<char>(value >> 8);
      return tiff;
    }
  }
  ADD_FAILURE() << "no tag " << tag;
  return tiff;
}

// Every layout: 1/2/4/8-bit gray in both photometrics and fill orders, 12/16/32-bit
// integer and 32-bit float gray, 2/4/8-bit palette, RGB, RGBA (both alphas), CMYK at 8
// and 16 bits, separate planes, JPEG (YCbCr, RGB, gray, CMYK), LZW, Deflate,
// PackBits, tiles, BigTIFF, YCbCr through libtiff's RGBA interface, orientations.
TEST_F(TiffDecoderTest, EveryLayoutDecodesAsPillowDoes) {
  ExpectPillowsPixels(*dir_, "layout-", ".tif");
}

// Big-endian BigTIFF, which Pillow 9.4 does not identify, decodes to the pixels of the
// classic TIFF it was copied from.
TEST_F(TiffDecoderTest, BigTiffIsATiff) {
  const std::string big = Read("bigtiff-be-rgb16.tif");
  ASSERT_EQ(big.substr(0, 4), std::string("MM\0+", 4));
  EXPECT_EQ(DetectImageFormat(big), ImageFormat::kTiff);
  EXPECT_TRUE(SameImage(DecodeTiff(big, "a.tif", UINT64_MAX),
                        DecodeTiff(Read("layout-rgb16-be.tif"), "b.tif", UINT64_MAX)));
  const ImageInfo info = ReadTiffInfo(Read("layout-cmyk8-bigtiff.tif"), "a.tif");
  EXPECT_EQ(info.width, 37);
  EXPECT_EQ(info.height, 23);
  EXPECT_EQ(info.channels, 4);
  EXPECT_EQ(info.colorspace, "CMYK");
}

TEST_F(TiffDecoderTest, OrientationIsInTheInfoAndApplied) {
  const std::string bytes = Read("layout-gray4-pm0-fill1-orient6.tif");
  const ImageInfo info = ReadTiffInfo(bytes, "a.tif");
  EXPECT_EQ(info.orientation, 6);
  EXPECT_EQ(info.colorspace, "Grayscale");
  const Image image = DecodeTiff(bytes, "a.tif", UINT64_MAX);
  EXPECT_EQ(image.width, 23);
  EXPECT_EQ(image.height, 37);
}

TEST_F(TiffDecoderTest, PixelBudgetIsCheckedBeforeDecoding) {
  const std::string bytes = Read("layout-rgb8-lzw-fill2.tif");
  EXPECT_NO_THROW(DecodeTiff(bytes, "a.tif", 37 * 23));
  try {
    DecodeTiff(bytes, "a.tif", 37 * 23 - 1);
    ADD_FAILURE() << "decoded over budget";
  } catch (const DataError& e) {
    EXPECT_EQ(e.path(), "a.tif");
    EXPECT_NE(std::string(e.what()).find("image too large"), std::string::npos) << e.what();
  }
}

// Bad data: an error naming the file and libtiff's reason, never pixels.
TEST_F(TiffDecoderTest, BadFilesThrowDataErrorNamingThem) {
  const std::string rgb = Read("layout-rgb8.tif");
  struct Case {
    std::string bytes, reason;
  };
  std::string lzw = Read("layout-rgb16-lzw.tif");
  for (size_t i = lzw.size() / 3; i < lzw.size() / 2; ++i) lzw[i] = static_cast<char>(0xFF);
  const std::vector<Case> cases = {
      {rgb.substr(0, rgb.size() - 100), "corrupt or truncated TIFF strip"},
      {rgb.substr(0, 6), "invalid TIFF"},
      {WithShortTag(rgb, 262, 8), "unsupported TIFF: photometric 8"},
      {WithShortTag(Read("layout-gray8-pm1-fill1.tif"), 258, 24), "unsupported TIFF: 24-bit samples"},
      {WithShortTag(rgb, 259, 5), "corrupt or truncated TIFF strip"},  // claims LZW
      {lzw, "TIFF"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.reason);
    try {
      DecodeTiff(c.bytes, "bad.tif", UINT64_MAX);
      ADD_FAILURE() << "decoded";
    } catch (const DataError& e) {
      EXPECT_EQ(e.path(), "bad.tif");
      EXPECT_NE(std::string(e.what()).find(c.reason), std::string::npos) << e.what();
    }
  }
}

// libtiff's messages go to the file whose decode raised them, with decodes on many
// threads at once.
TEST_F(TiffDecoderTest, ThreadsKeepTheirOwnErrors) {
  const std::string good = Read("layout-cmyk16-lzw.tif");
  const std::string bad = good.substr(0, good.size() / 2);
  const Image expected = DecodeTiff(good, "good.tif", UINT64_MAX);
  std::vector<std::thread> threads;
  std::vector<int> failures(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 30; ++i) {
        const std::string name = "t" + std::to_string(t) + ".tif";
        try {
          if (t % 2 == 0) {
            failures[t] += DecodeTiff(good, name, UINT64_MAX).pixels != expected.pixels;
          } else {
            DecodeTiff(bad, name, UINT64_MAX);
            failures[t] += 1;
          }
        } catch (const DataError& e) {
          failures[t] += t % 2 == 0 || e.path() != name;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

}  // namespace
}  // namespace imgpipe
