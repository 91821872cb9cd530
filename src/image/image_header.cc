#include "image/image_header.h"

#include <climits>
#include <cstdint>
#include <optional>

#include "image/byte_order.h"
#include "image/format_decoders.h"
#include "util/error.h"

namespace imgpipe {
namespace {

[[noreturn]] void Fail(const std::string& path, const std::string& reason,
                       std::optional<uint64_t> offset = std::nullopt) {
  throw DataError(path, offset, reason);
}

void Require(std::string_view bytes, uint64_t offset, uint64_t size, const char* format_name,
             const std::string& path) {
  if (!HasBytes(bytes, offset, size)) {
    Fail(path, std::string("truncated ") + format_name + " header", bytes.size());
  }
}

ImageInfo MakeInfo(ImageFormat format, int64_t width, int64_t height, int channels,
                   const char* colorspace, const std::string& path) {
  if (width < 1 || height < 1 || width > INT_MAX || height > INT_MAX) {
    Fail(path, std::string("invalid ") + ImageFormatName(format) + " dimensions " +
                   std::to_string(width) + "x" + std::to_string(height));
  }
  ImageInfo info;
  info.format = format;
  info.width = static_cast<int>(width);
  info.height = static_cast<int>(height);
  info.channels = channels;
  info.colorspace = colorspace;
  return info;
}

// CRC-32 (ISO-HDLC, as in PNG), bitwise: only 17 header bytes go through it.
uint32_t Crc32(std::string_view bytes) {
  uint32_t crc = 0xFFFFFFFFu;
  for (char ch : bytes) {
    crc ^= static_cast<uint8_t>(ch);
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

// PNG: signature, then the IHDR chunk (length 13, "IHDR", width, height, bit depth,
// colour type, compression, filter, interlace, CRC).
ImageInfo ParsePng(std::string_view bytes, const std::string& path) {
  Require(bytes, 0, 33, "PNG", path);
  if (LoadU32(bytes, 8, true) != 13 || bytes.substr(12, 4) != "IHDR") {
    Fail(path, "invalid PNG: the first chunk is not IHDR", 8);
  }
  if (Crc32(bytes.substr(12, 17)) != LoadU32(bytes, 29, true)) {
    Fail(path, "invalid PNG: IHDR CRC mismatch", 29);
  }
  uint32_t depth = LoadU8(bytes, 24), color_type = LoadU8(bytes, 25);
  bool valid_depth = false;
  int channels = 0;
  switch (color_type) {
    case 0: valid_depth = depth == 1 || depth == 2 || depth == 4 || depth == 8 || depth == 16;
            channels = 1; break;
    case 2: valid_depth = depth == 8 || depth == 16; channels = 3; break;
    case 3: valid_depth = depth == 1 || depth == 2 || depth == 4 || depth == 8; channels = 3;
            break;
    case 4: valid_depth = depth == 8 || depth == 16; channels = 2; break;
    case 6: valid_depth = depth == 8 || depth == 16; channels = 4; break;
  }
  if (!valid_depth) {
    Fail(path, "invalid PNG: bit depth " + std::to_string(depth) + " with colour type " +
                   std::to_string(color_type), 24);
  }
  return MakeInfo(ImageFormat::kPng, LoadU32(bytes, 16, true), LoadU32(bytes, 20, true),
                  channels, channels <= 2 ? "Grayscale" : "RGB", path);
}

// BMP: 14-byte file header, then a DIB header whose size tells its layout (12: OS/2
// core header with 16-bit sizes; otherwise 32-bit signed sizes, negative height for
// top-down rows).
ImageInfo ParseBmp(std::string_view bytes, const std::string& path) {
  Require(bytes, 0, 26, "BMP", path);
  uint32_t dib_size = LoadU32(bytes, 14, false);
  int64_t width, height;
  uint32_t bits, compression = 0;
  if (dib_size == 12) {
    width = LoadU16(bytes, 18, false);
    height = LoadU16(bytes, 20, false);
    bits = LoadU16(bytes, 24, false);
  } else {
    Require(bytes, 0, 34, "BMP", path);
    width = static_cast<int32_t>(LoadU32(bytes, 18, false));
    height = static_cast<int32_t>(LoadU32(bytes, 22, false));
    if (height < 0) height = -height;
    bits = LoadU16(bytes, 28, false);
    compression = LoadU32(bytes, 30, false);
  }
  if (bits != 1 && bits != 4 && bits != 8 && bits != 16 && bits != 24 && bits != 32) {
    Fail(path, "invalid BMP: " + std::to_string(bits) + " bits per pixel", 28);
  }
  // 0 BI_RGB, 1 BI_RLE8, 2 BI_RLE4, 3 BI_BITFIELDS; 4 (JPEG) and 5 (PNG) are not read.
  if (compression > 3) {
    Fail(path, "unsupported BMP: compression " + std::to_string(compression), 30);
  }
  return MakeInfo(ImageFormat::kBmp, width, height, bits == 32 ? 4 : 3, "RGB", path);
}

// PNM/PAM header tokens: whitespace-separated, '#' starts a comment to the end of line.
class PnmTokenizer {
 public:
  PnmTokenizer(std::string_view bytes, const std::string& path)
      : bytes_(bytes), path_(path), pos_(2) {}

  std::string_view Next() {
    while (pos_ < bytes_.size()) {
      char c = bytes_[pos_];
      if (c == '#') {
        while (pos_ < bytes_.size() && bytes_[pos_] != '\n' && bytes_[pos_] != '\r') ++pos_;
      } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
        ++pos_;
      } else {
        break;
      }
    }
    size_t start = pos_;
    while (pos_ < bytes_.size() && !IsSpaceOrComment(bytes_[pos_])) ++pos_;
    if (start == pos_) Fail(path_, "truncated PNM header", pos_);
    return bytes_.substr(start, pos_ - start);
  }

  int64_t NextNumber(const char* what) {
    size_t offset = pos_;
    std::string_view token = Next();
    int64_t value = 0;
    for (char c : token) {
      if (c < '0' || c > '9' || value > INT_MAX) {
        Fail(path_, std::string("invalid PNM header: bad ") + what + " '" +
                        std::string(token.substr(0, 16)) + "'", offset);
      }
      value = value * 10 + (c - '0');
    }
    return value;
  }

 private:
  static bool IsSpaceOrComment(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' ||
           c == '#';
  }

  std::string_view bytes_;
  const std::string& path_;
  size_t pos_;
};

// PNM: "P1".."P6" then width, height and (except for bitmaps) maxval. PAM: "P7" then
// WIDTH/HEIGHT/DEPTH/MAXVAL/TUPLTYPE lines up to ENDHDR.
ImageInfo ParsePnm(std::string_view bytes, const std::string& path) {
  PnmTokenizer tokens(bytes, path);
  char kind = bytes[1];
  int64_t width = 0, height = 0, depth = 0, maxval = 1;
  if (kind == '7') {
    for (int lines = 0;; ++lines) {
      if (lines > 64) Fail(path, "invalid PAM header: no ENDHDR");
      std::string_view key = tokens.Next();
      if (key == "ENDHDR") break;
      if (key == "WIDTH") width = tokens.NextNumber("width");
      else if (key == "HEIGHT") height = tokens.NextNumber("height");
      else if (key == "DEPTH") depth = tokens.NextNumber("depth");
      else if (key == "MAXVAL") maxval = tokens.NextNumber("maxval");
      else if (key == "TUPLTYPE") tokens.Next();
      else Fail(path, "invalid PAM header: unknown field '" + std::string(key.substr(0, 16)) + "'");
    }
    if (depth < 1 || depth > 4) {
      Fail(path, "unsupported PAM: depth " + std::to_string(depth));
    }
  } else {
    width = tokens.NextNumber("width");
    height = tokens.NextNumber("height");
    if (kind != '1' && kind != '4') maxval = tokens.NextNumber("maxval");
    depth = (kind == '3' || kind == '6') ? 3 : 1;
  }
  if (maxval < 1 || maxval > 65535) {
    Fail(path, "invalid PNM header: maxval " + std::to_string(maxval));
  }
  return MakeInfo(ImageFormat::kPnm, width, height, static_cast<int>(depth),
                  depth <= 2 ? "Grayscale" : "RGB", path);
}

// GIF: "GIF8?a", then the logical screen's width and height (little-endian).
ImageInfo ParseGif(std::string_view bytes, const std::string& path) {
  Require(bytes, 0, 10, "GIF", path);
  return MakeInfo(ImageFormat::kGif, LoadU16(bytes, 6, false), LoadU16(bytes, 8, false), 3,
                  "RGB", path);
}

// WebP: "RIFF" size "WEBP", then a VP8 (lossy), VP8L (lossless) or VP8X (extended) chunk;
// an animated one's (VP8X flag 0x02) size is its canvas'.
ImageInfo ParseWebp(std::string_view bytes, const std::string& path) {
  Require(bytes, 0, 30, "WebP", path);
  std::string_view chunk = bytes.substr(12, 4);
  if (chunk == "VP8 ") {
    if (LoadU8(bytes, 23) != 0x9D || LoadU8(bytes, 24) != 0x01 || LoadU8(bytes, 25) != 0x2A) {
      Fail(path, "invalid WebP: bad VP8 start code", 23);
    }
    return MakeInfo(ImageFormat::kWebp, LoadU16(bytes, 26, false) & 0x3FFF,
                    LoadU16(bytes, 28, false) & 0x3FFF, 3, "RGB", path);
  }
  if (chunk == "VP8L") {
    if (LoadU8(bytes, 20) != 0x2F) Fail(path, "invalid WebP: bad VP8L signature", 20);
    uint32_t bits = LoadU32(bytes, 21, false);
    return MakeInfo(ImageFormat::kWebp, (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1,
                    (bits >> 28) & 1 ? 4 : 3, "RGB", path);
  }
  if (chunk == "VP8X") {
    uint32_t flags = LoadU8(bytes, 20);
    int64_t width = (LoadU32(bytes, 24, false) & 0xFFFFFF) + 1;
    int64_t height = (LoadU32(bytes, 26, false) >> 8) + 1;
    return MakeInfo(ImageFormat::kWebp, width, height, flags & 0x10 ? 4 : 3, "RGB", path);
  }
  Fail(path, "invalid WebP: unknown first chunk '" + std::string(chunk) + "'", 12);
}

// JPEG 2000 codestream: SOC, then SIZ (Lsiz, Rsiz, Xsiz, Ysiz, XOsiz, YOsiz, four tile
// fields, Csiz).
ImageInfo ParseJ2kCodestream(std::string_view bytes, uint64_t start, const std::string& path) {
  Require(bytes, start, 42, "JPEG 2000", path);
  if (LoadU16(bytes, start, true) != 0xFF4F || LoadU16(bytes, start + 2, true) != 0xFF51) {
    Fail(path, "invalid JPEG 2000: codestream does not start with SOC and SIZ", start);
  }
  int64_t x = LoadU32(bytes, start + 8, true), y = LoadU32(bytes, start + 12, true);
  int64_t x0 = LoadU32(bytes, start + 16, true), y0 = LoadU32(bytes, start + 20, true);
  int channels = static_cast<int>(LoadU16(bytes, start + 40, true));
  if (channels < 1 || channels > 4) {
    Fail(path, "unsupported JPEG 2000: " + std::to_string(channels) + " components", start);
  }
  return MakeInfo(ImageFormat::kJpeg2000, x - x0, y - y0, channels,
                  channels <= 2 ? "Grayscale" : "RGB", path);
}

// JP2 file: a sequence of boxes (LBox, TBox[, XLBox], contents). The image header box
// "ihdr" (HEIGHT, WIDTH, NC, ...) sits inside the "jp2h" superbox; the codestream is
// in "jp2c".
ImageInfo ParseJp2(std::string_view bytes, const std::string& path) {
  uint64_t pos = 0, end = bytes.size();
  while (pos < end) {
    Require(bytes, pos, 8, "JPEG 2000", path);
    uint64_t length = LoadU32(bytes, pos, true), header = 8;
    std::string_view type = bytes.substr(pos + 4, 4);
    if (length == 1) {
      Require(bytes, pos, 16, "JPEG 2000", path);
      length = uint64_t{LoadU32(bytes, pos + 8, true)} << 32 | LoadU32(bytes, pos + 12, true);
      header = 16;
    } else if (length == 0) {
      length = end - pos;
    }
    if (length < header || length > end - pos) {
      Fail(path, "invalid JPEG 2000: bad box length", pos);
    }
    if (type == "jp2h") {  // descend into the superbox
      end = pos + length;
      pos += header;
      continue;
    }
    if (type == "ihdr") {
      Require(bytes, pos + header, 14, "JPEG 2000", path);
      int channels = static_cast<int>(LoadU16(bytes, pos + header + 8, true));
      if (channels < 1 || channels > 4) {
        Fail(path, "unsupported JPEG 2000: " + std::to_string(channels) + " components", pos);
      }
      return MakeInfo(ImageFormat::kJpeg2000, LoadU32(bytes, pos + header + 4, true),
                      LoadU32(bytes, pos + header, true), channels,
                      channels <= 2 ? "Grayscale" : "RGB", path);
    }
    if (type == "jp2c") return ParseJ2kCodestream(bytes, pos + header, path);
    pos += length;
  }
  Fail(path, "invalid JPEG 2000: no image header box", bytes.size());
}

}  // namespace

ImageInfo ParseImageHeader(ImageFormat format, std::string_view bytes, const std::string& path) {
  switch (format) {
    case ImageFormat::kPng: return ParsePng(bytes, path);
    case ImageFormat::kBmp: return ParseBmp(bytes, path);
    case ImageFormat::kPnm: return ParsePnm(bytes, path);
    case ImageFormat::kGif: return ParseGif(bytes, path);
    case ImageFormat::kWebp: return ParseWebp(bytes, path);
    case ImageFormat::kJpeg2000:
      return LoadU8(bytes, 0) == 0xFF ? ParseJ2kCodestream(bytes, 0, path) : ParseJp2(bytes, path);
    case ImageFormat::kJpeg:
    case ImageFormat::kUnknown: break;
    default:
      if (HasFormatDecoder(format)) return ReadFormatDecoderInfo(format, bytes, path);
      break;
  }
  throw Error(std::string("ParseImageHeader: no parser for format ") + ImageFormatName(format));
}

}  // namespace imgpipe
