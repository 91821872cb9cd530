#include "image/image_format.h"

#include <gtest/gtest.h>

#include <string>

#include "image/codec.h"
#include "image/image_test_util.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe {
namespace {

using namespace std::string_literals;

TEST(ImageFormatTest, DetectsEachSignature) {
  EXPECT_EQ(DetectImageFormat("\xFF\xD8\xFF\xE0\x00\x10JFIF"s), ImageFormat::kJpeg);
  EXPECT_EQ(DetectImageFormat("\x89PNG\r\n\x1A\n\0\0\0\x0DIHDR"s), ImageFormat::kPng);
  EXPECT_EQ(DetectImageFormat("II*\0\x08\0\0\0"s), ImageFormat::kTiff);
  EXPECT_EQ(DetectImageFormat("MM\0*\0\0\0\x08"s), ImageFormat::kTiff);
  EXPECT_EQ(DetectImageFormat("II+\0\x08\0\0\0"s), ImageFormat::kTiff);  // BigTIFF
  EXPECT_EQ(DetectImageFormat("MM\0+\0\x08\0\0"s), ImageFormat::kTiff);
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

TEST(ImageFormatTest, DetectsTheFormatsOfFormatDecoders) {
  EXPECT_EQ(DetectImageFormat("\0\0\1\0\1\0"s + std::string(16, 'x')), ImageFormat::kIco);
  EXPECT_EQ(DetectImageFormat("\0\0\2\0\1\0"s + std::string(16, 'x')), ImageFormat::kIco);
  EXPECT_EQ(DetectImageFormat("\0\0\1\0\0\0"s + std::string(16, 'x')), ImageFormat::kUnknown);
  EXPECT_EQ(DetectImageFormat("8BPS\0\1"s), ImageFormat::kPsd);
  EXPECT_EQ(DetectImageFormat("\x0A\x05\x01\x08"s + std::string(124, '\0')), ImageFormat::kPcx);
  EXPECT_EQ(DetectImageFormat("\x01\xDA\x00\x01"s), ImageFormat::kSgi);
  EXPECT_EQ(DetectImageFormat("\x59\xA6\x6A\x95"s), ImageFormat::kSunRaster);
  EXPECT_EQ(DetectImageFormat("\n  #define x_width 1\n"), ImageFormat::kXbm);
  EXPECT_EQ(DetectImageFormat("\0\0\0\x18" "ftypheic\0\0\0\0mif1heic"s), ImageFormat::kHeif);
  EXPECT_EQ(DetectImageFormat("\0\0\0\x1C" "ftypavifZ\0\0\0avifmif1miaf"s), ImageFormat::kAvif);
  EXPECT_EQ(DetectImageFormat("\0\0\0\x18" "ftypisom\0\0\0\0isomiso2"s), ImageFormat::kUnknown);
  // TGA: 2x2, 24 bits, uncompressed, with its 12 bytes of pixels; one byte short is not.
  std::string tga = "\0\0\x02\0\0\0\0\0\0\0\0\0\x02\0\x02\0\x18\0"s + std::string(12, 'p');
  EXPECT_EQ(DetectImageFormat(tga), ImageFormat::kTga);
  EXPECT_EQ(DetectImageFormat(tga.substr(0, 29)), ImageFormat::kUnknown);
  std::string bad_type = tga;
  bad_type[2] = 4;
  EXPECT_EQ(DetectImageFormat(bad_type), ImageFormat::kUnknown);
}

TEST(ImageFormatTest, NamesFormatsItDoesNotDecode) {
  EXPECT_STREQ(UnsupportedImageFormatName("DDS |\0\0\0"s), "DDS texture");
  EXPECT_STREQ(UnsupportedImageFormatName("icns\0\0\x10\0"s), "Apple icon (ICNS)");
  EXPECT_STREQ(UnsupportedImageFormatName("BLP2\1"s), "Blizzard texture (BLP)");
  EXPECT_STREQ(UnsupportedImageFormatName("Image type: RGB image\r\n"), "IFUNC image (IM)");
  EXPECT_STREQ(UnsupportedImageFormatName("%!PS-Adobe-3.0 EPSF-3.0"), "Encapsulated PostScript (EPS)");
  EXPECT_STREQ(UnsupportedImageFormatName("qoif\0\0"s), "QOI");
  EXPECT_EQ(DetectImageFormat("P7 332\n#XVVERSION:Version 2.28"), ImageFormat::kUnknown);
  EXPECT_STREQ(UnsupportedImageFormatName("P7 332\n#XVVERSION:Version 2.28"), "XV thumbnail");
  std::string fli = "\0\0\0\0\x11\xAF\x01\0\x40\0\x40\0\x08\0"s + std::string(114, '\0');
  EXPECT_STREQ(UnsupportedImageFormatName(fli), "Autodesk animation (FLI)");
  EXPECT_EQ(UnsupportedImageFormatName(fli.substr(0, 64)), nullptr);
  EXPECT_EQ(UnsupportedImageFormatName("Photo of a cat"), nullptr);
  // DecodeImage's reason names them.
  try {
    DecodeImage("DDS |\0\0\0\x07\x10\0\0"s, "t.dds");
    ADD_FAILURE() << "no DataError";
  } catch (const DataError& e) {
    EXPECT_EQ(e.reason(), "not an image: DDS texture (unsupported)");
  }
}

}  // namespace
}  // namespace imgpipe
