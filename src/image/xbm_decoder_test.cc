#include "image/xbm_decoder.h"

#include <gtest/gtest.h>

#include "image/decoder_test_util.h"

namespace imgpipe {
namespace {

using Px = std::vector<uint8_t>;

const char kXbm[] =
    "#define im_width 10\n#define im_height 2\n#define im_x_hot 1\n#define im_y_hot 1\n"
    "static char im_bits[] = {\n0x01,0x02, 0xFF,0x3\n};\n";

TEST(XbmDecoderTest, BitsLeastSignificantFirstSetIsWhite) {
  Px px = DecodeRgb(kXbm, 10, 2, ImageFormat::kXbm);
  Px row0, row1;
  for (int x = 0; x < 10; ++x) row0.push_back(px[3 * x]), row1.push_back(px[30 + 3 * x]);
  EXPECT_EQ(row0, (Px{255, 0, 0, 0, 0, 0, 0, 0, 0, 255}));
  EXPECT_EQ(row1, (Px{255, 255, 255, 255, 255, 255, 255, 255, 255, 255}));
}

TEST(XbmDecoderTest, BadTextIsADataError) {
  std::string xbm = kXbm;
  DecodeFailure cut = FailureOf(xbm.substr(0, xbm.find("0x3")));
  EXPECT_EQ(cut.reason, "truncated XBM data: 1 of 2 rows");
  std::string bad = xbm;
  bad.replace(bad.find("0x02"), 4, "0xZZ");
  DecodeFailure f = FailureOf(bad);
  EXPECT_EQ(f.reason, "invalid XBM: expected a hex byte such as 0x3c");
  EXPECT_EQ(f.offset, xbm.find("0x02"));
  EXPECT_EQ(FailureOf("#define a_height 3\nstatic char a_bits[] = {0};").reason,
            "invalid XBM: no _width and _height defines");
  std::string x10 = xbm;
  x10.replace(x10.find("0x02"), 4, "0x1234");
  EXPECT_EQ(FailureOf(x10).reason, "unsupported XBM: values over 0xff (X10 16-bit words)");
}

TEST(XbmDecoderTest, OversizedHeaderIsRefusedBeforeAllocation) {
  EXPECT_EQ(FailureOf("#define a_width 99999\n#define a_height 99999\nstatic char a_bits[] = {"
                      "0x00};").reason,
            "image too large: 99999x99999 pixels exceeds the limit of 268435456");
  EXPECT_EQ(FailureOf("#define a_width 9999\n#define a_height 9999\nstatic char a_bits[] = {"
                      "0x00};").reason,
            "truncated XBM data: 9999x9999 pixels need more text");
}

}  // namespace
}  // namespace imgpipe
