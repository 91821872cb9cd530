#include "image/bmp_rle_decoder.h"

#include <gtest/gtest.h>

#include "image/decode_warnings.h"
#include "image/decoder_test_util.h"
#include "image/dib_decoder.h"
#include "image/pil_test_util.h"

namespace imgpipe {
namespace {

// An RLE BMP of `width` x `height` (negative: top-down) whose codes are `codes`, written
// byte by byte: file header, 40-byte info header, a palette of `colors` entries (index i:
// B = 13i + 50, G = 91i, R = 37i, each mod 256), the codes.
std::string RleBmp(int width, int height, const std::string& codes, bool rle4 = false,
                   int colors = 0) {
  const int entries = colors ? colors : rle4 ? 16 : 256;
  std::string palette;
  for (int i = 0; i < entries; ++i) palette += Bytes({(13 * i + 50) % 256, (91 * i) % 256, (37 * i) % 256, 0});
  const uint32_t offset = 14 + 40 + palette.size();
  return "BM" + Le32(offset + codes.size()) + Le32(0) + Le32(offset) + Le32(40) + Le32(width) +
         Le32(static_cast<uint32_t>(height)) + Le16(1) + Le16(rle4 ? 4 : 8) + Le32(rle4 ? 2 : 1) +
         Le32(codes.size()) + Le32(2835) + Le32(2835) + Le32(colors) + Le32(0) + palette + codes;
}

Image Decode(const std::string& bytes) { return DecodeImage(bytes, "x.bmp"); }

// Files Pillow 9.4 decodes, each to Pillow's pixels; those with runs past a row or the
// image, or no end-of-bitmap code, count one decode with warnings.
TEST(BmpRleDecoderTest, MatchesPillowOnOverflowingAndShortRuns) {
  struct Case {
    std::string name, bytes;
    bool repaired;
  };
  const std::vector<Case> cases = {
      {"whole.bmp", RleBmp(6, 3, Bytes({6, 1, 0, 0, 6, 2, 0, 0, 6, 3, 0, 1})), false},
      {"top_down.bmp", RleBmp(6, -3, Bytes({6, 1, 0, 0, 6, 2, 0, 0, 6, 3, 0, 1})), false},
      {"no_end.bmp", RleBmp(6, 3, Bytes({6, 1, 0, 0, 6, 2, 0, 0, 6, 3})), false},
      {"short_rows.bmp", RleBmp(6, 3, Bytes({3, 1, 0, 0, 6, 2, 0, 0, 2, 3, 0, 0, 0, 1})), false},
      {"absolute.bmp", RleBmp(6, 3, Bytes({0, 4, 9, 8, 7, 6, 2, 5, 0, 0, 0, 3, 1, 2, 3, 0, 3, 4, 0, 0,
                                           6, 200, 0, 1})), false},
      {"row_overflow.bmp", RleBmp(6, 3, Bytes({9, 1, 0, 0, 6, 2, 0, 0, 6, 3, 0, 1})), true},
      {"absolute_overflow.bmp",
       RleBmp(6, 3, Bytes({0, 8, 1, 2, 3, 4, 5, 6, 7, 8, 3, 9, 0, 0, 6, 3, 0, 1})), true},
      {"image_overflow.bmp",
       RleBmp(6, 3, Bytes({6, 1, 0, 0, 6, 2, 0, 0, 0, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 1})), true},
      {"rle4.bmp", RleBmp(7, 2, Bytes({7, 0x12, 0, 0, 0, 4, 0x34, 0x56, 3, 0xF0, 0, 1}), true), false},
      {"rle4_overflow.bmp", RleBmp(6, 3, Bytes({9, 0x12, 0, 0, 7, 0x56, 0, 0, 6, 0x78, 0, 1}), true), true},
      {"rle4_5_colors.bmp", RleBmp(6, 2, Bytes({6, 0x1F, 0, 0, 6, 0x56, 0, 1}), true, 5), false},
  };
  std::map<std::string, std::string> files;
  for (const Case& c : cases) files[c.name] = c.bytes;
  const auto pil = PillowDecodes(TestDir("bmp_rle"), files);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_TRUE(pil.at(c.name).has_value()) << "Pillow refused it";
    const uint64_t warned = DecodeWarningCount();
    EXPECT_TRUE(SameImage(Decode(c.bytes), *pil.at(c.name)));
    EXPECT_EQ(DecodeWarningCount() - warned, c.repaired ? 1u : 0u);
  }
}

// Where Pillow 9.4 refuses the file or misreads it (python-pillow/Pillow#9443, #9710),
// imgpipe reads what the format says: the same pixels as Pillow's decode of a file that
// spells the same image out without the construct.
TEST(BmpRleDecoderTest, FollowsTheFormatWherePillow94DoesNot) {
  struct Case {
    std::string name, bytes, spelled_out;
    bool repaired;
  };
  const std::vector<Case> cases = {
      // End of bitmap early: the rest 0 (Pillow 9.4: "not enough image data").
      {"early_end", RleBmp(6, 3, Bytes({6, 1, 0, 0, 2, 2, 0, 1})),
       RleBmp(6, 3, Bytes({6, 1, 0, 0, 2, 2, 4, 0, 0, 0, 6, 0, 0, 1})), false},
      // A delta of 2 right and 1 up, after 2 pixels of row 0: row 1 from column 4.
      {"delta", RleBmp(6, 3, Bytes({2, 7, 0, 2, 2, 1, 2, 5, 0, 0, 6, 9, 0, 1})),
       RleBmp(6, 3, Bytes({2, 7, 4, 0, 0, 0, 4, 0, 2, 5, 0, 0, 6, 9, 0, 1})), false},
      // An RLE4 absolute run of 5 pixels (3 bytes, then the padding byte).
      {"rle4_odd", RleBmp(6, 2, Bytes({0, 5, 0x12, 0x34, 0x50, 0, 1, 0xEE, 0, 0, 6, 0x77, 0, 1}), true),
       RleBmp(6, 2, Bytes({1, 0x11, 1, 0x22, 1, 0x33, 1, 0x44, 1, 0x55, 1, 0xEE, 0, 0, 6, 0x77, 0, 1}), true),
       false},
  };
  std::map<std::string, std::string> files;
  for (const Case& c : cases) files[c.name + ".bmp"] = c.spelled_out;
  const auto pil = PillowDecodes(TestDir("bmp_rle_format"), files);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_TRUE(pil.at(c.name + ".bmp").has_value());
    const uint64_t warned = DecodeWarningCount();
    EXPECT_TRUE(SameImage(Decode(c.bytes), *pil.at(c.name + ".bmp")));
    EXPECT_EQ(DecodeWarningCount() - warned, c.repaired ? 1u : 0u);
  }
}

TEST(BmpRleDecoderTest, DibAndGrayOutputTakeTheSamePath) {
  const std::string bmp = RleBmp(6, 3, Bytes({9, 1, 0, 0, 0, 3, 4, 5, 6, 0, 0, 0, 6, 3, 0, 1}));
  ASSERT_TRUE(IsRleBmp(bmp));
  const Image rgb = Decode(bmp);
  EXPECT_TRUE(SameImage(DecodeImage(bmp.substr(14), "x.dib"), rgb));  // the DIB alone
  DecodeOptions gray;
  gray.channels = 1;
  const Image luma = DecodeImage(bmp, "x.bmp", gray);
  ASSERT_EQ(luma.pixels.size(), 18u);
  for (size_t i = 0; i < 18; ++i) {
    EXPECT_EQ(luma.pixels[i], (299 * rgb.pixels[3 * i] + 587 * rgb.pixels[3 * i + 1] +
                               114 * rgb.pixels[3 * i + 2] + 500) / 1000);
  }
}

TEST(BmpRleDecoderTest, BadHeadersAreDataErrors) {
  const std::string bmp = RleBmp(6, 3, Bytes({6, 1, 0, 1}));
  std::string deep = bmp;
  deep[28] = 24;
  EXPECT_EQ(FailureOf(deep).reason, "unsupported BMP: RLE8 compression at 24 bits per pixel");
  std::string colors = bmp;
  colors.replace(46, 4, Le32(300));
  EXPECT_EQ(FailureOf(colors).reason, "invalid BMP: palette of 300 colours");
  std::string past = bmp;
  past.replace(10, 4, Le32(bmp.size() + 10));
  const DecodeFailure f = FailureOf(past);
  EXPECT_EQ(f.reason, "truncated BMP: the pixel data at byte " + std::to_string(bmp.size() + 10) +
                          " lies past the end of the file");
  EXPECT_EQ(f.offset, 10u);
  EXPECT_EQ(FailureOf(bmp.substr(0, 300)).reason, "truncated BMP palette");
  // Data that ends before the image is whole, without the end code (Pillow: "not enough
  // image data"), inside a run or between runs.
  for (const std::string& codes : {Bytes({6, 1, 0, 0, 6, 2}), Bytes({6, 1, 0, 0, 0, 9, 1, 2}),
                                   Bytes({6, 1, 0, 2, 1})}) {
    const std::string cut = RleBmp(6, 3, codes);
    const DecodeFailure t = FailureOf(cut);
    EXPECT_EQ(t.reason, "truncated BMP: the run-length data ends before the image is whole "
                        "(no end-of-bitmap code)");
    EXPECT_EQ(t.offset, cut.size());
  }
  EXPECT_EQ(FailureOf(RleBmp(60000, 60000, Bytes({0, 1}))).reason,
            "image too large: 60000x60000 pixels exceeds the limit of 268435456");
}

}  // namespace
}  // namespace imgpipe
