#include "image/sun_raster_decoder.h"

#include <vector>

#include "image/byte_order.h"
#include "image/decoder_util.h"
#include "util/error.h"

namespace imgpipe {
namespace {

struct SunHeader {
  int64_t width = 0, height = 0;
  uint32_t depth = 0, type = 0, map_type = 0, map_length = 0;
  uint64_t stride = 0;  // bytes per row, padded to 16 bits
};

// 1. The header.
SunHeader ParseHeader(std::string_view bytes, const std::string& path) {
  RequireBytes(bytes, 0, 32, path, "Sun raster header");
  SunHeader h;
  h.width = LoadU32(bytes, 4, true);
  h.height = LoadU32(bytes, 8, true);
  h.depth = LoadU32(bytes, 12, true);
  h.type = LoadU32(bytes, 20, true);
  h.map_type = LoadU32(bytes, 24, true);
  h.map_length = LoadU32(bytes, 28, true);
  if (h.depth != 1 && h.depth != 4 && h.depth != 8 && h.depth != 24 && h.depth != 32) {
    throw DataError(path, 12, "unsupported Sun raster: depth " + std::to_string(h.depth));
  }
  if (h.type > 5) {
    throw DataError(path, 20, "unsupported Sun raster: type " + std::to_string(h.type));
  }
  if (h.map_length != 0 && (h.map_type != 1 || h.map_length > 768 || h.map_length % 3 != 0)) {
    throw DataError(path, 24, "unsupported Sun raster: colour map of type " +
                                  std::to_string(h.map_type) + " and " +
                                  std::to_string(h.map_length) + " bytes");
  }
  h.stride = (uint64_t(h.width) * h.depth + 15) / 16 * 2;
  return h;
}

// 2. The rows: raw, or byte-encoded (type 2) into stride x height bytes.
std::vector<uint8_t> ReadRows(std::string_view bytes, const SunHeader& h, const std::string& path) {
  const uint64_t start = 32 + uint64_t{h.map_length}, size = h.stride * h.height;
  if (h.type != 2) {
    RequireBytes(bytes, start, size, path, "Sun raster data");
    const auto* p = reinterpret_cast<const uint8_t*>(bytes.data()) + start;
    return std::vector<uint8_t>(p, p + size);
  }
  // Three bytes code at most 256: fewer input bytes than that allows cannot fill it.
  if (start > bytes.size() || size > (bytes.size() - start) * 86) {
    throw DataError(path, bytes.size(), "truncated Sun raster data");
  }
  std::vector<uint8_t> out(size);
  uint64_t at = start, filled = 0;
  while (filled < size) {
    RequireBytes(bytes, at, 1, path, "Sun raster data");
    uint32_t b = LoadU8(bytes, at++), n = 1;
    if (b == 0x80) {
      RequireBytes(bytes, at, 1, path, "Sun raster data");
      n = LoadU8(bytes, at++);
      if (n == 0) {
        n = 1;
      } else {
        RequireBytes(bytes, at, 1, path, "Sun raster data");
        n += 1;
        b = LoadU8(bytes, at++);
      }
    }
    for (; n > 0 && filled < size; --n) out[filled++] = static_cast<uint8_t>(b);
  }
  return out;
}

}  // namespace

ImageInfo ReadSunRasterInfo(std::string_view bytes, const std::string& path) {
  SunHeader h = ParseHeader(bytes, path);
  const int channels = h.depth >= 24 || h.map_length ? 3 : 1;
  return MakeHeaderInfo(ImageFormat::kSunRaster, h.width, h.height, channels, path);
}

Image DecodeSunRaster(std::string_view bytes, const std::string& path, uint64_t max_pixels) {
  SunHeader h = ParseHeader(bytes, path);
  if (uint64_t(h.width) * h.height > max_pixels) {  // before ReadRows allocates
    AllocateImage(h.width, h.height, 3, max_pixels, path, "Sun raster");
  }
  RequireBytes(bytes, 32, h.map_length, path, "Sun raster colour map");
  const uint32_t colors = h.map_length / 3;
  // The rows first: ReadRows refuses a header that asks for more than the file holds.
  std::vector<uint8_t> rows = ReadRows(bytes, h, path);
  Image image = AllocateImage(h.width, h.height, 3, max_pixels, path, "Sun raster");
  for (int y = 0; y < image.height; ++y) {
    const uint8_t* in = rows.data() + h.stride * y;
    uint8_t* out = image.row(y);
    for (int x = 0; x < image.width; ++x, out += 3) {
      if (h.depth >= 24) {
        const uint8_t* px = in + size_t(x) * (h.depth / 8);
        const bool rgb = h.type == 3;
        out[0] = px[rgb ? 0 : 2];
        out[1] = px[1];
        out[2] = px[rgb ? 2 : 0];
        continue;
      }
      uint32_t v;
      if (h.depth == 8) v = in[x];
      else if (h.depth == 4) v = (in[x / 2] >> (x % 2 ? 0 : 4)) & 0xF;
      else v = (in[x / 8] >> (7 - x % 8)) & 1;
      if (h.depth == 1) {
        out[0] = out[1] = out[2] = v ? 0 : 255;
      } else if (colors) {
        if (v >= colors) {
          throw DataError(path, 32 + h.map_length + h.stride * y,
                          "invalid Sun raster: colour index " + std::to_string(v) +
                              " beyond the map's " + std::to_string(colors));
        }
        for (int c = 0; c < 3; ++c) out[c] = LoadU8(bytes, 32 + c * colors + v);
      } else {
        out[0] = out[1] = out[2] = static_cast<uint8_t>(h.depth == 4 ? v * 17 : v);
      }
    }
  }
  return image;
}

}  // namespace imgpipe
