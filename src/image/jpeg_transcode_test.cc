#include "image/jpeg_transcode.h"

#include <gtest/gtest.h>
#include <string>
#include <vector>

#include "image/codec.h"
#include "image/image_test_util.h"
#include "image/jpeg_markers.h"
#include "image/jpeg_test_util.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe {
namespace {

// The bytes of every APPn (n >= 1) and COM segment before the first scan, in order.
std::vector<std::string> MetadataSegments(const std::string& jpeg) {
  std::vector<std::string> out;
  size_t pos = 2;
  while (pos + 4 <= jpeg.size() && static_cast<uint8_t>(jpeg[pos]) == 0xFF) {
    const int marker = static_cast<uint8_t>(jpeg[pos + 1]);
    const size_t length = static_cast<uint8_t>(jpeg[pos + 2]) << 8 | static_cast<uint8_t>(jpeg[pos + 3]);
    if (marker == 0xDA) break;
    if ((marker >= 0xE1 && marker <= 0xEF) || marker == 0xFE) out.push_back(jpeg.substr(pos, 2 + length));
    pos += 2 + length;
  }
  return out;
}

TEST(JpegTranscodeTest, RealPhotosKeepTheirPixelsAndGainTheInterval) {
  std::vector<std::string> paths = ImageFilesIn("images/photos-by-class/100");
  for (const std::string& p : ImageFilesIn("images/mixed-formats/0")) paths.push_back(p);
  ASSERT_GE(paths.size(), 14u);
  for (const std::string& path : paths) {
    SCOPED_TRACE(path);
    const std::string jpeg = ReadFile(path);
    for (int interval : {1, 4, 1000}) {
      const std::optional<std::string> rewritten = AddJpegRestartMarkers(jpeg, path, interval).jpeg;
      ASSERT_TRUE(rewritten.has_value());
      EXPECT_EQ(JpegLayoutOf(*rewritten).restart_interval, interval);
      EXPECT_EQ(MaxAbsDiff(DecodeImage(*rewritten, "r.jpg"), DecodeImage(jpeg, path)), 0);
      EXPECT_EQ(MetadataSegments(*rewritten), MetadataSegments(jpeg));
      // Already so: nothing to do.
      EXPECT_FALSE(AddJpegRestartMarkers(*rewritten, path, interval).jpeg.has_value());
    }
  }
}

TEST(JpegTranscodeTest, ExifOrientationAndProgressiveFiles) {
  const std::string photo = ReadFile(ImageFilesIn("images/photos-by-class/100").at(0));
  const std::string oriented = WithExifOrientation(photo, 6);
  const std::optional<std::string> rewritten = AddJpegRestartMarkers(oriented, "o.jpg", 1).jpeg;
  ASSERT_TRUE(rewritten.has_value());
  EXPECT_EQ(ScanJpegMarkers(*rewritten).orientation, 6);
  EXPECT_EQ(MaxAbsDiff(DecodeImage(*rewritten, "r.jpg"), DecodeImage(oriented, "o.jpg")), 0);

  // A progressive file becomes sequential, with the same pixels.
  const Image pixels = DecodeImage(photo, "p.jpg");
  const std::string progressive = TurboEncode(pixels.pixels, pixels.width, pixels.height,
                                              TJPF_RGB, TJSAMP_420, TJFLAG_PROGRESSIVE);
  ASSERT_TRUE(JpegLayoutOf(progressive).progressive);
  const std::optional<std::string> sequential = AddJpegRestartMarkers(progressive, "p.jpg", 1).jpeg;
  ASSERT_TRUE(sequential.has_value());
  EXPECT_FALSE(JpegLayoutOf(*sequential).progressive);
  EXPECT_EQ(MaxAbsDiff(DecodeImage(*sequential, "s.jpg"), DecodeImage(progressive, "p.jpg")), 0);
}

TEST(JpegTranscodeTest, CmykIsLeftAsItIs) {
  const std::vector<unsigned char> cmyk(33 * 17 * 4, 90);
  const std::string jpeg = TurboEncode(cmyk, 33, 17, TJPF_CMYK, TJSAMP_444, 0);
  EXPECT_FALSE(AddJpegRestartMarkers(jpeg, "cmyk.jpg", 1).jpeg.has_value());
}

// A JPEG that decodes but that libjpeg cannot rewrite with restart markers is kept as
// given, with the reason; never refused (issue 44).
TEST(JpegTranscodeTest, AFailedRewriteKeepsTheInputWithTheReason) {
  const std::vector<unsigned char> gray(64 * 24, 120);
  const std::string jpeg = WithDcPastBaselineRange(TurboEncode(gray, 64, 24, TJPF_GRAY, TJSAMP_GRAY, 0));
  const Image pixels = DecodeImage(jpeg, "dc.jpg");
  EXPECT_EQ(pixels.width, 64);
  const JpegRestartRewrite rewrite = AddJpegRestartMarkers(jpeg, "dc.jpg", 1);
  EXPECT_FALSE(rewrite.jpeg.has_value());
  EXPECT_EQ(rewrite.failure, "cannot rewrite the JPEG: DCT coefficient out of range");
  // An interval long enough to hold no DC past the range rewrites it.
  const JpegRestartRewrite long_interval = AddJpegRestartMarkers(jpeg, "dc.jpg", 1000);
  ASSERT_TRUE(long_interval.jpeg.has_value());
  EXPECT_TRUE(long_interval.failure.empty());
  EXPECT_EQ(MaxAbsDiff(DecodeImage(*long_interval.jpeg, "r.jpg"), pixels), 0);
  // Kept by design: no failure.
  EXPECT_TRUE(AddJpegRestartMarkers(*long_interval.jpeg, "r.jpg", 1000).failure.empty());
  // A truncated one is still refused, rewrite or not.
  EXPECT_THROW(AddJpegRestartMarkers(jpeg.substr(0, jpeg.size() / 2), "half.jpg", 1), DataError);
}

TEST(JpegTranscodeTest, BadInputsAreErrorsNamingThePath) {
  const std::string photo = ReadFile(ImageFilesIn("images/photos-by-class/100").at(0));
  for (int interval : {0, -1, 65536}) {
    EXPECT_THROW(AddJpegRestartMarkers(photo, "p.jpg", interval), Error) << interval;
  }
  for (const std::string& bad : {photo.substr(0, photo.size() / 2), std::string("not an image"),
                                 ReadFile(TestDataPath("images/mixed-formats/2/cat-1046544_640.png"))}) {
    try {
      AddJpegRestartMarkers(bad, "bad.jpg", 1);
      ADD_FAILURE() << "no error";
    } catch (const DataError& e) {
      EXPECT_EQ(e.path(), "bad.jpg") << e.what();
    }
  }
}

}  // namespace
}  // namespace imgpipe
