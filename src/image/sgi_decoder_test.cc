#include "image/sgi_decoder.h"

#include <gtest/gtest.h>

#include "image/decoder_test_util.h"

namespace imgpipe {
namespace {

using Px = std::vector<uint8_t>;

std::string SgiHeader(bool rle, int bpc, int dimension, int width, int height, int channels) {
  std::string h = Be16(474) + Bytes({rle ? 1 : 0, bpc}) + Be16(dimension) + Be16(width) +
                  Be16(height) + Be16(channels) + Be32(0) + Be32(255);
  h.resize(512, '\0');
  return h;
}

TEST(SgiDecoderTest, VerbatimRgbBottomUp) {
  // Planes R, G, B; within each the bottom row first.
  std::string sgi = SgiHeader(false, 1, 3, 2, 2, 3) + Bytes({1, 2, 3, 4}) +
                    Bytes({11, 12, 13, 14}) + Bytes({21, 22, 23, 24});
  EXPECT_EQ(DecodeRgb(sgi, 2, 2, ImageFormat::kSgi),
            (Px{3, 13, 23, 4, 14, 24, 1, 11, 21, 2, 12, 22}));
  // 16-bit samples: the high byte.
  std::string wide = SgiHeader(false, 2, 2, 2, 1, 1) + Be16(0x12FF) + Be16(0xAB00);
  EXPECT_EQ(DecodeRgb(wide, 2, 1, ImageFormat::kSgi), (Px{0x12, 0x12, 0x12, 0xAB, 0xAB, 0xAB}));
}

TEST(SgiDecoderTest, RleGray) {
  // Two rows of 3: row 0 (bottom) a run of 3 x 7; row 1 literals 1, 2, 3.
  std::string rows = Bytes({3, 7, 0}) + Bytes({0x83, 1, 2, 3, 0});
  std::string tables = Be32(528) + Be32(531) + Be32(3) + Be32(5);
  std::string sgi = SgiHeader(true, 1, 2, 3, 2, 1) + tables + rows;
  EXPECT_EQ(DecodeRgb(sgi, 3, 2, ImageFormat::kSgi),
            (Px{1, 1, 1, 2, 2, 2, 3, 3, 3, 7, 7, 7, 7, 7, 7, 7, 7, 7}));
  // A run past the row's width, and a row past the end of the file.
  std::string overlong = sgi;
  overlong[528] = 4;
  DecodeFailure f = FailureOf(overlong);
  EXPECT_EQ(f.reason, "invalid SGI: RLE row longer than the image width");
  EXPECT_EQ(f.offset, 528u);
  EXPECT_EQ(FailureOf(sgi.substr(0, sgi.size() - 2)).reason, "truncated SGI RLE row");
}

TEST(SgiDecoderTest, TruncatedAndOversized) {
  std::string sgi = SgiHeader(false, 1, 3, 4, 4, 3) + std::string(48, 'a');
  DecodeFailure f = FailureOf(sgi.substr(0, 540));
  EXPECT_EQ(f.reason, "truncated SGI data");
  EXPECT_EQ(f.offset, 512u);
  EXPECT_EQ(FailureOf(sgi.substr(0, 100)).reason, "truncated SGI header");
  EXPECT_EQ(FailureOf(SgiHeader(false, 1, 3, 65535, 65535, 3)).reason,
            "image too large: 65535x65535 pixels exceeds the limit of 268435456");
  EXPECT_EQ(FailureOf(SgiHeader(false, 1, 3, 4, 4, 7) + std::string(112, 'a')).reason,
            "unsupported SGI: 7 channels");
}

}  // namespace
}  // namespace imgpipe
