#include "image/ico_decoder.h"

#include <cmath>

#include "image/byte_order.h"
#include "image/codec.h"
#include "image/decoder_util.h"
#include "image/dib_decoder.h"
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
  // The image runs to the end of the file, whatever the directory's size says (Pillow's
  // ICO and CUR readers ignore it; cursors with a size of 0 exist): its own parser finds
  // where it ends, or what is missing.
  best.size = bytes.size() - best.offset;
  return best;
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
  ImageInfo info =
      IsPng(entry) ? ParseImageHeader(ImageFormat::kPng, entry, path)
                   : ParseImageHeader(ImageFormat::kBmp,
                                      DibAsBmp(entry, true, e.offset, path, "ICO"), path);
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
  return DecodeImage(DibAsBmp(entry, true, e.offset, path, "ICO"), path, options);
}

}  // namespace imgpipe
