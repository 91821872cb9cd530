#include "image/pcx_decoder.h"

#include <gtest/gtest.h>

#include "image/decoder_test_util.h"

namespace imgpipe {
namespace {

using Px = std::vector<uint8_t>;

// A 128-byte PCX header; the 16-colour palette holds colour i = (i, 2i, 3i).
std::string PcxHeader(int width, int height, int bits, int planes, int stride) {
  std::string h = Bytes({10, 5, 1, bits}) + Le16(0) + Le16(0) + Le16(width - 1) +
                  Le16(height - 1) + Le16(72) + Le16(72);
  for (int i = 0; i < 16; ++i) h += Bytes({i, 2 * i, 3 * i});
  h += Bytes({0, planes}) + Le16(stride) + Le16(1);
  h.resize(128, '\0');
  return h;
}

TEST(PcxDecoderTest, EightBitPaletteAndRgbPlanes) {
  // 8 bits, 1 plane, stride 2: a run of 2 (0xC2 5) and literals; palette at the end.
  std::string pcx = PcxHeader(2, 2, 8, 1, 2) + Bytes({0xC2, 5, 1, 0xC1, 0xC7});
  std::string palette(768, '\0');
  palette[15] = 100;  // colour 5 = (100, 0, 0)
  palette[3] = 1, palette[4] = 2, palette[5] = 3;
  palette[3 * 0xC7 + 2] = 42;
  EXPECT_EQ(DecodeRgb(pcx + "\x0C" + palette, 2, 2, ImageFormat::kPcx),
            (Px{100, 0, 0, 100, 0, 0, 1, 2, 3, 0, 0, 42}));
  // Without the palette: gray levels.
  EXPECT_EQ(DecodeRgb(pcx, 2, 2, ImageFormat::kPcx)[0], 5);
  // 8 bits, 3 planes (each line R, G, B), a run crossing from one plane to the next:
  // R plane 9 9, G plane 9 8, B plane 7 0.
  std::string rgb = PcxHeader(1, 1, 8, 3, 2) + Bytes({0xC3, 9, 8, 7, 0});
  EXPECT_EQ(DecodeRgb(rgb, 1, 1, ImageFormat::kPcx), (Px{9, 9, 7}));
}

TEST(PcxDecoderTest, OneBitImages) {
  // 1 plane: 0 black, 1 white. 10 pixels, stride 2.
  std::string mono = PcxHeader(10, 1, 1, 1, 2) + Bytes({0xA0, 0x40});
  Px px = DecodeRgb(mono, 10, 1, ImageFormat::kPcx);
  EXPECT_EQ((Px{px[0], px[3], px[6], px[27]}), (Px{255, 0, 255, 255}));
  // 4 planes: 16 colours from the header palette; pixel 0 has bits 1,0,1,0 -> index 5.
  std::string ega = PcxHeader(1, 1, 1, 4, 1) + Bytes({0x80, 0x00, 0x80, 0x00});
  EXPECT_EQ(DecodeRgb(ega, 1, 1, ImageFormat::kPcx), (Px{5, 10, 15}));
}

TEST(PcxDecoderTest, BadDataIsADataError) {
  std::string pcx = PcxHeader(4, 4, 8, 1, 4) + std::string(16, '\x01');
  DecodeFailure cut = FailureOf(pcx.substr(0, pcx.size() - 3));
  EXPECT_EQ(cut.reason, "truncated PCX data: 13 of 16 bytes");
  EXPECT_EQ(cut.offset, pcx.size() - 3);
  std::string window = pcx;
  window[4] = 9;  // x0 past x1 (3)
  EXPECT_EQ(FailureOf(window).reason, "invalid PCX: window of -5x4 pixels");
  EXPECT_EQ(FailureOf(PcxHeader(4, 4, 8, 2, 4) + std::string(32, '\x01')).reason,
            "unsupported PCX: 8 bits x 2 planes");
  EXPECT_EQ(FailureOf(PcxHeader(40, 4, 8, 1, 4) + std::string(160, '\x01')).reason,
            "invalid PCX: 4 bytes per line for 40 pixels");
}

TEST(PcxDecoderTest, OversizedHeaderIsRefusedBeforeAllocation) {
  std::string big = PcxHeader(65535, 65535, 8, 3, 65535) + Bytes({0xFF, 0});
  EXPECT_EQ(FailureOf(big).reason,
            "image too large: 65535x65535 pixels exceeds the limit of 268435456");
  // Within the pixel budget but far more than the data can code.
  std::string wide = PcxHeader(16000, 16000, 8, 1, 16000) + Bytes({0xFF, 0});
  EXPECT_EQ(FailureOf(wide).reason,
            "truncated PCX data: 256000000 bytes cannot come from the 2 bytes left");
}

}  // namespace
}  // namespace imgpipe
