// PCX (ZSoft Paintbrush) and DCX (its multi-page wrapper; the first page is read). The
// 128-byte header: manufacturer 10, version, encoding 1 (RLE), bits per pixel per plane,
// window x0,y0,x1,y1 (inclusive, little-endian 16-bit), 16-colour palette at 16, planes
// at 65, bytes per line per plane at 66. Pixels follow RLE-coded, each line its planes
// one after another. Layouts read: 1 bit x 1 plane (0 black, 1 white, as Pillow), 1 bit x
// 2-4 planes and 2 or 4 bits x 1 plane (indices into the header palette), 8 bits x 1 plane
// (the 256-colour palette after a 12 byte at 769 bytes from the end; gray levels without
// one), 8 bits x 3 or 4 planes (RGB; a fourth plane ignored). Failures throw DataError
// naming the path and byte offset.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "image/image.h"

namespace imgpipe {

// Size and channels from the header (of DCX's first page).
ImageInfo ReadPcxInfo(std::string_view bytes, const std::string& path);

// Decodes to RGB; more than `max_pixels` pixels is refused before allocation.
Image DecodePcx(std::string_view bytes, const std::string& path, uint64_t max_pixels);

}  // namespace imgpipe
