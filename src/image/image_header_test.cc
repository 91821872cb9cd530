#include "image/image_header.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <string>

#include "util/error.h"

namespace imgpipe {
namespace {

using namespace std::string_literals;

std::string Be32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}
std::string Be16(uint32_t v) { return {static_cast<char>(v >> 8), static_cast<char>(v)}; }
std::string Le32(uint32_t v) {
  return {static_cast<char>(v), static_cast<char>(v >> 8), static_cast<char>(v >> 16),
          static_cast<char>(v >> 24)};
}
std::string Le16(uint32_t v) { return {static_cast<char>(v), static_cast<char>(v >> 8)}; }

// A PNG signature and IHDR chunk with a CRC computed by zlib.
std::string PngHeader(uint32_t width, uint32_t height, int depth, int color_type) {
  std::string chunk = "IHDR" + Be32(width) + Be32(height) + static_cast<char>(depth) +
                      static_cast<char>(color_type) + "\0\0\0"s;
  uint32_t crc = crc32(0, reinterpret_cast<const Bytef*>(chunk.data()), chunk.size());
  return "\x89PNG\r\n\x1A\n"s + Be32(13) + chunk + Be32(crc);
}

std::string Reason(ImageFormat format, const std::string& bytes) {
  try {
    ParseImageHeader(format, bytes, "x.img");
  } catch (const DataError& e) {
    EXPECT_EQ(e.path(), "x.img");
    return e.reason();
  }
  return "(no error)";
}

void ExpectInfo(const ImageInfo& info, int width, int height, int channels,
                const std::string& colorspace) {
  EXPECT_EQ(info.width, width);
  EXPECT_EQ(info.height, height);
  EXPECT_EQ(info.channels, channels);
  EXPECT_EQ(info.colorspace, colorspace);
  EXPECT_EQ(info.orientation, 1);
}

TEST(ImageHeaderTest, Png) {
  ExpectInfo(ParseImageHeader(ImageFormat::kPng, PngHeader(640, 480, 8, 2), "a"), 640, 480, 3,
             "RGB");
  ExpectInfo(ParseImageHeader(ImageFormat::kPng, PngHeader(7, 5, 16, 0), "a"), 7, 5, 1,
             "Grayscale");
  ExpectInfo(ParseImageHeader(ImageFormat::kPng, PngHeader(7, 5, 8, 4), "a"), 7, 5, 2,
             "Grayscale");
  ExpectInfo(ParseImageHeader(ImageFormat::kPng, PngHeader(7, 5, 8, 6), "a"), 7, 5, 4, "RGB");
  ExpectInfo(ParseImageHeader(ImageFormat::kPng, PngHeader(7, 5, 4, 3), "a"), 7, 5, 3, "RGB");

  std::string bad_crc = PngHeader(640, 480, 8, 2);
  bad_crc[20] ^= 1;
  EXPECT_EQ(Reason(ImageFormat::kPng, bad_crc), "invalid PNG: IHDR CRC mismatch");
  EXPECT_EQ(Reason(ImageFormat::kPng, PngHeader(640, 480, 16, 3)),
            "invalid PNG: bit depth 16 with colour type 3");
  EXPECT_EQ(Reason(ImageFormat::kPng, PngHeader(0, 480, 8, 2)), "invalid png dimensions 0x480");
  EXPECT_EQ(Reason(ImageFormat::kPng, PngHeader(640, 480, 8, 2).substr(0, 20)),
            "truncated PNG header");
}

TEST(ImageHeaderTest, Bmp) {
  // BITMAPINFOHEADER, bottom-up and top-down (negative height).
  std::string info = "BM"s + Le32(0) + Le32(0) + Le32(54) + Le32(40) + Le32(33) + Le32(21) +
                     Le16(1) + Le16(24) + Le32(0);
  ExpectInfo(ParseImageHeader(ImageFormat::kBmp, info, "a"), 33, 21, 3, "RGB");
  std::string top_down = "BM"s + Le32(0) + Le32(0) + Le32(54) + Le32(40) + Le32(33) +
                         Le32(static_cast<uint32_t>(-21)) + Le16(1) + Le16(32) + Le32(3);
  ExpectInfo(ParseImageHeader(ImageFormat::kBmp, top_down, "a"), 33, 21, 4, "RGB");
  // OS/2 BITMAPCOREHEADER with 16-bit sizes.
  std::string core = "BM"s + Le32(0) + Le32(0) + Le32(26) + Le32(12) + Le16(5) + Le16(6) +
                     Le16(1) + Le16(8);
  ExpectInfo(ParseImageHeader(ImageFormat::kBmp, core, "a"), 5, 6, 3, "RGB");
  std::string png_inside = "BM"s + Le32(0) + Le32(0) + Le32(54) + Le32(40) + Le32(33) +
                           Le32(21) + Le16(1) + Le16(24) + Le32(5);
  EXPECT_EQ(Reason(ImageFormat::kBmp, png_inside), "unsupported BMP: compression 5");
  std::string bad_bits = "BM"s + Le32(0) + Le32(0) + Le32(54) + Le32(40) + Le32(33) + Le32(21) +
                         Le16(1) + Le16(7) + Le32(0);
  EXPECT_EQ(Reason(ImageFormat::kBmp, bad_bits), "invalid BMP: 7 bits per pixel");
}

TEST(ImageHeaderTest, Pnm) {
  ExpectInfo(ParseImageHeader(ImageFormat::kPnm, "P6\n# made by hand\n640 480\n255\n", "a"),
             640, 480, 3, "RGB");
  ExpectInfo(ParseImageHeader(ImageFormat::kPnm, "P5 3#c\n 4 65535 ", "a"), 3, 4, 1,
             "Grayscale");
  ExpectInfo(ParseImageHeader(ImageFormat::kPnm, "P4\n9 2\n\xFF\x80"s, "a"), 9, 2, 1,
             "Grayscale");
  ExpectInfo(ParseImageHeader(ImageFormat::kPnm, "P3\n2 2 255\n0 0 0", "a"), 2, 2, 3, "RGB");
  ExpectInfo(ParseImageHeader(ImageFormat::kPnm,
                              "P7\nWIDTH 4\nHEIGHT 2\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\n"
                              "ENDHDR\n",
                              "a"),
             4, 2, 4, "RGB");
  EXPECT_EQ(Reason(ImageFormat::kPnm, "P6\n640"), "truncated PNM header");
  EXPECT_EQ(Reason(ImageFormat::kPnm, "P6\n640 -5 255\n"), "invalid PNM header: bad height '-5'");
  EXPECT_EQ(Reason(ImageFormat::kPnm, "P6\n640 5 70000\n"), "invalid PNM header: maxval 70000");
  EXPECT_EQ(Reason(ImageFormat::kPnm, "P6\n0 5 255\n"), "invalid pnm dimensions 0x5");
  EXPECT_EQ(Reason(ImageFormat::kPnm, "P7\nWIDTH 4\nHEIGHT 2\nDEPTH 5\nMAXVAL 255\nENDHDR\n"),
            "unsupported PAM: depth 5");
}

TEST(ImageHeaderTest, Gif) {
  ExpectInfo(ParseImageHeader(ImageFormat::kGif, "GIF89a"s + Le16(300) + Le16(200) + "\0\0\0"s,
                              "a"),
             300, 200, 3, "RGB");
  EXPECT_EQ(Reason(ImageFormat::kGif, "GIF89a\x01"s), "truncated GIF header");
}

std::string TiffEntry(bool be, uint16_t tag, uint16_t type, uint32_t value) {
  std::string value_field = type == 3 ? (be ? Be16(value) + "\0\0"s : Le16(value) + "\0\0"s)
                                      : (be ? Be32(value) : Le32(value));
  return (be ? Be16(tag) + Be16(type) + Be32(1) : Le16(tag) + Le16(type) + Le32(1)) +
         value_field;
}

// TIFF and BigTIFF headers are read by libtiff (tiff_decoder.h; its tests write whole
// files): here, that ParseImageHeader routes them there.
TEST(ImageHeaderTest, Tiff) {
  for (bool be : {false, true}) {
    // IFD0 with 6 entries at 8, no pixel data (a header read does not reach it).
    std::string tiff = (be ? "MM\0*"s + Be32(8) + Be16(6) : "II*\0"s + Le32(8) + Le16(6)) +
                       TiffEntry(be, 256, 4, 70000) + TiffEntry(be, 257, 3, 300) +
                       TiffEntry(be, 258, 3, 8) + TiffEntry(be, 262, 3, 5) +
                       TiffEntry(be, 273, 4, 8) + TiffEntry(be, 277, 3, 4) +
                       (be ? Be32(0) : Le32(0));
    ExpectInfo(ParseImageHeader(ImageFormat::kTiff, tiff, "a"), 70000, 300, 4, "CMYK");
  }
  EXPECT_TRUE(Reason(ImageFormat::kTiff, "II*\0"s + Le32(8) + Le16(1) + TiffEntry(false, 256, 3, 9))
                  .starts_with("invalid TIFF: "));
  EXPECT_TRUE(Reason(ImageFormat::kTiff, "II*\0"s + Le32(4000)).starts_with("invalid TIFF: "));
}

TEST(ImageHeaderTest, WebpChunks) {
  std::string riff = "RIFF"s + Le32(100) + "WEBP";
  std::string lossy = riff + "VP8 " + Le32(80) + "\x10\x02\x00\x9D\x01\x2A"s + Le16(320) +
                      Le16(0xC000 | 240);  // top bits are the scale, not the size
  ExpectInfo(ParseImageHeader(ImageFormat::kWebp, lossy, "a"), 320, 240, 3, "RGB");
  uint32_t bits = (320 - 1) | (240 - 1) << 14 | 1u << 28;
  std::string lossless = riff + "VP8L" + Le32(80) + "\x2F"s + Le32(bits) + "\0\0\0\0\0"s;
  ExpectInfo(ParseImageHeader(ImageFormat::kWebp, lossless, "a"), 320, 240, 4, "RGB");
  std::string extended = riff + "VP8X" + Le32(10) + "\x10\0\0\0"s + Le32(99999).substr(0, 3) +
                         Le32(4).substr(0, 3);
  ExpectInfo(ParseImageHeader(ImageFormat::kWebp, extended, "a"), 100000, 5, 4, "RGB");
  std::string animated = riff + "VP8X" + Le32(10) + "\x02\0\0\0"s + Le32(9).substr(0, 3) +
                         Le32(9).substr(0, 3);
  // Animated: the canvas size (its first frame is decoded: webp_anim_decoder.h).
  ExpectInfo(ParseImageHeader(ImageFormat::kWebp, animated, "a"), 10, 10, 3, "RGB");
}

TEST(ImageHeaderTest, Jpeg2000CodestreamAndBoxes) {
  std::string siz = "\xFF\x4F\xFF\x51"s + Be16(47) + Be16(0) + Be32(110) + Be32(60) + Be32(10) +
                    Be32(0) + Be32(64) + Be32(64) + Be32(0) + Be32(0) + Be16(3);
  ExpectInfo(ParseImageHeader(ImageFormat::kJpeg2000, siz, "a"), 100, 60, 3, "RGB");
  std::string ihdr = Be32(22) + "ihdr" + Be32(60) + Be32(100) + Be16(1) + "\x07\x07\0\0"s;
  std::string jp2 = Be32(12) + "jP  \r\n\x87\n"s + Be32(20) + "ftypjp2 " + Be32(0) + "jp2 " +
                    Be32(8 + ihdr.size()) + "jp2h" + ihdr;
  ExpectInfo(ParseImageHeader(ImageFormat::kJpeg2000, jp2, "a"), 100, 60, 1, "Grayscale");
  std::string no_header = Be32(12) + "jP  \r\n\x87\n"s + Be32(20) + "ftypjp2 " + Be32(0) + "jp2 ";
  EXPECT_EQ(Reason(ImageFormat::kJpeg2000, no_header), "invalid JPEG 2000: no image header box");
  std::string bad_box = Be32(12) + "jP  \r\n\x87\n"s + Be32(4) + "ftyp";
  EXPECT_EQ(Reason(ImageFormat::kJpeg2000, bad_box), "invalid JPEG 2000: bad box length");
}

// Headers written by real encoders (OpenCV's libpng, libtiff, libwebp, OpenJPEG).
TEST(ImageHeaderTest, AgreesWithRealEncoders) {
  cv::Mat bgr(37, 53, CV_8UC3, cv::Scalar(10, 20, 30));
  const std::pair<const char*, ImageFormat> cases[] = {
      {".png", ImageFormat::kPng}, {".bmp", ImageFormat::kBmp}, {".tiff", ImageFormat::kTiff},
      {".ppm", ImageFormat::kPnm}, {".pam", ImageFormat::kPnm}, {".webp", ImageFormat::kWebp},
      {".jp2", ImageFormat::kJpeg2000}};
  for (const auto& [ext, format] : cases) {
    std::vector<uint8_t> encoded;
    ASSERT_TRUE(cv::imencode(ext, bgr, encoded)) << ext;
    std::string bytes(encoded.begin(), encoded.end());
    ASSERT_EQ(DetectImageFormat(bytes), format) << ext;
    ImageInfo info = ParseImageHeader(format, bytes, ext);
    EXPECT_EQ(info.format, format) << ext;
    EXPECT_EQ(info.width, 53) << ext;
    EXPECT_EQ(info.height, 37) << ext;
    EXPECT_EQ(info.channels, 3) << ext;
  }
  std::vector<uint8_t> lossless;
  ASSERT_TRUE(cv::imencode(".webp", bgr, lossless, {cv::IMWRITE_WEBP_QUALITY, 101}));
  ImageInfo info = ParseImageHeader(ImageFormat::kWebp, std::string(lossless.begin(), lossless.end()), "l");
  EXPECT_EQ(info.width, 53);
  EXPECT_EQ(info.height, 37);
}

}  // namespace
}  // namespace imgpipe
