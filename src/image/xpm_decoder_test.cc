#include "image/xpm_decoder.h"

#include <gtest/gtest.h>

#include "image/decode_warnings.h"
#include "image/decoder_test_util.h"
#include "image/pil_test_util.h"

namespace imgpipe {
namespace {

// An XPM as GIMP writes one: the values line, a colour line per key, a row per line;
// with `comment`, ImageMagick's "/* pixels */" line before the rows.
std::string Xpm(const std::vector<std::string>& rows,
                const std::vector<std::pair<std::string, std::string>>& colors, int key_chars = 1,
                bool comment = false, const char* newline = "\n") {
  std::string out = std::string("/* XPM */") + newline + "static char *x[] = {" + newline;
  out += "\"" + std::to_string(rows[0].size() / key_chars) + " " + std::to_string(rows.size()) +
         " " + std::to_string(colors.size()) + " " + std::to_string(key_chars) + "\"," + newline;
  for (const auto& [key, value] : colors) out += "\"" + key + "\tc " + value + "\"," + newline;
  if (comment) out += std::string("/* pixels */") + newline;
  for (size_t y = 0; y < rows.size(); ++y) {
    out += "\"" + rows[y] + "\"" + (y + 1 < rows.size() ? "," : "};") + newline;
  }
  return out;
}

const std::vector<std::pair<std::string, std::string>> kColors = {
    {"a", "#FF0000"}, {"b", "#00ff80"}, {".", "None"}, {"c", "#123456"}, {" ", "#0000FF"}};
const std::vector<std::string> kRows = {"ab.c ", ".abc ", "c  ba"};

// Pillow 9.4's pixels for what it reads: LF and CRLF lines, a short row (the quote,
// comma and newline after it, then spaces), keys with no colour (black), missing rows
// (spaces). The last three count a decode with warnings.
TEST(XpmDecoderTest, MatchesPillow) {
  const std::string whole = Xpm(kRows, kColors);
  const std::map<std::string, std::string> files = {
      {"lf.xpm", whole},
      {"crlf.xpm", Xpm(kRows, kColors, 1, false, "\r\n")},
      {"short_row.xpm", Xpm({"ab.c ", ".ab", "c  ba"}, kColors)},
      {"no_colour.xpm", Xpm({"ab.cz", ".abc ", "c  ba"}, kColors)},
      {"cut.xpm", whole.substr(0, whole.size() - 20)},
  };
  const auto pil = PillowDecodes(TestDir("xpm"), files);
  for (const auto& [name, bytes] : files) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(pil.at(name).has_value());
    const uint64_t warned = DecodeWarningCount();
    EXPECT_TRUE(SameImage(DecodeImage(bytes, name), *pil.at(name)));
    EXPECT_EQ(DecodeWarningCount() - warned, name == "lf.xpm" || name == "crlf.xpm" ? 0u : 1u);
  }
  EXPECT_EQ(ReadImageInfo(whole, "x").format, ImageFormat::kXpm);
}

// Beyond Pillow: 2 characters per pixel (as the 1-character file spelling the same
// image), and the comment line before the rows skipped (Pillow reads it as a row).
TEST(XpmDecoderTest, ReadsTwoCharacterKeysAndSkipsComments) {
  const Image one = DecodeImage(Xpm(kRows, kColors), "x");
  std::vector<std::pair<std::string, std::string>> colors2;
  for (const auto& [key, value] : kColors) colors2.push_back({key + "~", value});
  std::vector<std::string> rows2;
  for (const std::string& row : kRows) {
    rows2.emplace_back();
    for (char c : row) rows2.back() += std::string(1, c) + "~";
  }
  EXPECT_TRUE(SameImage(DecodeImage(Xpm(rows2, colors2, 2), "x"), one));
  EXPECT_TRUE(SameImage(DecodeImage(Xpm(kRows, kColors, 1, true), "x"), one));
}

TEST(XpmDecoderTest, BadTextIsADataError) {
  std::vector<std::pair<std::string, std::string>> named = kColors;
  named[0].second = "red";
  const DecodeFailure f = FailureOf(Xpm(kRows, named));
  EXPECT_EQ(f.reason, "unsupported XPM: colour 'red' (imgpipe reads #RRGGBB and None)");
  EXPECT_EQ(f.offset, std::string("/* XPM */\nstatic char *x[] = {\n\"5 3 5 1\",\n").size());
  EXPECT_EQ(FailureOf("/* XPM */\nstatic char *x[] = {\n").reason, "invalid XPM: no values line");
  EXPECT_EQ(FailureOf("/* XPM */\n\"5 3  1\",\n").reason,
            "invalid XPM: a value missing in the values line");
  EXPECT_EQ(FailureOf("/* XPM */\n\"5 3 1 9\",\n").reason,
            "unsupported XPM: 9 characters per pixel (1 to 8 are read)");
  EXPECT_EQ(FailureOf("/* XPM */\n\"5 3 2 1\",\n\"a c #000000\",\n").reason,
            "truncated XPM: 1 of 2 colours");
  EXPECT_EQ(FailureOf("/* XPM */\n\"5 3 1 1\",\n\"a s x\",\n").reason,
            "invalid XPM: a colour line without a 'c' colour");
  EXPECT_EQ(FailureOf("/* XPM */\n\"99999 99999 1 1\",\n\"a c #000000\",\n").reason,
            "image too large: 99999x99999 pixels exceeds the limit of 268435456");
}

}  // namespace
}  // namespace imgpipe
