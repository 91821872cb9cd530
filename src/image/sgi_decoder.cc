#include "image/sgi_decoder.h"

#include <vector>

#include "image/byte_order.h"
#include "image/decoder_util.h"
#include "util/error.h"

namespace imgpipe {
namespace {

struct SgiHeader {
  bool rle = false;
  uint32_t bpc = 1;  // bytes per sample
  int64_t width = 0, height = 0;
  uint32_t channels = 1;
};

// 1. The header.
SgiHeader ParseHeader(std::string_view bytes, const std::string& path) {
  RequireBytes(bytes, 0, 512, path, "SGI header");
  SgiHeader h;
  h.rle = LoadU8(bytes, 2) == 1;
  h.bpc = LoadU8(bytes, 3);
  const uint32_t dimension = LoadU16(bytes, 4, true);
  h.width = LoadU16(bytes, 6, true);
  h.height = dimension == 1 ? 1 : LoadU16(bytes, 8, true);
  h.channels = dimension == 3 ? LoadU16(bytes, 10, true) : 1;
  if (dimension < 1 || dimension > 3) {
    throw DataError(path, 4, "invalid SGI: dimension " + std::to_string(dimension));
  }
  if (h.channels < 1 || h.channels > 4) {
    throw DataError(path, 10, "unsupported SGI: " + std::to_string(h.channels) + " channels");
  }
  return h;
}

// 2. One row of an RLE file into `out` (width samples of bpc bytes, big-endian).
void ExpandRow(std::string_view bytes, uint64_t at, uint64_t length, const SgiHeader& h,
               uint8_t* out, const std::string& path) {
  RequireBytes(bytes, at, length, path, "SGI RLE row");
  const uint64_t end = at + length;
  int64_t x = 0;
  auto next = [&]() -> uint32_t {
    if (at + h.bpc > end) throw DataError(path, at, "invalid SGI: RLE row ends inside a run");
    uint32_t v = h.bpc == 2 ? LoadU16(bytes, at, true) : LoadU8(bytes, at);
    at += h.bpc;
    return v;
  };
  for (;;) {
    const uint64_t run_at = at;
    const uint32_t code = next(), count = code & 0x7F;
    if (count == 0) break;
    if (x + count > h.width) {
      throw DataError(path, run_at, "invalid SGI: RLE row longer than the image width");
    }
    const uint32_t value = code & 0x80 ? 0 : next();
    for (uint32_t i = 0; i < count; ++i) {
      uint32_t v = code & 0x80 ? next() : value;
      out[x++] = static_cast<uint8_t>(h.bpc == 2 ? v >> 8 : v);
    }
  }
  if (x != h.width) {
    throw DataError(path, at, "invalid SGI: RLE row of " + std::to_string(x) + " samples, not " +
                                  std::to_string(h.width));
  }
}

// 3. All samples, as 8-bit planes of width x height (row 0 at the bottom).
std::vector<uint8_t> ReadPlanes(std::string_view bytes, const SgiHeader& h, uint32_t planes,
                                const std::string& path) {
  const uint64_t plane = uint64_t(h.width) * h.height;
  if (!h.rle) RequireBytes(bytes, 512, plane * h.channels * h.bpc, path, "SGI data");
  std::vector<uint8_t> out(plane * planes);
  if (!h.rle) {
    for (uint64_t i = 0; i < plane * planes; ++i) out[i] = LoadU8(bytes, 512 + i * h.bpc);
    return out;
  }
  const uint64_t rows = uint64_t(h.height) * h.channels;
  RequireBytes(bytes, 512, rows * 8, path, "SGI RLE tables");
  for (uint64_t r = 0; r < uint64_t(h.height) * planes; ++r) {
    ExpandRow(bytes, LoadU32(bytes, 512 + 4 * r, true), LoadU32(bytes, 512 + 4 * (rows + r), true),
              h, out.data() + r * h.width, path);
  }
  return out;
}

}  // namespace

ImageInfo ReadSgiInfo(std::string_view bytes, const std::string& path) {
  SgiHeader h = ParseHeader(bytes, path);
  return MakeHeaderInfo(ImageFormat::kSgi, h.width, h.height, static_cast<int>(h.channels), path);
}

Image DecodeSgi(std::string_view bytes, const std::string& path, uint64_t max_pixels) {
  SgiHeader h = ParseHeader(bytes, path);
  const uint32_t planes = h.channels >= 3 ? 3 : 1;
  Image image = AllocateImage(h.width, h.height, 3, max_pixels, path, "SGI");
  std::vector<uint8_t> samples = ReadPlanes(bytes, h, planes, path);
  const size_t plane = size_t(h.width) * h.height;
  for (int y = 0; y < image.height; ++y) {
    const size_t row = size_t(image.height - 1 - y) * h.width;
    uint8_t* out = image.row(y);
    for (int x = 0; x < image.width; ++x, out += 3) {
      for (uint32_t c = 0; c < 3; ++c) out[c] = samples[(planes == 3 ? c * plane : 0) + row + x];
    }
  }
  return image;
}

}  // namespace imgpipe
