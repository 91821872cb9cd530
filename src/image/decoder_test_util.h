// Helpers for the tests of format_decoders.h's decoders: byte builders for hand-made
// files and DecodeImage's outcome on them.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "image/codec.h"
#include "util/error.h"

namespace imgpipe {

inline std::string Le16(uint32_t v) { return {char(v & 0xFF), char(v >> 8 & 0xFF)}; }
inline std::string Le32(uint32_t v) { return Le16(v & 0xFFFF) + Le16(v >> 16); }
inline std::string Be16(uint32_t v) { return {char(v >> 8 & 0xFF), char(v & 0xFF)}; }
inline std::string Be32(uint32_t v) { return Be16(v >> 16) + Be16(v & 0xFFFF); }
inline std::string Bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out += static_cast<char>(v);
  return out;
}

// DecodeImage's DataError for `bytes` (path "x"): its reason and offset; reason "(no
// error)" when the bytes decode.
struct DecodeFailure {
  std::string reason = "(no error)";
  std::optional<uint64_t> offset;
};

inline DecodeFailure FailureOf(const std::string& bytes, uint64_t max_pixels = kDefaultMaxPixels) {
  DecodeFailure out;
  try {
    DecodeOptions options;
    options.max_pixels = max_pixels;
    DecodeImage(bytes, "x", options);
  } catch (const DataError& e) {
    EXPECT_EQ(e.path(), "x");
    out.reason = e.reason();
    out.offset = e.offset();
  }
  return out;
}

// The RGB pixels DecodeImage gives for `bytes`, checking the size and that the header
// (ReadImageInfo) says the same size and `format`.
inline std::vector<uint8_t> DecodeRgb(const std::string& bytes, int width, int height,
                                      ImageFormat format) {
  ImageInfo info = ReadImageInfo(bytes, "x");
  EXPECT_EQ(info.format, format);
  EXPECT_EQ(info.width, width);
  EXPECT_EQ(info.height, height);
  Image image = DecodeImage(bytes, "x");
  EXPECT_EQ(image.width, width);
  EXPECT_EQ(image.height, height);
  EXPECT_EQ(image.channels, 3);
  return image.pixels;
}

}  // namespace imgpipe
