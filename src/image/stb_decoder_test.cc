#include "image/stb_decoder.h"

#include <gtest/gtest.h>

#include "image/decoder_test_util.h"

namespace imgpipe {
namespace {

using Px = std::vector<uint8_t>;

// A TGA header: no ID, no colour map, `type`, `width` x `height`, `depth` bits,
// descriptor (0x20: top-down rows).
std::string TgaHeader(int type, int width, int height, int depth, int descriptor) {
  return Bytes({0, 0, type}) + std::string(5, '\0') + Le16(0) + Le16(0) + Le16(width) +
         Le16(height) + Bytes({depth, descriptor});
}

TEST(StbDecoderTest, TgaTrueColourBottomUpAndRle) {
  // Rows bottom-up: the first row stored is the bottom one. Pixels are B, G, R.
  std::string raw = TgaHeader(2, 2, 2, 24, 0) + Bytes({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  EXPECT_EQ(DecodeRgb(raw, 2, 2, ImageFormat::kTga), (Px{9, 8, 7, 12, 11, 10, 3, 2, 1, 6, 5, 4}));
  // RLE (type 10), top-down: a run of 3 then 1 literal.
  std::string rle = TgaHeader(10, 2, 2, 24, 0x20) + Bytes({0x82, 1, 2, 3, 0x00, 4, 5, 6});
  EXPECT_EQ(DecodeRgb(rle, 2, 2, ImageFormat::kTga), (Px{3, 2, 1, 3, 2, 1, 3, 2, 1, 6, 5, 4}));
  // Gray (type 3).
  std::string gray = TgaHeader(3, 2, 1, 8, 0x20) + Bytes({0, 200});
  EXPECT_EQ(DecodeRgb(gray, 2, 1, ImageFormat::kTga), (Px{0, 0, 0, 200, 200, 200}));
}

TEST(StbDecoderTest, TruncatedTgaIsADataErrorNotBlackRows) {
  std::string raw = TgaHeader(2, 4, 4, 24, 0) + std::string(4 * 4 * 3, '\x10');
  ASSERT_EQ(FailureOf(raw).reason, "(no error)");
  // Too short to pass for a TGA at all: refused by its signature check.
  EXPECT_EQ(DetectImageFormat(raw.substr(0, 30)), ImageFormat::kUnknown);
  // RLE data can end early while the header still passes.
  std::string rle = TgaHeader(10, 4, 4, 24, 0) + Bytes({0x83, 1, 2, 3});
  DecodeFailure f = FailureOf(rle);
  EXPECT_EQ(f.reason, "truncated TGA data (the pixels run past the end)");
  EXPECT_EQ(f.offset, rle.size());
}

// A PSD of colour mode RGB, 8 bits, raw: the composite image's planes R, G, B.
std::string Psd(int width, int height, int channels, const std::string& planes,
                int compression = 0) {
  return "8BPS" + Be16(1) + std::string(6, '\0') + Be16(channels) + Be32(height) + Be32(width) +
         Be16(8) + Be16(3) + Be32(0) + Be32(0) + Be32(0) + Be16(compression) + planes;
}

TEST(StbDecoderTest, PsdCompositeImage) {
  std::string psd = Psd(2, 1, 3, Bytes({10, 20, 30, 40, 50, 60}));
  EXPECT_EQ(DecodeRgb(psd, 2, 1, ImageFormat::kPsd), (Px{10, 30, 50, 20, 40, 60}));
  // PackBits (compression 1): a byte count per row and channel, then the rows.
  std::string rle = Psd(2, 1, 3,
                        Be16(2) + Be16(2) + Be16(2) + Bytes({0xFF, 7, 0xFF, 8, 0xFF, 9}), 1);
  EXPECT_EQ(DecodeRgb(rle, 2, 1, ImageFormat::kPsd), (Px{7, 8, 9, 7, 8, 9}));
}

TEST(StbDecoderTest, BadPsdIsADataError) {
  std::string psd = Psd(8, 8, 3, std::string(8 * 8 * 3, '\x20'));
  EXPECT_EQ(FailureOf(psd.substr(0, psd.size() - 10)).reason,
            "truncated PSD data (the pixels run past the end)");
  std::string cmyk = psd;
  cmyk[25] = 4;  // colour mode CMYK
  EXPECT_EQ(FailureOf(cmyk).reason, "unsupported PSD: colour mode CMYK (imgpipe reads RGB PSDs)");
}

TEST(StbDecoderTest, OversizedHeaderIsRefusedBeforeDecoding) {
  // 65535 x 65535 TGA, 18 header bytes and a 1-byte RLE packet: refused by the pixel
  // budget (2^28 by default), before stb allocates 12 GiB.
  std::string tga = TgaHeader(10, 65535, 65535, 24, 0) + Bytes({0xFF, 1, 2, 3});
  EXPECT_EQ(FailureOf(tga).reason,
            "image too large: 65535x65535 pixels exceeds the limit of 268435456");
  EXPECT_EQ(FailureOf(TgaHeader(2, 4, 4, 24, 0) + std::string(48, 'a'), 15).reason,
            "image too large: 4x4 pixels exceeds the limit of 15");
  // The decoder itself checks the budget too (callers may skip ReadImageInfo).
  try {
    DecodeStb(ImageFormat::kTga, tga, "y", 1000);
    ADD_FAILURE() << "no DataError";
  } catch (const DataError& e) {
    EXPECT_EQ(e.reason(), "image too large: 65535x65535 pixels exceeds the limit of 1000");
  }
}

}  // namespace
}  // namespace imgpipe
