#include "image/jpeg_restart_splice.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "image/codec.h"
#include "image/image_test_util.h"
#include "image/jpeg_region_decoder.h"
#include "image/jpeg_test_util.h"
#include "image/jpeg_transcode.h"
#include "util/error.h"
#include "util/file.h"
#include "util/random.h"

namespace imgpipe {
namespace {

std::string WithRestarts(const std::string& jpeg, int interval) {
  std::optional<std::string> rewritten = AddJpegRestartMarkers(jpeg, "test.jpg", interval).jpeg;
  if (!rewritten) throw Error("not rewritten");
  return *rewritten;
}

// Random windows of a width x height image, with its corners and edges.
std::vector<CropWindow> Windows(int width, int height, uint64_t seed) {
  std::vector<CropWindow> windows = {{0, 0, width, height},
                                     {0, 0, 1, 1},
                                     {width - 1, height - 1, 1, 1},
                                     {width / 2, 0, width - width / 2, 1},
                                     {0, height / 2, 1, height - height / 2},
                                     {17, 23, std::min(40, width - 17), std::min(9, height - 23)}};
  SplitMix64 random(seed);
  for (int i = 0; i < 10; ++i) {
    const int w = 1 + static_cast<int>(random.Below(width));
    const int h = 1 + static_cast<int>(random.Below(height));
    windows.push_back({static_cast<int>(random.Below(width - w + 1)),
                       static_cast<int>(random.Below(height - h + 1)), w, h});
  }
  return windows;
}

// Every window of `marked` (a restart-marked copy of `plain`) decodes, at every DCT
// scale and both channel counts, to exactly what the same window of `plain` (no markers:
// the plain crop decode) does. Adds how many windows were spliced to `spliced`.
void ExpectSplicedRegionsExact(const std::string& plain, const std::string& marked,
                               const std::string& label, int& spliced) {
  const ImageInfo info = ReadDisplayedJpegInfo(plain, label);
  for (const CropWindow& w : Windows(info.width, info.height, marked.size())) {
    for (int scale : {1, 2, 4, 8}) {
      for (int channels : {3, 1}) {
        SCOPED_TRACE(label + " window " + std::to_string(w.width) + "x" + std::to_string(w.height) +
                     "+" + std::to_string(w.x) + "+" + std::to_string(w.y) + " 1/" +
                     std::to_string(scale) + " channels " + std::to_string(channels));
        JpegRegionOptions options;
        options.crop = w;
        options.scale = scale;
        options.channels = channels;
        PixelBox box_plain, box_marked;
        const Image a = DecodeJpegRegion(plain, label, options, nullptr, &box_plain);
        const Image b = DecodeJpegRegion(marked, label, options, nullptr, &box_marked);
        ASSERT_EQ(a.width, b.width);
        ASSERT_EQ(a.height, b.height);
        ASSERT_EQ(MaxAbsDiff(a, b), 0);
        EXPECT_EQ(box_plain.x0, box_marked.x0);
        EXPECT_EQ(box_plain.y1, box_marked.y1);
      }
    }
    if (SpliceJpegWindow(marked, w.x, w.y, w.width, w.height, 4)) ++spliced;
  }
}

// Restart markers every MCU, every row, every 2 rows, every 2 MCUs and an interval
// that lines up with neither (never spliced): windows decode exactly as without markers,
// for every chroma subsampling (4:1:0, 4:1:1, 4:2:0 with odd sizes, 4:2:2, 4:4:0, 4:4:4,
// 2x4) and real photos.
TEST(JpegRestartSpliceTest, SplicedWindowsDecodeExactly) {
  std::vector<std::string> paths = ImageFilesIn("images/mixed-formats/0");
  paths.push_back(ImageFilesIn("images/photos-by-class/100").at(0));
  for (const std::string& path : paths) {
    const std::string plain = ReadFile(path);
    const int per_row = JpegLayoutOf(plain).mcus_per_row;
    std::vector<int> intervals = {1, per_row, 2 * per_row};
    if (per_row % 2 == 0) intervals.push_back(2);
    if (per_row > 3 && per_row % 3 != 0) intervals.push_back(3);
    for (int interval : intervals) {
      const std::string marked = WithRestarts(plain, interval);
      int spliced = 0;
      ExpectSplicedRegionsExact(plain, marked, path + " interval " + std::to_string(interval),
                                spliced);
      const bool lines_up = per_row % interval == 0 || interval % per_row == 0;
      if (!lines_up) {
        EXPECT_EQ(spliced, 0) << path << " interval " << interval;
      } else {
        EXPECT_GT(spliced, interval == 1 ? 8 : 2) << path << " interval " << interval;
      }
    }
  }
}

// EXIF orientation (the window is displayed, the splice stored), grayscale files.
TEST(JpegRestartSpliceTest, OrientedAndGrayFiles) {
  const std::string photo = ReadFile(ImageFilesIn("images/photos-by-class/100").at(0));
  for (int orientation : {3, 6, 8}) {
    const std::string plain = WithExifOrientation(photo, orientation);
    int spliced = 0;
    ExpectSplicedRegionsExact(plain, WithRestarts(plain, 1),
                              "oriented " + std::to_string(orientation), spliced);
    EXPECT_GT(spliced, 3);
  }
  const std::string gray = EncodeJpeg(GradientImage(93, 61, 1));
  int spliced = 0;
  ExpectSplicedRegionsExact(gray, WithRestarts(gray, 1), "gray", spliced);
  EXPECT_GT(spliced, 3);
}

TEST(JpegRestartSpliceTest, SplicesOnlyTheMcusAroundTheWindow) {
  const std::string plain = ReadFile(ImageFilesIn("images/photos-by-class/100").at(0));  // 640x408
  const std::string marked = WithRestarts(plain, 1);
  // No markers, or a window that needs every MCU from the top anyway: no splice.
  EXPECT_FALSE(SpliceJpegWindow(plain, 200, 200, 100, 100, 4));
  EXPECT_FALSE(SpliceJpegWindow(marked, 0, 0, 640, 100, 4));
  EXPECT_TRUE(SpliceJpegWindow(marked, 0, 0, 10, 10, 4));  // the columns to its right
  // An interior window at least 4 pixels inside its MCUs (16x16): just those MCUs.
  const std::optional<SplicedJpeg> s = SpliceJpegWindow(marked, 200, 100, 100, 50, 4);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->x, 192);
  EXPECT_EQ(s->y, 96);
  EXPECT_EQ(s->width, 304 - 192);
  EXPECT_EQ(s->height, 160 - 96);
  // Within 4 pixels of their left and top edges: one MCU more there.
  const std::optional<SplicedJpeg> near = SpliceJpegWindow(marked, 194, 98, 108, 58, 4);
  ASSERT_TRUE(near);
  EXPECT_EQ(near->x, 176);
  EXPECT_EQ(near->y, 80);
  EXPECT_EQ(near->width, 320 - 176);  // ends 2 pixels before 304: one more
  EXPECT_EQ(near->height, 160 - 80);  // ends 4 before 160: none
  EXPECT_LT(s->bytes.size(), marked.size() / 4);
  const Image decoded = DecodeImage(s->bytes, "spliced.jpg");
  EXPECT_EQ(decoded.width, s->width);
  EXPECT_EQ(MaxAbsDiff(CropImage(decoded, 200 - s->x, 100 - s->y, 100, 50),
                       CropImage(DecodeImage(plain, "p.jpg"), 200, 100, 100, 50)),
            0);
  // The right and bottom edges: up to the image's.
  const std::optional<SplicedJpeg> corner = SpliceJpegWindow(marked, 630, 400, 10, 8, 4);
  ASSERT_TRUE(corner);
  EXPECT_EQ(corner->x + corner->width, 640);
  EXPECT_EQ(corner->y + corner->height, 408);
  // Windows outside the image: none.
  EXPECT_FALSE(SpliceJpegWindow(marked, 600, 0, 41, 10, 4));
  EXPECT_FALSE(SpliceJpegWindow(marked, -1, 0, 10, 10, 4));
}

// Damaged scans are not spliced, so that the plain decode reports them: a truncated file,
// a restart marker out of order, a missing one, one too many.
TEST(JpegRestartSpliceTest, DamagedScansAreNotSpliced) {
  const std::string plain = ReadFile(ImageFilesIn("images/photos-by-class/100").at(0));
  const std::string marked = WithRestarts(plain, 1);
  ASSERT_TRUE(SpliceJpegWindow(marked, 200, 100, 100, 50, 4));
  EXPECT_FALSE(SpliceJpegWindow(marked.substr(0, marked.size() - 2), 200, 100, 100, 50, 4));
  EXPECT_FALSE(SpliceJpegWindow(marked.substr(0, marked.size() / 2), 200, 100, 100, 50, 4));
  const size_t rst = marked.find("\xFF\xD3");
  ASSERT_NE(rst, std::string::npos);
  std::string reordered = marked;
  reordered[rst + 1] = '\xD4';
  EXPECT_FALSE(SpliceJpegWindow(reordered, 200, 100, 100, 50, 4));
  std::string missing = marked;
  missing.erase(rst, 2);
  EXPECT_FALSE(SpliceJpegWindow(missing, 200, 100, 100, 50, 4));
  std::string extra = marked;
  extra.insert(marked.size() - 2, "\xFF\xD0");
  EXPECT_FALSE(SpliceJpegWindow(extra, 200, 100, 100, 50, 4));
  // And the region decode of a file cut above the window reports it.
  JpegRegionOptions options;
  options.crop = CropWindow{200, 300, 100, 50};
  EXPECT_THROW(DecodeJpegRegion(marked.substr(0, marked.size() / 2), "cut.jpg", options), DataError);
}

// Fill bytes (0xFF 0xFF ...) before a restart marker are not data: the splice of a file
// with fill bytes before every marker decodes as the splice of the file without.
TEST(JpegRestartSpliceTest, FillBytesBeforeMarkersAreNotData) {
  const std::string plain = ReadFile(ImageFilesIn("images/photos-by-class/100").at(0));
  const std::string marked = WithRestarts(plain, 1);
  std::string filled;
  size_t markers = 0;
  const size_t scan = marked.find("\xFF\xDA");
  for (size_t i = 0; i < marked.size(); ++i) {
    const bool rst = i > scan && i + 1 < marked.size() && marked[i] == '\xFF' &&
                     (marked[i + 1] & 0xF8) == 0xD0;
    if (rst) {
      filled.append(1 + markers % 3, '\xFF');  // 1 to 3 fill bytes
      ++markers;
    }
    filled.push_back(marked[i]);
  }
  ASSERT_GT(markers, 100u);
  const std::optional<SplicedJpeg> a = SpliceJpegWindow(marked, 200, 100, 100, 50, 4);
  const std::optional<SplicedJpeg> b = SpliceJpegWindow(filled, 200, 100, 100, 50, 4);
  ASSERT_TRUE(a && b);
  EXPECT_GT(b->bytes.size(), a->bytes.size());  // the fill bytes inside the runs are kept
  EXPECT_EQ(std::make_tuple(a->x, a->y, a->width, a->height),
            std::make_tuple(b->x, b->y, b->width, b->height));
  EXPECT_EQ(MaxAbsDiff(DecodeImage(a->bytes, "a.jpg"), DecodeImage(b->bytes, "b.jpg")), 0);
}

// SpliceJpegWindowInto reuses the buffer it is given, whatever it held, and writes what
// SpliceJpegWindow returns.
TEST(JpegRestartSpliceTest, SpliceIntoReusesTheBuffer) {
  const std::string plain = ReadFile(ImageFilesIn("images/photos-by-class/100").at(0));
  const std::string marked = WithRestarts(plain, 1);
  SplicedJpeg out;
  out.bytes.assign(marked.size() * 2, 'x');
  const char* buffer = out.bytes.data();
  for (const CropWindow& w : {CropWindow{200, 100, 100, 50}, CropWindow{0, 0, 10, 10},
                              CropWindow{630, 400, 10, 8}}) {
    ASSERT_TRUE(SpliceJpegWindowInto(marked, w.x, w.y, w.width, w.height, 4, out));
    const std::optional<SplicedJpeg> fresh = SpliceJpegWindow(marked, w.x, w.y, w.width, w.height, 4);
    ASSERT_TRUE(fresh);
    EXPECT_EQ(out.bytes, fresh->bytes);
    EXPECT_EQ(std::make_tuple(out.x, out.y, out.width, out.height),
              std::make_tuple(fresh->x, fresh->y, fresh->width, fresh->height));
    EXPECT_EQ(out.bytes.data(), buffer);
  }
}

// The 0xFF mask of 64 bytes is the portable loop's, at every length and alignment.
TEST(JpegRestartSpliceTest, FfByteMaskMatchesPortable) {
  std::string bytes(200, '\0');
  SplitMix64 random(7);
  for (int round = 0; round < 50; ++round) {
    for (char& b : bytes) b = random.Below(4) == 0 ? '\xFF' : static_cast<char>(random.Below(256));
    for (size_t at = 0; at < 70; ++at) {
      for (size_t n : {size_t{0}, size_t{1}, size_t{15}, size_t{16}, size_t{63}, size_t{64},
                       size_t{65}, bytes.size() - at}) {
        const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + at);
        ASSERT_EQ(splice_internal::FfByteMask(p, n), splice_internal::FfByteMaskPortable(p, n))
            << "at " << at << " n " << n;
      }
    }
  }
  EXPECT_EQ(splice_internal::FfByteMaskPortable(reinterpret_cast<const unsigned char*>("\xFF\x00\xFF"), 3),
            0b101u);
}

}  // namespace
}  // namespace imgpipe
