#include "image/ico_decoder.h"

#include <gtest/gtest.h>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "image/decoder_test_util.h"

namespace imgpipe {
namespace {

using Px = std::vector<uint8_t>;

// A 24-bit DIB of `width` x `height`, every pixel `bgr`, followed by its AND mask (the
// header's height doubled, as in ICO files).
std::string Dib(int width, int height, Px bgr) {
  std::string dib = Le32(40) + Le32(width) + Le32(2 * height) + Le16(1) + Le16(24) +
                    Le32(0) + Le32(0) + Le32(0) + Le32(0) + Le32(0) + Le32(0);
  const int row = (width * 3 + 3) / 4 * 4, mask_row = ((width + 31) / 32) * 4;
  for (int y = 0; y < height; ++y) {
    std::string line;
    for (int x = 0; x < width; ++x) line += std::string(bgr.begin(), bgr.end());
    line.resize(row, '\0');
    dib += line;
  }
  dib += std::string(size_t(mask_row) * height, '\xFF');  // all transparent: ignored
  return dib;
}

// An ICO of the given entries: (width, height, bits, image bytes).
struct Entry {
  int width, height, bits;
  std::string data;
};
std::string Ico(const std::vector<Entry>& entries, int type = 1) {
  std::string out = Le16(0) + Le16(type) + Le16(entries.size());
  uint32_t offset = 6 + 16 * entries.size();
  for (const Entry& e : entries) {
    out += Bytes({e.width & 0xFF, e.height & 0xFF, 0, 0}) + Le16(1) + Le16(e.bits) +
           Le32(e.data.size()) + Le32(offset);
    offset += e.data.size();
  }
  for (const Entry& e : entries) out += e.data;
  return out;
}

TEST(IcoDecoderTest, TakesTheLargestEntryAsPillowDoes) {
  std::string ico = Ico({{1, 1, 24, Dib(1, 1, {1, 2, 3})}, {3, 2, 24, Dib(3, 2, {10, 20, 30})},
                         {2, 2, 24, Dib(2, 2, {4, 5, 6})}});
  Px pixels = DecodeRgb(ico, 3, 2, ImageFormat::kIco);
  for (size_t i = 0; i < pixels.size(); i += 3) {
    EXPECT_EQ((Px{pixels[i], pixels[i + 1], pixels[i + 2]}), (Px{30, 20, 10}));
  }
  // A cursor (type 2): the first entry, or a later one wider and taller, as Pillow's
  // CUR reader (3x2 is not taller than 2x2; 4x4 is both).
  EXPECT_EQ(DecodeRgb(Ico({{2, 2, 24, Dib(2, 2, {4, 5, 6})}, {3, 2, 24, Dib(3, 2, {1, 2, 3})}}, 2),
                      2, 2, ImageFormat::kIco)[0], 6);
  EXPECT_EQ(DecodeRgb(Ico({{2, 2, 24, Dib(2, 2, {4, 5, 6})}, {4, 4, 24, Dib(4, 4, {1, 2, 3})}}, 2),
                      4, 4, ImageFormat::kIco)[0], 3);
}

TEST(IcoDecoderTest, PngEntry) {
  cv::Mat bgr(5, 4, CV_8UC3, cv::Scalar(7, 8, 9));
  std::vector<uint8_t> png;
  ASSERT_TRUE(cv::imencode(".png", bgr, png));
  std::string ico = Ico({{16, 16, 32, std::string(png.begin(), png.end())}});
  Px pixels = DecodeRgb(ico, 4, 5, ImageFormat::kIco);  // the PNG's own size
  EXPECT_EQ((Px{pixels[0], pixels[1], pixels[2]}), (Px{9, 8, 7}));
}

TEST(IcoDecoderTest, BadDirectoryAndEntriesAreDataErrors) {
  std::string ico = Ico({{2, 2, 24, Dib(2, 2, {4, 5, 6})}});
  DecodeFailure past = FailureOf(ico.substr(0, 22));
  EXPECT_EQ(past.reason, "invalid ICO: the image starts at byte 22, past the end of the file");
  EXPECT_EQ(past.offset, 6u);
  std::string many = ico;
  many[4] = 9;  // 9 entries, room for 1
  EXPECT_EQ(FailureOf(many).reason, "truncated ICO directory");
  std::string junk = Ico({{2, 2, 24, std::string(60, 'j')}});
  EXPECT_EQ(FailureOf(junk).reason, "invalid ICO: bitmap header of 1785358954 bytes");
  // A truncated bitmap: BMP's own check.
  EXPECT_NE(FailureOf(ico.substr(0, ico.size() - 12)).reason, "(no error)");
}

// The directory's size field is not read (Pillow reads neither ICO's nor CUR's): a
// cursor whose size is 0 or too small decodes as the one with the right size.
TEST(IcoDecoderTest, EntrySizeFieldIsIgnored) {
  const std::string cur = Ico({{3, 2, 24, Dib(3, 2, {10, 20, 30})}}, 2);
  const Px whole = DecodeRgb(cur, 3, 2, ImageFormat::kIco);
  for (uint32_t size : {0u, 10u}) {
    std::string wrong = cur;
    wrong.replace(6 + 8, 4, Le32(size));
    EXPECT_EQ(DecodeRgb(wrong, 3, 2, ImageFormat::kIco), whole) << size;
  }
}

// A DIB file (Pillow's DIB format: a BMP without its file header) is the BMP it would be.
TEST(IcoDecoderTest, DibFileIsItsBmp) {
  std::string dib = Dib(3, 2, {10, 20, 30});
  dib.replace(8, 4, Le32(2));  // its own height: no AND mask in a DIB file
  EXPECT_EQ(DetectImageFormat(dib), ImageFormat::kDib);
  const std::string bmp = "BM" + Le32(14 + dib.size()) + Le32(0) + Le32(54) + dib;
  EXPECT_EQ(DecodeRgb(dib, 3, 2, ImageFormat::kDib), DecodeRgb(bmp, 3, 2, ImageFormat::kBmp));
  std::string planes = dib;
  planes[12] = 2;  // not a DIB by its fields: unknown
  EXPECT_EQ(DetectImageFormat(planes), ImageFormat::kUnknown);
}

TEST(IcoDecoderTest, OversizedEntryIsRefusedBeforeDecoding) {
  std::string dib = Dib(1, 1, {1, 2, 3});
  std::string huge = dib;
  huge.replace(4, 8, Le32(60000) + Le32(120000));
  EXPECT_EQ(FailureOf(Ico({{0, 0, 24, huge}})).reason,
            "image too large: 60000x60000 pixels exceeds the limit of 268435456");
}

}  // namespace
}  // namespace imgpipe
