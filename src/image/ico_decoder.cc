#include "image/ico_decoder.h"

#include <cmath>

#include "image/byte_order.h"
#include "image/codec.h"
#include "image/decoder_util.h"
#include "image/image_header.h"
#include "util/error.h"

namespace imgpipe {
namespace {

// 1. The directory: 6 bytes (reserved, type, count), then 16 bytes per entry (width,
// height, colour count, reserved, planes or hotspot x, bits or hotspot y, size, offset).
struct IcoEntry {
  uint32_t area = 0;
  uint32_t depth = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
};

// The entry Pillow reads: for an icon, the one its IcoFile puts first (the largest
// area, then the deepest, then the last of equals: its sort is stable and reversed).
IcoEntry ChooseEntry(std::string_view bytes, const std::string& path) {
  const uint32_t count = LoadU16(bytes, 4, false);
  RequireBytes(bytes, 6, uint64_t{16} * count, path, "ICO directory");
  const bool cursor = LoadU16(bytes, 2, false) == 2;
  IcoEntry best;
  uint32_t best_width = 0, best_height = 0;
  bool first = true;
  for (uint32_t i = 0; i < count; ++i) {
    const size_t at = 6 + size_t{16} * i;
    IcoEntry e;
    uint32_t width = LoadU8(bytes, at), height = LoadU8(bytes, at + 1);
    e.area = (width ? width : 256) * (height ? height : 256);
    uint32_t colors = LoadU8(bytes, at + 2), bits = LoadU16(bytes, at + 6, false);
    e.depth = bits ? bits : colors ? static_cast<uint32_t>(std::ceil(std::log2(colors))) : 256;
    e.size = LoadU32(bytes, at + 8, false);
    e.offset = LoadU32(bytes, at + 12, false);
    // A cursor keeps its hot spot where an icon keeps planes and bits: Pillow's CUR
    // reader takes the first entry, then any later one wider and taller (byte fields).
    const bool better =
        cursor ? width > best_width && height > best_height
               : e.area > best.area || (e.area == best.area && e.depth >= best.depth);
    if (first || better) {
      best = e;
      best_width = width;
      best_height = height;
    }
    first = false;
  }
  if (best.offset >= bytes.size()) {
    throw DataError(path, 6, "invalid ICO: the image starts at byte " +
                                 std::to_string(best.offset) + ", past the end of the file");
  }
  // A size past the end is cut to the file; the image's own parser finds what is missing.
  best.size = std::min<uint64_t>(best.size, bytes.size() - best.offset);
  return best;
}

// 2. A DIB entry as a BMP file: a 14-byte file header whose pixel offset skips the DIB
// header, its bit masks and its palette; the DIB's height halved (the AND mask follows
// the colour rows, bottom-up, so the first half of the rows is the image).
std::string DibAsBmp(std::string_view dib, uint64_t entry_offset, const std::string& path) {
  RequireBytes(dib, 0, 16, path, "ICO bitmap header");
  const uint32_t header = LoadU32(dib, 0, false);
  if (header != 12 && header != 40 && header != 52 && header != 56 && header != 64 &&
      header != 108 && header != 124) {
    throw DataError(path, entry_offset, "invalid ICO: bitmap header of " +
                                            std::to_string(header) + " bytes");
  }
  RequireBytes(dib, 0, header, path, "ICO bitmap header");
  std::string bmp(14, '\0');
  bmp.append(dib);
  auto put32 = [&](size_t at, uint64_t v) {
    for (int k = 0; k < 4; ++k) bmp[at + k] = static_cast<char>(v >> (8 * k) & 0xFF);
  };
  uint32_t bits, colors = 0, compression = 0, entry_bytes = 4;
  if (header == 12) {
    const uint32_t height = LoadU16(dib, 6, false) / 2;
    bmp[14 + 6] = static_cast<char>(height & 0xFF);
    bmp[14 + 7] = static_cast<char>(height >> 8);
    bits = LoadU16(dib, 10, false);
    entry_bytes = 3;
  } else {
    const int32_t height = static_cast<int32_t>(LoadU32(dib, 8, false)) / 2;
    put32(14 + 8, static_cast<uint32_t>(height));
    bits = LoadU16(dib, 14, false);
    compression = LoadU32(dib, 16, false);
    colors = LoadU32(dib, 32, false);
  }
  if (colors == 0 && bits <= 8) colors = 1u << bits;
  if (colors > 256) {
    throw DataError(path, entry_offset + 32,
                    "invalid ICO: palette of " + std::to_string(colors) + " colours");
  }
  uint64_t masks = header == 40 && compression == 3 ? 12 : 0;
  bmp[0] = 'B';
  bmp[1] = 'M';
  put32(2, bmp.size());
  put32(10, 14 + header + masks + uint64_t{colors} * entry_bytes);
  if (DetectImageFormat(bmp) != ImageFormat::kBmp) {
    throw DataError(path, entry_offset, "invalid ICO: the image is neither PNG nor a BMP bitmap");
  }
  return bmp;
}

// The chosen entry's bytes, and whether they are a PNG.
std::string_view EntryBytes(std::string_view bytes, const IcoEntry& e) {
  return bytes.substr(e.offset, e.size);
}

bool IsPng(std::string_view entry) { return DetectImageFormat(entry) == ImageFormat::kPng; }

}  // namespace

ImageInfo ReadIcoInfo(std::string_view bytes, const std::string& path) {
  IcoEntry e = ChooseEntry(bytes, path);
  std::string_view entry = EntryBytes(bytes, e);
  ImageInfo info = IsPng(entry)
                       ? ParseImageHeader(ImageFormat::kPng, entry, path)
                       : ParseImageHeader(ImageFormat::kBmp, DibAsBmp(entry, e.offset, path), path);
  info.format = ImageFormat::kIco;
  return info;
}

Image DecodeIco(std::string_view bytes, const std::string& path, int channels,
                uint64_t max_pixels) {
  IcoEntry e = ChooseEntry(bytes, path);
  std::string_view entry = EntryBytes(bytes, e);
  DecodeOptions options;
  options.channels = channels;
  options.max_pixels = max_pixels;
  if (IsPng(entry)) return DecodeImage(entry, path, options);
  return DecodeImage(DibAsBmp(entry, e.offset, path), path, options);
}

}  // namespace imgpipe
