#include "image/codec.h"

#include <gtest/gtest.h>
#include <turbojpeg.h>
#include <zlib.h>

#include <array>
#include <map>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <set>
#include <string>

#include "image/image_test_util.h"
#include "util/error.h"
#include "util/file.h"
#include "util/thread_pool.h"

namespace imgpipe {
namespace {

using namespace std::string_literals;

// The reason of the DataError that `fn` throws, after checking that what() names `path`.
template <typename Fn>
std::string ErrorReason(Fn fn, const std::string& path) {
  try {
    fn();
  } catch (const DataError& e) {
    EXPECT_EQ(e.path(), path);
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    return e.reason();
  }
  return "(no error)";
}

std::string DecodeReason(const std::string& bytes, const std::string& path,
                         const DecodeOptions& options = {}) {
  return ErrorReason([&] { DecodeImage(bytes, path, options); }, path);
}

std::string InfoReason(const std::string& bytes, const std::string& path,
                       uint64_t max_pixels = kDefaultMaxPixels) {
  return ErrorReason([&] { ReadImageInfo(bytes, path, max_pixels); }, path);
}

// Standard deviation of all samples: a decoder that fails silently gives flat grey.
double SampleStdDev(const Image& image) {
  double sum = 0, sum2 = 0;
  for (uint8_t v : image.pixels) {
    sum += v;
    sum2 += static_cast<double>(v) * v;
  }
  double n = static_cast<double>(image.pixels.size());
  return std::sqrt(std::max(0.0, sum2 / n - (sum / n) * (sum / n)));
}

// Pixel (x, y) of an RGB image is within `tolerance` of `rgb` in every channel.
void ExpectRgbNear(const Image& image, int x, int y, std::array<int, 3> rgb, int tolerance) {
  const uint8_t* p = image.row(y) + 3 * x;
  for (int c = 0; c < 3; ++c) {
    EXPECT_NEAR(p[c], rgb[c], tolerance) << "channel " << c << " at " << x << "," << y;
  }
}

// Decodes `path` in RGB and gray and checks both against its header.
void ExpectDecodesLikeHeader(const std::string& path) {
  SCOPED_TRACE(path);
  std::string bytes = ReadFile(path);
  ImageInfo info = ReadImageInfo(bytes, path);
  EXPECT_TRUE(info.colorspace == "RGB" || info.colorspace == "Grayscale") << info.colorspace;
  EXPECT_EQ(info.channels >= 3, info.colorspace == "RGB");
  for (int channels : {3, 1}) {
    DecodeOptions options;
    options.channels = channels;
    Image image = DecodeImage(bytes, path, options);
    EXPECT_EQ(image.width, info.decoded_width());
    EXPECT_EQ(image.height, info.decoded_height());
    EXPECT_EQ(image.channels, channels);
    ASSERT_EQ(image.pixels.size(), image.row_bytes() * image.height);
    EXPECT_GT(SampleStdDev(image), 10.0);
  }
}

// The image files of every subfolder of images/mixed-formats.
std::vector<std::string> MixedFormatFiles() {
  std::vector<std::string> paths;
  for (const std::string& dir : ListDirectory(TestDataPath("images/mixed-formats"))) {
    if (!IsDirectory(TestDataPath("images/mixed-formats/" + dir))) continue;
    for (const std::string& path : ImageFilesIn("images/mixed-formats/" + dir)) {
      paths.push_back(path);
    }
  }
  return paths;
}

TEST(CodecTest, MixedFormatsDecodeWithTheirHeaderSize) {
  std::map<ImageFormat, int> per_format;
  for (const std::string& path : MixedFormatFiles()) {
    ExpectDecodesLikeHeader(path);
    ++per_format[DetectImageFormat(ReadFile(path))];
  }
  for (ImageFormat format : {ImageFormat::kJpeg, ImageFormat::kPng, ImageFormat::kTiff,
                             ImageFormat::kPnm, ImageFormat::kJpeg2000}) {
    EXPECT_GT(per_format[format], 0) << ImageFormatName(format);
  }
}

// The folder's image_list.txt files ("0/410.jpg 0", or "410.jpg 0" in a subfolder)
// name only files that the test above decoded.
TEST(CodecTest, MixedFormatsListsNameExistingFiles) {
  std::vector<std::string> files = MixedFormatFiles();
  std::set<std::string> decoded(files.begin(), files.end());
  int entries = 0;
  for (const std::string& sub : {""s, "0"s, "1"s, "2"s, "3"s, "4"s, "5"s}) {
    std::string dir = JoinPath("images/mixed-formats", sub);
    std::string list = ReadFile(TestDataPath(JoinPath(dir, "image_list.txt")));
    size_t start = 0;
    while (start < list.size()) {
      size_t end = std::min(list.find('\n', start), list.size());
      std::string line = list.substr(start, end - start);
      start = end + 1;
      if (line.empty()) continue;
      std::string path = TestDataPath(JoinPath(dir, line.substr(0, line.find(' '))));
      EXPECT_TRUE(decoded.count(path)) << path;
      ++entries;
    }
  }
  EXPECT_GT(entries, 150);
}

// The same pictures stored losslessly as PNG, TIFF and PPM decode to the same pixels;
// JPEG 2000 (lossy) comes close.
TEST(CodecTest, LosslessFormatsAgree) {
  int compared = 0;
  for (const std::string& png : ImageFilesIn("images/mixed-formats/2")) {
    std::string stem = BaseName(png).substr(0, BaseName(png).size() - 4);
    Image reference = DecodeImage(ReadFile(png), png);
    for (const std::string& other : {"4/" + stem + ".tiff", "3/" + stem + ".ppm",
                                     "3/" + stem + ".pnm", "5/" + stem + ".jp2"}) {
      std::string path = TestDataPath("images/mixed-formats/" + other);
      if (!PathExists(path)) continue;
      SCOPED_TRACE(path);
      Image image = DecodeImage(ReadFile(path), path);
      if (image.width != reference.width || image.height != reference.height) continue;
      if (other.ends_with(".jp2")) {
        EXPECT_LT(MeanAbsDiff(image, reference), 3.0);
      } else {
        EXPECT_EQ(image.pixels, reference.pixels);
      }
      ++compared;
    }
  }
  EXPECT_GE(compared, 15);
}

TEST(CodecTest, PhotosByClassDecodeWithTheirHeaderSize) {
  int count = 0;
  for (const std::string& dir : ListDirectory(TestDataPath("images/photos-by-class"))) {
    if (!IsDirectory(TestDataPath("images/photos-by-class/" + dir))) continue;
    for (const std::string& path : ImageFilesIn("images/photos-by-class/" + dir)) {
      ExpectDecodesLikeHeader(path);
      EXPECT_EQ(ReadImageInfo(ReadFile(path), path).format, ImageFormat::kJpeg);
      ++count;
    }
  }
  EXPECT_EQ(count, 47);
}

// Every file of bad-images/ and what imgpipe makes of it.
TEST(CodecTest, BadImagesGiveSpecificReasons) {
  struct Expected {
    const char* file;
    const char* reason;  // nullptr: decodes
    ImageFormat format = ImageFormat::kUnknown;
    int width = 0, height = 0;
  };
  const Expected cases[] = {
      {"jpeg-lossless/0/cat-3449999_640_grayscale_8bit.jpg", "unsupported JPEG: lossless (SOF3)"},
      {"jpeg-lossless/0/cat-3449999_640_grayscale_12bit.jpg", "unsupported JPEG: lossless (SOF3)"},
      {"jpeg-lossless/0/cat-3449999_640_grayscale_16bit.jpg", "unsupported JPEG: lossless (SOF3)"},
      {"jpeg-lossless/0/cat-1245673_640_grayscale_16bit.jpg", "unsupported JPEG: lossless (SOF3)"},
      {"jpeg-lossless/0/cat-3504008_640_grayscale_16bit.jpg", "empty file"},
      {"monkey12.jpg", "unsupported JPEG: 12-bit samples"},
      // Arithmetic coding: Debian's libjpeg-turbo is built with it, and decodes it.
      {"testimgari.jpg", nullptr, ImageFormat::kJpeg, 227, 149},
      {"misnamed/jpeg/0/bmp.jpeg", nullptr, ImageFormat::kBmp, 640, 426},
      {"misnamed/jpeg/0/png.jpeg", nullptr, ImageFormat::kPng, 640, 426},
      {"misnamed/jpeg/0/tiff.jpeg", nullptr, ImageFormat::kTiff, 640, 475},
      {"misnamed/jpeg/0/pbm.jpeg", nullptr, ImageFormat::kPnm, 640, 398},
      {"misnamed/jpeg/0/pgm.jpeg", nullptr, ImageFormat::kPnm, 640, 423},
      {"misnamed/jpeg/0/ppm.jpeg", nullptr, ImageFormat::kPnm, 640, 426},
      {"misnamed/jpeg/0/pnm.jpeg", nullptr, ImageFormat::kPnm, 640, 475},
  };
  std::set<std::string> covered;
  for (const Expected& c : cases) {
    std::string path = TestDataPath(std::string("bad-images/") + c.file);
    SCOPED_TRACE(path);
    covered.insert(path);
    std::string bytes = ReadFile(path);
    if (c.reason != nullptr) {
      EXPECT_EQ(InfoReason(bytes, path), c.reason);
      EXPECT_EQ(DecodeReason(bytes, path), c.reason);
    } else {
      ImageInfo info = ReadImageInfo(bytes, path);
      EXPECT_EQ(info.format, c.format);
      EXPECT_EQ(info.width, c.width);
      EXPECT_EQ(info.height, c.height);
      ExpectDecodesLikeHeader(path);
    }
  }
  // Nothing in bad-images/ is left out of the table.
  std::vector<std::string> pending = {TestDataPath("bad-images")};
  while (!pending.empty()) {
    std::string dir = pending.back();
    pending.pop_back();
    for (const std::string& name : ListDirectory(dir)) {
      std::string path = JoinPath(dir, name);
      if (IsDirectory(path)) {
        pending.push_back(path);
      } else if (!name.starts_with("LICENSE")) {
        EXPECT_TRUE(covered.count(path)) << path << " has no expected outcome";
      }
    }
  }
}

// The arithmetic-coded test image is libjpeg-turbo's testorig.jpg recoded: a real
// picture, not a grey field, in colour.
TEST(CodecTest, ArithmeticCodedJpegDecodesInColour) {
  std::string path = TestDataPath("bad-images/testimgari.jpg");
  Image image = DecodeImage(ReadFile(path), path);
  double channel_gap = 0;
  for (size_t i = 0; i < image.pixels.size(); i += 3) {
    channel_gap += std::abs(image.pixels[i] - image.pixels[i + 2]);
  }
  EXPECT_GT(channel_gap / (image.pixels.size() / 3), 5.0);
}

TEST(CodecTest, TruncatedJpegIsRejectedByDecode) {
  std::string path = TestDataPath("images/photos-by-class/100/swan-3584559_640.jpg");
  std::string bytes = ReadFile(path);
  for (double fraction : {0.1, 0.5, 0.9, 0.999}) {
    std::string cut = bytes.substr(0, static_cast<size_t>(bytes.size() * fraction));
    SCOPED_TRACE(cut.size());
    ImageInfo info = ReadImageInfo(cut, "cut.jpg");  // the header is whole
    EXPECT_EQ(info.width, 640);
    EXPECT_EQ(DecodeReason(cut, "cut.jpg"), "truncated JPEG data (premature end of file)");
  }
  // Without its last two bytes (EOI) the image data is complete, but the file is not.
  std::string no_eoi = bytes.substr(0, bytes.size() - 2);
  EXPECT_EQ(DecodeReason(no_eoi, "cut.jpg"), "truncated JPEG data (premature end of file)");
  // Cut inside the header.
  EXPECT_EQ(InfoReason(bytes.substr(0, 300), "cut.jpg"),
            "truncated JPEG header (no frame before the end of data)");
  EXPECT_EQ(InfoReason(bytes.substr(0, 3), "cut.jpg"),
            "truncated JPEG header (no frame before the end of data)");
}

// A handle that failed must not poison the next image decoded on the same thread.
TEST(CodecTest, FailuresDoNotAffectTheNextImage) {
  std::string good_path = TestDataPath("images/mixed-formats/0/420.jpg");
  std::string good = ReadFile(good_path);
  Image expected = DecodeImage(good, good_path);
  for (const char* bad : {"bad-images/monkey12.jpg",
                          "bad-images/jpeg-lossless/0/cat-3449999_640_grayscale_8bit.jpg"}) {
    std::string bytes = ReadFile(TestDataPath(bad));
    EXPECT_THROW(ReadImageInfo(bytes, bad), DataError);
    EXPECT_EQ(ReadImageInfo(good, good_path).width, 1280);
    EXPECT_THROW(DecodeImage(bytes, bad), DataError);
    EXPECT_EQ(DecodeImage(good, good_path).pixels, expected.pixels);
    EXPECT_THROW(DecodeImage(good.substr(0, good.size() / 2), bad), DataError);
    EXPECT_EQ(DecodeImage(good, good_path).pixels, expected.pixels);
  }
}

TEST(CodecTest, EmptyAndUnknownInput) {
  EXPECT_EQ(InfoReason("", "e.jpg"), "empty file");
  EXPECT_EQ(DecodeReason("", "e.jpg"), "empty file");
  EXPECT_EQ(InfoReason("hello world", "t.jpg"), "not an image (unknown signature 68 65 6C 6C)");
  EXPECT_EQ(InfoReason("\x01\x02"s, "t.jpg"), "not an image (unknown signature 01 02)");
  EXPECT_EQ(DecodeReason("<html></html>", "t.jpg"),
            "not an image (unknown signature 3C 68 74 6D)");
}

// Offset of the first SOF0 marker's payload in a baseline JPEG.
size_t FindSof0(const std::string& jpeg) {
  size_t pos = jpeg.find("\xFF\xC0"s);
  EXPECT_NE(pos, std::string::npos);
  return pos + 2;
}

TEST(CodecTest, DecompressionBombIsRejectedFromTheHeader) {
  // A 16x16 JPEG whose frame header claims 60000x60000.
  std::string jpeg = EncodeJpeg(GradientImage(16, 16, 3));
  size_t sof = FindSof0(jpeg);  // length(2) precision(1) height(2) width(2)
  jpeg[sof + 3] = jpeg[sof + 5] = static_cast<char>(60000 >> 8);
  jpeg[sof + 4] = jpeg[sof + 6] = static_cast<char>(60000 & 0xFF);
  const std::string reason =
      "image too large: 60000x60000 pixels exceeds the limit of 268435456";
  EXPECT_EQ(InfoReason(jpeg, "bomb.jpg"), reason);
  EXPECT_EQ(DecodeReason(jpeg, "bomb.jpg"), reason);
  EXPECT_EQ(ReadImageInfo(jpeg, "bomb.jpg", uint64_t{1} << 32).width, 60000);

  // A PNG whose IHDR (with a valid CRC) claims 60000x60000.
  std::string ihdr = "IHDR"s + "\0\0\xEA\x60\0\0\xEA\x60\x08\x02\0\0\0"s;
  uint32_t crc = crc32(0, reinterpret_cast<const Bytef*>(ihdr.data()), ihdr.size());
  std::string png = "\x89PNG\r\n\x1A\n\0\0\0\x0D"s + ihdr + char(crc >> 24) + char(crc >> 16) +
                    char(crc >> 8) + char(crc) + "\0\0\0\0IEND\xAE\x42\x60\x82"s;
  EXPECT_EQ(InfoReason(png, "bomb.png"), reason);
  EXPECT_EQ(DecodeReason(png, "bomb.png"), reason);

  // The limit is an option.
  DecodeOptions options;
  options.max_pixels = 255;
  EXPECT_EQ(DecodeReason(EncodeJpeg(GradientImage(16, 16, 3)), "small.jpg", options),
            "image too large: 16x16 pixels exceeds the limit of 255");
}

TEST(CodecTest, EncodeDecodeRoundTrip) {
  for (int channels : {3, 1}) {
    SCOPED_TRACE(channels);
    Image original = GradientImage(67, 45, channels);  // odd sizes: partial MCUs
    std::string jpeg = EncodeJpeg(original, 95);
    ImageInfo info = ReadImageInfo(jpeg, "rt.jpg");
    EXPECT_EQ(info.format, ImageFormat::kJpeg);
    EXPECT_EQ(info.width, 67);
    EXPECT_EQ(info.height, 45);
    EXPECT_EQ(info.channels, channels);
    EXPECT_EQ(info.colorspace, channels == 1 ? "Grayscale" : "RGB");
    DecodeOptions options;
    options.channels = channels;
    Image decoded = DecodeImage(jpeg, "rt.jpg", options);
    ASSERT_EQ(decoded.width, 67);
    ASSERT_EQ(decoded.height, 45);
    ASSERT_EQ(decoded.channels, channels);
    EXPECT_LT(MeanAbsDiff(decoded, original), 2.0);
  }
  // Lower quality: smaller file, still close.
  Image original = GradientImage(64, 64, 3);
  std::string high = EncodeJpeg(original, 95), low = EncodeJpeg(original, 30);
  EXPECT_LT(low.size(), high.size());
  EXPECT_LT(MeanAbsDiff(DecodeImage(low, "low.jpg"), original), 6.0);
}

TEST(CodecTest, ConvertsBetweenGrayAndColour) {
  Image gray = GradientImage(32, 16, 1);
  Image as_rgb = DecodeImage(EncodeJpeg(gray), "g.jpg");  // channels = 3
  ASSERT_EQ(as_rgb.channels, 3);
  for (size_t i = 0; i < gray.pixels.size(); ++i) {
    EXPECT_EQ(as_rgb.pixels[3 * i], as_rgb.pixels[3 * i + 1]);
    EXPECT_EQ(as_rgb.pixels[3 * i], as_rgb.pixels[3 * i + 2]);
    EXPECT_NEAR(as_rgb.pixels[3 * i], gray.pixels[i], 4);
  }
  // Pure red in RGB: luma 0.299 * 255.
  Image red;
  red.width = red.height = 16;
  red.channels = 3;
  for (int i = 0; i < 256; ++i) red.pixels.insert(red.pixels.end(), {255, 0, 0});
  DecodeOptions options;
  options.channels = 1;
  Image luma = DecodeImage(EncodeJpeg(red), "r.jpg", options);
  EXPECT_NEAR(luma.pixels[100], 76, 3);
}

TEST(CodecTest, EncodeRejectsBadInput) {
  Image image = GradientImage(8, 8, 3);
  EXPECT_THROW(EncodeJpeg(image, 0), Error);
  EXPECT_THROW(EncodeJpeg(image, 101), Error);
  Image rgba = GradientImage(8, 8, 4);
  EXPECT_THROW(EncodeJpeg(rgba), Error);
  image.pixels.pop_back();
  EXPECT_THROW(EncodeJpeg(image), Error);
  Image empty;
  empty.channels = 3;
  EXPECT_THROW(EncodeJpeg(empty), Error);
  DecodeOptions options;
  options.channels = 4;
  EXPECT_THROW(DecodeImage(EncodeJpeg(GradientImage(8, 8, 3)), "x.jpg", options), Error);
}

TEST(CodecTest, AppliesExifOrientation) {
  // 40x30: a white 8x8 block in the top-left corner of a black picture.
  Image image;
  image.width = 40;
  image.height = 30;
  image.channels = 3;
  image.pixels.assign(40 * 30 * 3, 0);
  for (int y = 0; y < 8; ++y) {
    for (int x = 0; x < 8; ++x) {
      for (int c = 0; c < 3; ++c) image.row(y)[3 * x + c] = 255;
    }
  }
  std::string plain = EncodeJpeg(image);
  // Where the block's centre (4, 4) lands for each orientation, in the displayed image.
  struct Case {
    int orientation, width, height, x, y;
  };
  const Case cases[] = {{1, 40, 30, 4, 4},  {3, 40, 30, 35, 25}, {6, 30, 40, 25, 4},
                        {8, 30, 40, 4, 35}, {2, 40, 30, 35, 4},  {5, 30, 40, 4, 4}};
  for (bool big_endian : {true, false}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(c.orientation);
      std::string jpeg = plain.substr(0, 2) + ExifSegment(c.orientation, big_endian) +
                         plain.substr(2);
      ImageInfo info = ReadImageInfo(jpeg, "o.jpg");
      EXPECT_EQ(info.orientation, c.orientation);
      EXPECT_EQ(info.width, 40);  // as stored
      EXPECT_EQ(info.decoded_width(), c.width);
      Image decoded = DecodeImage(jpeg, "o.jpg");
      ASSERT_EQ(decoded.width, c.width);
      ASSERT_EQ(decoded.height, c.height);
      EXPECT_GT(decoded.row(c.y)[3 * c.x], 200);
      EXPECT_LT(decoded.row(c.height - 1 - c.y)[3 * (c.width - 1 - c.x)], 50);
    }
  }
}

// CMYK as Photoshop writes it (Adobe marker, inverted samples), made by TurboJPEG.
TEST(CodecTest, DecodesAdobeCmykToRgb) {
  // Inks (C, M, Y, K): left half (0, 1, 1, 0), red; right half (1, 1, 0, 0), blue.
  // Stored inverted: 255 - ink.
  const int width = 32, height = 16;
  std::vector<unsigned char> cmyk(width * height * 4);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      unsigned char* p = &cmyk[(y * width + x) * 4];
      bool left = x < width / 2;
      p[0] = left ? 255 : 0;  // C' = 255 - C
      p[1] = 0;               // M' (M = 1 on both halves)
      p[2] = left ? 0 : 255;  // Y'
      p[3] = 255;             // K' (no black)
    }
  }
  tjhandle handle = tjInitCompress();
  ASSERT_NE(handle, nullptr);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  ASSERT_EQ(tjCompress2(handle, cmyk.data(), width, 0, height, TJPF_CMYK, &buffer, &size,
                        TJSAMP_444, 95, 0),
            0)
      << tjGetErrorStr2(handle);
  std::string jpeg(reinterpret_cast<char*>(buffer), size);
  tjFree(buffer);
  tjDestroy(handle);

  ImageInfo info = ReadImageInfo(jpeg, "cmyk.jpg");
  EXPECT_EQ(info.colorspace, "CMYK");
  EXPECT_EQ(info.channels, 4);
  Image rgb = DecodeImage(jpeg, "cmyk.jpg");
  ASSERT_EQ(rgb.channels, 3);
  ExpectRgbNear(rgb, 4, 8, {255, 0, 0}, 25);
  ExpectRgbNear(rgb, 28, 8, {0, 0, 255}, 25);
  DecodeOptions gray;
  gray.channels = 1;
  Image luma = DecodeImage(jpeg, "cmyk.jpg", gray);
  EXPECT_NEAR(luma.row(8)[4], 76, 6);    // 0.299 * 255
  EXPECT_NEAR(luma.row(8)[28], 29, 6);   // 0.114 * 255
}

std::string CvEncode(const char* ext, const cv::Mat& mat) {
  std::vector<uint8_t> encoded;
  EXPECT_TRUE(cv::imencode(ext, mat, encoded)) << ext;
  return std::string(encoded.begin(), encoded.end());
}

// OpenCV's BGR becomes RGB, 16 bits become 8, every OpenCV-read format round-trips.
TEST(CodecTest, OpenCvFormatsDecodeAsRgb) {
  // 64x40: OpenJPEG's default 6 resolution levels need 32 pixels or more.
  cv::Mat bgr(40, 64, CV_8UC3, cv::Scalar(0, 0, 0));
  bgr(cv::Rect(0, 0, 32, 40)).setTo(cv::Scalar(255, 0, 0));   // left: blue
  bgr(cv::Rect(32, 0, 32, 40)).setTo(cv::Scalar(0, 0, 255));  // right: red
  for (const char* ext : {".png", ".bmp", ".tiff", ".ppm", ".webp", ".jp2"}) {
    SCOPED_TRACE(ext);
    Image image = DecodeImage(CvEncode(ext, bgr), ext);
    ASSERT_EQ(image.width, 64);
    ASSERT_EQ(image.height, 40);
    ExpectRgbNear(image, 10, 20, {0, 0, 255}, 35);
    ExpectRgbNear(image, 50, 20, {255, 0, 0}, 35);
  }
  cv::Mat deep(8, 8, CV_16UC3, cv::Scalar(0x1000, 0x8000, 0xFFFF));
  for (const char* ext : {".png", ".tiff"}) {
    SCOPED_TRACE(ext);
    Image image = DecodeImage(CvEncode(ext, deep), ext);
    EXPECT_EQ(image.pixels[0], 255);  // R = 0xFFFF
    EXPECT_EQ(image.pixels[1], 128);
    EXPECT_EQ(image.pixels[2], 16);
  }
}

TEST(CodecTest, CorruptOpenCvFormatsAreDataErrors) {
  std::string png = ReadFile(TestDataPath("images/mixed-formats/2/cat-3449999_640.png"));
  EXPECT_EQ(DecodeReason(png.substr(0, png.size() / 2), "half.png"),
            "corrupt or truncated png data");
  EXPECT_NO_THROW(ReadImageInfo(png.substr(0, png.size() / 2), "half.png"));
  std::string ppm = ReadFile(TestDataPath("images/mixed-formats/3/cat-111793_640.ppm"));
  EXPECT_EQ(DecodeReason(ppm.substr(0, ppm.size() / 2), "half.ppm"),
            "corrupt or truncated pnm data");
  std::string tiff = ReadFile(TestDataPath("images/mixed-formats/4/cat-3449999_640.tiff"));
  EXPECT_NE(DecodeReason(tiff.substr(0, tiff.size() / 2), "half.tiff"), "(no error)");
}

TEST(CodecTest, DecodesInParallelLikeSerially) {
  std::vector<std::string> paths = ImageFilesIn("images/mixed-formats/0");
  for (const char* bad : {"bad-images/monkey12.jpg", "bad-images/testimgari.jpg"}) {
    paths.push_back(TestDataPath(bad));
  }
  std::vector<std::string> serial(paths.size()), parallel(paths.size());
  auto decode = [&](size_t i, std::vector<std::string>& out) {
    try {
      Image image = DecodeImage(ReadFile(paths[i]), paths[i]);
      out[i] = std::string(image.pixels.begin(), image.pixels.end());
      out[i] += EncodeJpeg(image, 80);
    } catch (const DataError& e) {
      out[i] = e.what();
    }
  };
  for (size_t i = 0; i < paths.size(); ++i) decode(i, serial);
  ThreadPool pool(4);
  for (int round = 0; round < 3; ++round) {
    ParallelFor(pool, paths.size(), [&](size_t i) { decode(i, parallel); });
    for (size_t i = 0; i < paths.size(); ++i) EXPECT_EQ(parallel[i], serial[i]) << paths[i];
  }
}

}  // namespace
}  // namespace imgpipe
