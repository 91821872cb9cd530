#include "image/image_format.h"

#include <gtest/gtest.h>

#include <string>

#include "image/image_test_util.h"
#include "util/file.h"

namespace imgpipe {
namespace {

using namespace std::string_literals;

TEST(ImageFormatTest, DetectsEachSignature) {
  EXPECT_EQ(DetectImageFormat("\xFF\xD8\xFF\xE0\x00\x10JFIF"s), ImageFormat::kJpeg);
  EXPECT_EQ(DetectImageFormat("\x89PNG\r\n\x1A\n\0\0\0\x0DIHDR"s), ImageFormat::kPng);
  EXPECT_EQ(DetectImageFormat("II*\0\x08\0\0\0"s), ImageFormat::kTiff);
  EXPECT_EQ(DetectImageFormat("MM\0*\0\0\0\x08"s), ImageFormat::kTiff);
  EXPECT_EQ(DetectImageFormat("GIF87a\x01\0\x01\0"s), ImageFormat::kGif);
  EXPECT_EQ(DetectImageFormat("GIF89a\x01\0\x01\0"s), ImageFormat::kGif);
  EXPECT_EQ(DetectImageFormat("RIFF\x24\0\0\0WEBPVP8 "s), ImageFormat::kWebp);
  EXPECT_EQ(DetectImageFormat("\xFF\x4F\xFF\x51\0\x29"s), ImageFormat::kJpeg2000);
  EXPECT_EQ(DetectImageFormat("\0\0\0\x0CjP  \r\n\x87\n"s), ImageFormat::kJpeg2000);
  // BMP: "BM", file size, reserved, pixel offset, then the DIB header size (40).
  EXPECT_EQ(DetectImageFormat("BM\x36\0\0\0\0\0\0\0\x36\0\0\0\x28\0\0\0"s), ImageFormat::kBmp);
  for (char kind = '1'; kind <= '7'; ++kind) {
    EXPECT_EQ(DetectImageFormat("P"s + kind + "\n2 2\n255\n"), ImageFormat::kPnm) << kind;
  }
}

TEST(ImageFormatTest, RejectsNearMisses) {
  EXPECT_EQ(DetectImageFormat(""), ImageFormat::kUnknown);
  EXPECT_EQ(DetectImageFormat("\xFF\xD8"s), ImageFormat::kUnknown);  // too short for JPEG
  EXPECT_EQ(DetectImageFormat("\x89PNG\r\n"s), ImageFormat::kUnknown);
  EXPECT_EQ(DetectImageFormat("RIFF\x24\0\0\0WAVEfmt "s), ImageFormat::kUnknown);
  EXPECT_EQ(DetectImageFormat("BMW is a car, not a bitmap"), ImageFormat::kUnknown);
  EXPECT_EQ(DetectImageFormat("P8\n"), ImageFormat::kUnknown);
  EXPECT_EQ(DetectImageFormat("Photo of a cat"), ImageFormat::kUnknown);
  EXPECT_EQ(DetectImageFormat("GIF90a"), ImageFormat::kUnknown);
  EXPECT_EQ(DetectImageFormat("<html>"), ImageFormat::kUnknown);
}

TEST(ImageFormatTest, NamesAreLowerCase) {
  EXPECT_STREQ(ImageFormatName(ImageFormat::kJpeg), "jpeg");
  EXPECT_STREQ(ImageFormatName(ImageFormat::kPng), "png");
  EXPECT_STREQ(ImageFormatName(ImageFormat::kBmp), "bmp");
  EXPECT_STREQ(ImageFormatName(ImageFormat::kTiff), "tiff");
  EXPECT_STREQ(ImageFormatName(ImageFormat::kPnm), "pnm");
  EXPECT_STREQ(ImageFormatName(ImageFormat::kGif), "gif");
  EXPECT_STREQ(ImageFormatName(ImageFormat::kWebp), "webp");
  EXPECT_STREQ(ImageFormatName(ImageFormat::kJpeg2000), "jpeg2000");
  EXPECT_STREQ(ImageFormatName(ImageFormat::kUnknown), "unknown");
}

// Files named .jpeg that are something else: told apart by content, never by name.
TEST(ImageFormatTest, DetectsMisnamedFilesByContent) {
  const std::string dir = "bad-images/misnamed/jpeg/0/";
  const std::pair<const char*, ImageFormat> expected[] = {
      {"bmp.jpeg", ImageFormat::kBmp}, {"png.jpeg", ImageFormat::kPng},
      {"tiff.jpeg", ImageFormat::kTiff}, {"pbm.jpeg", ImageFormat::kPnm},
      {"pgm.jpeg", ImageFormat::kPnm}, {"ppm.jpeg", ImageFormat::kPnm},
      {"pnm.jpeg", ImageFormat::kPnm}};
  ASSERT_EQ(ListDirectory(TestDataPath(dir)).size(), std::size(expected));
  for (const auto& [name, format] : expected) {
    EXPECT_EQ(DetectImageFormat(ReadFile(TestDataPath(dir + name))), format) << name;
  }
}

// Every file of the mixed-formats folder is detected as what its extension says.
TEST(ImageFormatTest, DetectsMixedFormatsFolder) {
  int count = 0;
  for (const std::string& dir : ListDirectory(TestDataPath("images/mixed-formats"))) {
    if (!IsDirectory(TestDataPath("images/mixed-formats/" + dir))) continue;
    for (const std::string& path : ImageFilesIn("images/mixed-formats/" + dir)) {
      std::string ext = path.substr(path.rfind('.') + 1);
      ImageFormat expected = ext == "jpg"                   ? ImageFormat::kJpeg
                             : ext == "png"                 ? ImageFormat::kPng
                             : ext == "tiff"                ? ImageFormat::kTiff
                             : ext == "jp2"                 ? ImageFormat::kJpeg2000
                             : ext.size() == 3 && ext[0] == 'p' ? ImageFormat::kPnm
                                                            : ImageFormat::kUnknown;
      EXPECT_EQ(DetectImageFormat(ReadFile(path)), expected) << path;
      ++count;
    }
  }
  EXPECT_GT(count, 80);
}

}  // namespace
}  // namespace imgpipe
