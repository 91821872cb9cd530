#include "image/image_format.h"

#include <cstdint>

namespace imgpipe {
namespace {

bool StartsWith(std::string_view bytes, std::string_view prefix) {
  return bytes.substr(0, prefix.size()) == prefix;
}

bool IsPnmWhitespace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

}  // namespace

ImageFormat DetectImageFormat(std::string_view bytes) {
  using namespace std::string_view_literals;
  if (StartsWith(bytes, "\xFF\xD8\xFF"sv)) return ImageFormat::kJpeg;
  if (StartsWith(bytes, "\x89PNG\r\n\x1A\n"sv)) return ImageFormat::kPng;
  if (StartsWith(bytes, "II*\0"sv) || StartsWith(bytes, "MM\0*"sv)) return ImageFormat::kTiff;
  if (StartsWith(bytes, "GIF87a"sv) || StartsWith(bytes, "GIF89a"sv)) return ImageFormat::kGif;
  if (StartsWith(bytes, "RIFF"sv) && bytes.size() >= 12 && bytes.substr(8, 4) == "WEBP"sv) {
    return ImageFormat::kWebp;
  }
  if (StartsWith(bytes, "\xFF\x4F\xFF\x51"sv) ||
      StartsWith(bytes, "\x00\x00\x00\x0C\x6A\x50\x20\x20"sv)) {
    return ImageFormat::kJpeg2000;
  }
  // "BM" then a 4-byte file size: two letters alone are too weak a signature for text
  // files, so require room for the 14-byte file header and a known DIB header size.
  if (StartsWith(bytes, "BM"sv) && bytes.size() >= 18) {
    uint32_t dib_size = static_cast<uint8_t>(bytes[14]) | static_cast<uint8_t>(bytes[15]) << 8 |
                        static_cast<uint8_t>(bytes[16]) << 16 |
                        static_cast<uint32_t>(static_cast<uint8_t>(bytes[17])) << 24;
    if (dib_size == 12 || dib_size == 16 || dib_size == 40 || dib_size == 52 || dib_size == 56 ||
        dib_size == 64 || dib_size == 108 || dib_size == 124) {
      return ImageFormat::kBmp;
    }
  }
  // P1..P6 (PBM, PGM, PPM, plain and raw) and P7 (PAM), followed by whitespace.
  if (bytes.size() >= 3 && bytes[0] == 'P' && bytes[1] >= '1' && bytes[1] <= '7' &&
      IsPnmWhitespace(bytes[2])) {
    return ImageFormat::kPnm;
  }
  return ImageFormat::kUnknown;
}

const char* ImageFormatName(ImageFormat format) {
  switch (format) {
    case ImageFormat::kJpeg: return "jpeg";
    case ImageFormat::kPng: return "png";
    case ImageFormat::kBmp: return "bmp";
    case ImageFormat::kTiff: return "tiff";
    case ImageFormat::kPnm: return "pnm";
    case ImageFormat::kGif: return "gif";
    case ImageFormat::kWebp: return "webp";
    case ImageFormat::kJpeg2000: return "jpeg2000";
    case ImageFormat::kUnknown: break;
  }
  return "unknown";
}

}  // namespace imgpipe
