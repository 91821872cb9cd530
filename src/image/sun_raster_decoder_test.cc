#include "image/sun_raster_decoder.h"

#include <gtest/gtest.h>

#include "image/decoder_test_util.h"

namespace imgpipe {
namespace {

using Px = std::vector<uint8_t>;

std::string SunHeader(int width, int height, int depth, int type, int map_length) {
  return Be32(0x59A66A95) + Be32(width) + Be32(height) + Be32(depth) + Be32(0) + Be32(type) +
         Be32(map_length ? 1 : 0) + Be32(map_length);
}

TEST(SunRasterDecoderTest, DepthsAndTypes) {
  // 24 bits, standard: B, G, R; rows padded to 16 bits (3 pixels: 9 bytes + 1).
  std::string bgr = SunHeader(3, 1, 24, 1, 0) + Bytes({1, 2, 3, 4, 5, 6, 7, 8, 9, 0});
  EXPECT_EQ(DecodeRgb(bgr, 3, 1, ImageFormat::kSunRaster), (Px{3, 2, 1, 6, 5, 4, 9, 8, 7}));
  // Type 3: R, G, B.
  std::string rgb = SunHeader(1, 1, 24, 3, 0) + Bytes({1, 2, 3, 0});
  EXPECT_EQ(DecodeRgb(rgb, 1, 1, ImageFormat::kSunRaster), (Px{1, 2, 3}));
  // 8 bits with a 2-colour map (planar: reds, greens, blues).
  std::string mapped = SunHeader(2, 1, 8, 1, 6) + Bytes({10, 11, 20, 21, 30, 31}) + Bytes({1, 0});
  EXPECT_EQ(DecodeRgb(mapped, 2, 1, ImageFormat::kSunRaster), (Px{11, 21, 31, 10, 20, 30}));
  // 1 bit: a set bit is black.
  std::string mono = SunHeader(3, 1, 1, 1, 0) + Bytes({0xA0, 0});
  EXPECT_EQ(DecodeRgb(mono, 3, 1, ImageFormat::kSunRaster), (Px{0, 0, 0, 255, 255, 255, 0, 0, 0}));
}

TEST(SunRasterDecoderTest, ByteEncoded) {
  // 8-bit gray, 4 x 2: 0x80 2 v = 3 copies of v; 0x80 0 = one 0x80; rows span runs.
  std::string rle = SunHeader(4, 2, 8, 2, 0) + Bytes({0x80, 2, 9, 0x80, 0, 0x80, 3, 5, 1});
  EXPECT_EQ(DecodeRgb(rle, 4, 2, ImageFormat::kSunRaster),
            (Px{9, 9, 9, 9, 9, 9, 9, 9, 9, 0x80, 0x80, 0x80, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5}));
  DecodeFailure f = FailureOf(rle.substr(0, rle.size() - 3));
  EXPECT_EQ(f.reason, "truncated Sun raster data");
  EXPECT_EQ(f.offset, rle.size() - 3);
}

TEST(SunRasterDecoderTest, BadHeadersAndTruncation) {
  std::string raw = SunHeader(4, 4, 8, 1, 0) + std::string(16, 'a');
  DecodeFailure f = FailureOf(raw.substr(0, 40));
  EXPECT_EQ(f.reason, "truncated Sun raster data");
  EXPECT_EQ(f.offset, 32u);
  EXPECT_EQ(FailureOf(SunHeader(4, 4, 7, 1, 0)).reason, "unsupported Sun raster: depth 7");
  EXPECT_EQ(FailureOf(SunHeader(4, 4, 8, 1, 4000)).reason,
            "unsupported Sun raster: colour map of type 1 and 4000 bytes");
  std::string index = SunHeader(1, 1, 8, 1, 3) + Bytes({1, 2, 3}) + Bytes({5, 0});
  EXPECT_EQ(FailureOf(index).reason, "invalid Sun raster: colour index 5 beyond the map's 1");
  // 100000 x 100000 in a 32-byte file: refused by the pixel budget, not allocated.
  EXPECT_EQ(FailureOf(SunHeader(100000, 100000, 24, 2, 0)).reason,
            "image too large: 100000x100000 pixels exceeds the limit of 268435456");
}

}  // namespace
}  // namespace imgpipe
