// Sun raster files: a 32-byte big-endian header (magic 0x59A66A95, width, height, depth,
// data length, type, colour-map type, colour-map length), the colour map (planar: all
// reds, then greens, then blues), then rows padded to 16 bits. Types 0, 1, 3 (RGB order
// instead of BGR), 4 and 5 are raw; type 2 is byte-encoded (0x80 n v: n + 1 copies of
// v, 0x80 0: one 0x80, any other byte: itself), over the whole padded stream. Depths
// 1 (bit set: black, as Pillow), 4 and 8 (gray or colour-mapped), 24 and 32 (B,G,R or
// B,G,R,X per pixel, as Pillow reads them; type 3: R,G,B(,X)). Failures throw DataError
// naming the path and byte offset.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "image/image.h"

namespace imgpipe {

// Size and channels from the header.
ImageInfo ReadSunRasterInfo(std::string_view bytes, const std::string& path);

// Decodes to RGB; more than `max_pixels` pixels is refused before allocation.
Image DecodeSunRaster(std::string_view bytes, const std::string& path, uint64_t max_pixels);

}  // namespace imgpipe
