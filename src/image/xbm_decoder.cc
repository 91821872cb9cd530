#include "image/xbm_decoder.h"

#include <cctype>
#include <climits>

#include "image/decoder_util.h"
#include "util/error.h"

namespace imgpipe {
namespace {

struct XbmHeader {
  int64_t width = -1, height = -1;
  size_t data = 0;  // offset of the first byte after "{"
};

// The decimal number after `name_suffix` ("_width") in a "#define" line, or -1.
int64_t DefineValue(std::string_view line, std::string_view suffix) {
  size_t name_end = line.find_first_of(" \t", 8);
  if (name_end == std::string_view::npos || name_end < suffix.size() ||
      line.substr(name_end - suffix.size(), suffix.size()) != suffix) {
    return -1;
  }
  size_t digits = line.find_first_not_of(" \t", name_end);
  auto is_digit = [&](size_t i) {
    return i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]));
  };
  if (digits == std::string_view::npos || !is_digit(digits)) return -1;
  int64_t value = 0;
  for (size_t i = digits; is_digit(i); ++i) {
    value = value * 10 + (line[i] - '0');
    if (value > INT_MAX) return -1;
  }
  return value;
}

// 1. The defines, up to the array's opening brace.
XbmHeader ParseHeader(std::string_view bytes, const std::string& path) {
  XbmHeader h;
  size_t at = bytes.find_first_not_of(" \t\r\n");
  while (at < bytes.size() && bytes.compare(at, 7, "#define") == 0) {
    size_t end = bytes.find_first_of("\r\n", at);
    if (end == std::string_view::npos) end = bytes.size();
    std::string_view line = bytes.substr(at, end - at);
    if (int64_t w = DefineValue(line, "_width"); w >= 0) h.width = w;
    if (int64_t v = DefineValue(line, "_height"); v >= 0) h.height = v;
    at = bytes.find_first_not_of(" \t\r\n", end);
  }
  if (h.width < 0 || h.height < 0) {
    throw DataError(path, std::min(at, bytes.size()), "invalid XBM: no _width and _height defines");
  }
  size_t bits = bytes.find("_bits[", at);
  size_t brace = bits == std::string_view::npos ? bits : bytes.find('{', bits);
  if (brace == std::string_view::npos) {
    throw DataError(path, bytes.size(), "truncated XBM: no _bits[] array");
  }
  if (bytes.substr(at, bits - at).find("short") != std::string_view::npos) {
    throw DataError(path, at, "unsupported XBM: X10 16-bit words");
  }
  h.data = brace + 1;
  return h;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

}  // namespace

ImageInfo ReadXbmInfo(std::string_view bytes, const std::string& path) {
  XbmHeader h = ParseHeader(bytes, path);
  return MakeHeaderInfo(ImageFormat::kXbm, h.width, h.height, 1, path);
}

Image DecodeXbm(std::string_view bytes, const std::string& path, uint64_t max_pixels) {
  XbmHeader h = ParseHeader(bytes, path);
  // 2. The bytes, "0x" and one or two hex digits each, separated by commas and spaces:
  // at least three characters each, so text too short for them is refused before the
  // pixels are allocated.
  const uint64_t row_bytes = (uint64_t(h.width) + 7) / 8;
  if (row_bytes * h.height > (bytes.size() - h.data) / 3) {
    throw DataError(path, bytes.size(), "truncated XBM data: " + std::to_string(h.width) + "x" +
                                            std::to_string(h.height) + " pixels need more text");
  }
  Image image = AllocateImage(h.width, h.height, 3, max_pixels, path, "XBM");
  size_t at = h.data;
  for (int y = 0; y < image.height; ++y) {
    uint8_t* out = image.row(y);
    for (uint64_t i = 0; i < row_bytes; ++i) {
      at = bytes.find_first_not_of(" \t\r\n,", at);
      if (at == std::string_view::npos || at + 2 >= bytes.size()) {
        throw DataError(path, bytes.size(), "truncated XBM data: " + std::to_string(y) + " of " +
                                                std::to_string(image.height) + " rows");
      }
      if (bytes[at] != '0' || (bytes[at + 1] != 'x' && bytes[at + 1] != 'X') ||
          HexDigit(bytes[at + 2]) < 0) {
        throw DataError(path, at, "invalid XBM: expected a hex byte such as 0x3c");
      }
      int value = HexDigit(bytes[at + 2]);
      at += 3;
      if (at < bytes.size() && HexDigit(bytes[at]) >= 0) value = value * 16 + HexDigit(bytes[at++]);
      if (at < bytes.size() && HexDigit(bytes[at]) >= 0) {
        throw DataError(path, at, "unsupported XBM: values over 0xff (X10 16-bit words)");
      }
      for (int bit = 0; bit < 8 && i * 8 + bit < size_t(h.width); ++bit) {
        uint8_t v = (value >> bit) & 1 ? 255 : 0;
        uint8_t* px = out + 3 * (i * 8 + bit);
        px[0] = px[1] = px[2] = v;
      }
    }
  }
  return image;
}

}  // namespace imgpipe
