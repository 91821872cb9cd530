#include "image/jpeg_region_decoder.h"

#include <gtest/gtest.h>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "image/codec.h"
#include "image/image_test_util.h"
#include "image/jpeg_test_util.h"
#include "image/resize.h"
#include "util/error.h"
#include "util/file.h"
#include "util/random.h"

namespace imgpipe {
namespace {

// Windows to try on a width x height image: the whole image, corners and edges, single
// pixels and rows, odd offsets and sizes, and random ones.
std::vector<CropWindow> TestWindows(int width, int height, uint64_t seed) {
  std::vector<CropWindow> windows = {
      {0, 0, width, height},
      {0, 0, 1, 1},
      {width - 1, height - 1, 1, 1},
      {width - 1, 0, 1, height},
      {0, height - 1, width, 1},
      {1, 1, width - 2, height - 2},
      {width / 3 | 1, height / 5 | 1, width / 2 | 1, height / 3 | 1},
      {width / 2, height / 2, width - width / 2, height - height / 2},
      {7, 9, std::min(17, width - 7), std::min(15, height - 9)},
  };
  SplitMix64 random(seed);
  for (int i = 0; i < 12; ++i) {
    int w = 1 + static_cast<int>(random.Below(width));
    int h = 1 + static_cast<int>(random.Below(height));
    windows.push_back({static_cast<int>(random.Below(width - w + 1)),
                       static_cast<int>(random.Below(height - h + 1)), w, h});
  }
  return windows;
}

std::string Describe(const CropWindow& w) {
  return std::to_string(w.width) + "x" + std::to_string(w.height) + "+" + std::to_string(w.x) +
         "+" + std::to_string(w.y);
}

// Every window of `jpeg` decodes to exactly the pixels DecodeImage gives there.
void ExpectRegionsMatchFullDecode(const std::string& jpeg, const std::string& path,
                                  int channels = 3) {
  DecodeOptions decode;
  decode.channels = channels;
  const Image full = DecodeImage(jpeg, path, decode);
  for (const CropWindow& window : TestWindows(full.width, full.height, jpeg.size())) {
    SCOPED_TRACE(path + " window " + Describe(window));
    JpegRegionOptions options;
    options.crop = window;
    options.channels = channels;
    int scale = 0;
    PixelBox box;
    Image region = DecodeJpegRegion(jpeg, path, options, &scale, &box);
    EXPECT_EQ(scale, 1);
    EXPECT_EQ(box.x0, 0);
    EXPECT_EQ(box.x1, window.width);
    ASSERT_EQ(region.width, window.width);
    ASSERT_EQ(region.height, window.height);
    ASSERT_EQ(region.channels, channels);
    Image expected = CropImage(full, window.x, window.y, window.width, window.height);
    ASSERT_EQ(MaxAbsDiff(region, expected), 0);
  }
}

// A real photo (640x408, 4:2:0).
std::string FirstPhoto() { return ReadFile(ImageFilesIn("images/photos-by-class/100").at(0)); }

// A progressive `jpeg` cut after its first `scans` scans (then EOI), as a file whose
// later scans are missing: libjpeg smooths blocks whose coefficients are missing from
// the DC values of the two blocks on each side, which a cropped decode must see too
// (fuzzing found windows just right of the crop's edge off by a few levels).
std::string FirstScans(const std::string& jpeg, int scans) {
  size_t at = jpeg.find("\xff\xda");
  for (int i = 0; i < scans && at != std::string::npos; ++i) at = jpeg.find("\xff\xda", at + 2);
  if (at == std::string::npos) throw Error("FirstScans: fewer than " + std::to_string(scans + 1) + " scans");
  return jpeg.substr(0, at) + "\xff\xd9";
}

TEST(JpegRegionDecoderTest, PhotosMatchFullDecodeExactly) {
  int files = 0;
  for (const std::string& dir : ListDirectory(TestDataPath("images/photos-by-class"))) {
    if (dir == "image_list.txt") continue;
    for (const std::string& path : ImageFilesIn(JoinPath("images/photos-by-class", dir))) {
      ExpectRegionsMatchFullDecode(ReadFile(path), path);
      ++files;
    }
  }
  EXPECT_EQ(files, 47);
}

// Every chroma subsampling (4:1:0, 4:1:1, 4:2:0 with odd sizes, 4:2:2, 4:4:0, 4:4:4, 2x4):
// fancy upsampling at the window's edges reads the same neighbours as a full decode.
TEST(JpegRegionDecoderTest, ChromaSubsamplingsMatchFullDecodeExactly) {
  std::vector<std::string> paths = ImageFilesIn("images/mixed-formats/0");
  ASSERT_GE(paths.size(), 12u);
  for (const std::string& path : paths) {
    ExpectRegionsMatchFullDecode(ReadFile(path), path, 3);
    ExpectRegionsMatchFullDecode(ReadFile(path), path, 1);
  }
}

TEST(JpegRegionDecoderTest, ProgressiveGrayAndCmykMatchFullDecode) {
  Image photo = DecodeImage(FirstPhoto(), "photo");
  std::string progressive =
      TurboEncode(photo.pixels, photo.width, photo.height, TJPF_RGB, TJSAMP_420, TJFLAG_PROGRESSIVE);
  ExpectRegionsMatchFullDecode(progressive, "progressive.jpg");

  Image gray = GradientImage(93, 61, 1);
  ExpectRegionsMatchFullDecode(EncodeJpeg(gray), "gray.jpg", 3);
  ExpectRegionsMatchFullDecode(EncodeJpeg(gray), "gray.jpg", 1);

  for (int kept : {1, 2, 3}) {
    ExpectRegionsMatchFullDecode(FirstScans(progressive, kept),
                                 "progressive-" + std::to_string(kept) + "-scans.jpg");
  }

  // Adobe CMYK (inverted samples), as Photoshop writes it.
  Image rgb = GradientImage(77, 45, 3);
  std::vector<unsigned char> cmyk;
  for (size_t i = 0; i < rgb.pixels.size(); i += 3) {
    cmyk.insert(cmyk.end(), {rgb.pixels[i], rgb.pixels[i + 1], rgb.pixels[i + 2], 200});
  }
  ExpectRegionsMatchFullDecode(TurboEncode(cmyk, 77, 45, TJPF_CMYK, TJSAMP_444, 0), "cmyk.jpg");
}

// DCT scaling: the largest of 1/2, 1/4, 1/8 that keeps the window at least the minimum
// size; the pixels are those of TurboJPEG's scaled full decode, cut at the window
// rounded outwards.
TEST(JpegRegionDecoderTest, ScaledDecodesMatchTurboJpegScaledDecode) {
  std::vector<std::pair<std::string, std::string>> files;  // path, bytes
  for (const std::string& path : ImageFilesIn("images/photos-by-class/134")) {
    files.emplace_back(path, ReadFile(path));
  }
  Image photo = DecodeImage(files.at(0).second, files.at(0).first);
  files.emplace_back("progressive-2-scans.jpg",
                     FirstScans(TurboEncode(photo.pixels, photo.width, photo.height, TJPF_RGB,
                                            TJSAMP_420, TJFLAG_PROGRESSIVE),
                                2));
  for (const auto& [path, jpeg] : files) {
    const Image full = DecodeImage(jpeg, path);
    const CropWindow window{101, 57, full.width * 2 / 3, full.height / 2 + 3};
    for (int denom : {1, 2, 4, 8}) {
      SCOPED_TRACE(path + " 1/" + std::to_string(denom));
      // 1. The reference: TurboJPEG's whole image at 1/denom.
      const int sw = (full.width + denom - 1) / denom, sh = (full.height + denom - 1) / denom;
      Image scaled;
      scaled.width = sw;
      scaled.height = sh;
      scaled.channels = 3;
      scaled.pixels.resize(scaled.row_bytes() * sh);
      tjhandle handle = tjInitDecompress();
      ASSERT_EQ(tjDecompress2(handle, reinterpret_cast<const unsigned char*>(jpeg.data()),
                              jpeg.size(), scaled.pixels.data(), sw, 0, sh, TJPF_RGB, 0),
                0);
      tjDestroy(handle);
      // 2. A minimum size that asks for exactly this scale.
      JpegRegionOptions options;
      options.crop = window;
      options.min_width = window.width / denom;
      options.min_height = window.height / denom;
      int scale = 0;
      PixelBox box;
      Image region = DecodeJpegRegion(jpeg, path, options, &scale, &box);
      ASSERT_EQ(scale, denom);
      EXPECT_GE(region.width, options.min_width);
      EXPECT_GE(region.height, options.min_height);
      const int x0 = window.x / denom, y0 = window.y / denom;
      const int x1 = (window.x + window.width + denom - 1) / denom;
      const int y1 = (window.y + window.height + denom - 1) / denom;
      ASSERT_EQ(region.width, x1 - x0);
      ASSERT_EQ(region.height, y1 - y0);
      EXPECT_DOUBLE_EQ(box.x0, static_cast<double>(window.x) / denom - x0);
      EXPECT_DOUBLE_EQ(box.y1, static_cast<double>(window.y + window.height) / denom - y0);
      EXPECT_EQ(MaxAbsDiff(region, CropImage(scaled, x0, y0, x1 - x0, y1 - y0)), 0);
    }
  }
}

TEST(JpegRegionDecoderTest, ScaleIsChosenFromTheMinimumSize) {
  const std::string jpeg = EncodeJpeg(GradientImage(640, 480, 3));
  struct Case {
    int crop_width, crop_height, min_width, min_height, scale;
  };
  const Case cases[] = {{640, 480, 0, 0, 1},     {640, 480, 80, 60, 8},  {640, 480, 81, 60, 4},
                        {640, 480, 224, 224, 2}, {448, 448, 224, 224, 2}, {447, 448, 224, 224, 1},
                        {300, 300, 224, 224, 1}, {640, 480, 1, 1, 8},     {7, 7, 1, 1, 4}};
  for (const Case& c : cases) {
    JpegRegionOptions options;
    options.crop = CropWindow{0, 0, c.crop_width, c.crop_height};
    options.min_width = c.min_width;
    options.min_height = c.min_height;
    int scale = 0;
    Image region = DecodeJpegRegion(jpeg, "g.jpg", options, &scale);
    EXPECT_EQ(scale, c.scale) << c.crop_width << "x" << c.crop_height << " min " << c.min_width;
    EXPECT_EQ(region.width, (c.crop_width + scale - 1) / scale);
    EXPECT_EQ(region.height, (c.crop_height + scale - 1) / scale);
  }
}

// The window is in displayed coordinates: for every EXIF orientation the region equals
// the same window of the oriented full decode, at scale 1 exactly, and DCT-scaled
// decodes put the window where `box` says.
TEST(JpegRegionDecoderTest, WindowIsInDisplayedCoordinates) {
  const std::string plain = FirstPhoto();
  for (int orientation = 1; orientation <= 8; ++orientation) {
    SCOPED_TRACE("orientation " + std::to_string(orientation));
    const std::string jpeg = WithExifOrientation(plain, orientation);
    ExpectRegionsMatchFullDecode(jpeg, "oriented.jpg");
    const Image full = DecodeImage(jpeg, "oriented.jpg");
    ImageInfo info = ReadDisplayedJpegInfo(jpeg, "oriented.jpg");
    EXPECT_EQ(info.width, full.width);
    EXPECT_EQ(info.height, full.height);
    EXPECT_EQ(info.orientation, 1);

    const CropWindow window{full.width / 5 + 3, full.height / 7 + 1, full.width / 2 + 5,
                            full.height / 2 + 7};
    JpegRegionOptions options;
    options.crop = window;
    options.min_width = window.width / 4;
    options.min_height = window.height / 4;
    int scale = 0;
    PixelBox box;
    Image region = DecodeJpegRegion(jpeg, "oriented.jpg", options, &scale, &box);
    ASSERT_EQ(scale, 4);
    EXPECT_NEAR(box.width(), window.width / 4.0, 1e-9);
    EXPECT_NEAR(box.height(), window.height / 4.0, 1e-9);
    // At a quarter of the window's size, the box of the region looks like the window of
    // the full decode, and less like it when shifted by one scaled pixel (4 pixels).
    const int w4 = window.width / 4, h4 = window.height / 4;
    const Image ours = Resize(region, box, w4, h4);
    auto full_window = [&](int dx, int dy) {
      return Resize(full,
                    PixelBox{static_cast<double>(window.x + dx), static_cast<double>(window.y + dy),
                             static_cast<double>(window.x + dx + window.width),
                             static_cast<double>(window.y + dy + window.height)},
                    w4, h4);
    };
    const double diff = MeanAbsDiff(ours, full_window(0, 0));
    EXPECT_LT(diff, 4.0);
    for (auto [dx, dy] : {std::pair{-4, 0}, {4, 0}, {0, -4}, {0, 4}}) {
      EXPECT_GT(MeanAbsDiff(ours, full_window(dx, dy)), 1.5 * diff) << dx << "," << dy;
    }
  }
  // Without orientation the stored pixels come back.
  JpegRegionOptions options;
  options.apply_exif_orientation = false;
  Image stored = DecodeJpegRegion(WithExifOrientation(plain, 6), "o.jpg", options);
  EXPECT_EQ(MaxAbsDiff(stored, DecodeImage(plain, "p.jpg")), 0);
}

// keep_decoded_columns: the result holds the window where `box` says (whole pixels at
// every scale's own grid) with libjpeg's columns beside it, and those pixels are the
// exact window's; DecodeJpegRegionInto reuses its buffer. Also with EXIF orientation
// and restart markers.
TEST(JpegRegionDecoderTest, KeptColumnsHoldTheExactWindow) {
  const std::string plain = FirstPhoto();
  std::vector<std::pair<std::string, std::string>> files = {
      {"plain", plain}, {"oriented 6", WithExifOrientation(plain, 6)},
      {"oriented 3", WithExifOrientation(plain, 3)}};
  Image reused;
  int wider = 0;
  for (const auto& [label, jpeg] : files) {
    const ImageInfo info = ReadDisplayedJpegInfo(jpeg, label);
    for (const CropWindow& window : TestWindows(info.width, info.height, 7)) {
      for (int scale : {1, 2, 4}) {
        SCOPED_TRACE(label + " window " + Describe(window) + " 1/" + std::to_string(scale));
        JpegRegionOptions options;
        options.crop = window;
        options.scale = scale;
        PixelBox exact_box, kept_box;
        const Image exact = DecodeJpegRegion(jpeg, label, options, nullptr, &exact_box);
        options.keep_decoded_columns = true;
        const uint8_t* before = reused.pixels.data();
        const size_t capacity = reused.pixels.capacity();
        DecodeJpegRegionInto(jpeg, label, options, &reused, nullptr, &kept_box);
        if (label == "plain" && capacity >= reused.pixels.size()) {
          EXPECT_EQ(reused.pixels.data(), before);  // oriented images are new ones
        }
        const double dx = kept_box.x0 - exact_box.x0, dy = kept_box.y0 - exact_box.y0;
        ASSERT_EQ(dx, std::floor(dx));
        ASSERT_EQ(dy, std::floor(dy));
        EXPECT_DOUBLE_EQ(kept_box.width(), exact_box.width());
        ASSERT_EQ(MaxAbsDiff(CropImage(reused, static_cast<int>(dx), static_cast<int>(dy),
                                       exact.width, exact.height),
                             exact),
                  0);
        if (reused.width > exact.width || reused.height > exact.height) ++wider;
      }
    }
  }
  EXPECT_GT(wider, 20);
  JpegRegionOptions no_box;
  no_box.keep_decoded_columns = true;
  EXPECT_THROW(DecodeJpegRegion(plain, "p.jpg", no_box), Error);
}

TEST(JpegRegionDecoderTest, TruncatedAndCorruptDataAreDataErrors) {
  const std::string jpeg = FirstPhoto();
  for (size_t keep : {jpeg.size() / 2, jpeg.size() - 100}) {
    JpegRegionOptions options;  // the whole image, so the missing part is needed
    try {
      DecodeJpegRegion(jpeg.substr(0, keep), "cut.jpg", options);
      ADD_FAILURE() << "no error for " << keep << " bytes";
    } catch (const DataError& e) {
      EXPECT_EQ(e.path(), "cut.jpg");
      EXPECT_NE(e.reason().find("truncated"), std::string::npos) << e.what();
    }
  }
  // Garbage in the entropy-coded data from the middle on.
  std::string corrupt = jpeg;
  for (size_t i = corrupt.size() / 2; i < corrupt.size() - 2; i += 97) corrupt[i] = '\xFF';
  EXPECT_THROW(DecodeJpegRegion(corrupt, "bad.jpg", JpegRegionOptions{}), DataError);
  // Headers: not a JPEG, too large.
  EXPECT_THROW(DecodeJpegRegion("\x89PNG\r\n\x1a\n", "x.png", JpegRegionOptions{}), DataError);
  EXPECT_THROW(DecodeJpegRegion("", "empty.jpg", JpegRegionOptions{}), DataError);
  JpegRegionOptions small;
  small.max_pixels = 1000;
  EXPECT_THROW(DecodeJpegRegion(jpeg, "big.jpg", small), DataError);
  // A failure leaves nothing behind for the next decode.
  JpegRegionOptions options;
  options.crop = CropWindow{3, 3, 50, 40};
  EXPECT_EQ(DecodeJpegRegion(jpeg, "ok.jpg", options).width, 50);
}

TEST(JpegRegionDecoderTest, WindowOutsideTheImageIsAnError) {
  const std::string jpeg = EncodeJpeg(GradientImage(64, 48, 3));
  const CropWindow bad[] = {{-1, 0, 10, 10}, {0, -1, 10, 10}, {60, 0, 5, 10}, {0, 40, 10, 9},
                            {0, 0, 0, 10},   {0, 0, 10, 0},   {0, 0, 65, 48}, {64, 0, 1, 1}};
  for (const CropWindow& window : bad) {
    JpegRegionOptions options;
    options.crop = window;
    EXPECT_THROW(DecodeJpegRegion(jpeg, "g.jpg", options), Error) << Describe(window);
  }
  // Orientation 6 swaps the displayed size: 48 wide, 64 high.
  JpegRegionOptions options;
  options.crop = CropWindow{0, 0, 48, 64};
  EXPECT_EQ(DecodeJpegRegion(WithExifOrientation(jpeg, 6), "o.jpg", options).height, 64);
  EXPECT_THROW(DecodeJpegRegion(jpeg, "g.jpg", options), Error);
  options.channels = 4;
  EXPECT_THROW(DecodeJpegRegion(jpeg, "g.jpg", options), Error);
}

}  // namespace
}  // namespace imgpipe
