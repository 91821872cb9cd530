// XBM (X11 bitmap), C source text: "#define NAME_width W", "#define NAME_height H"
// (hot-spot defines allowed), then "static char NAME_bits[] = { 0x.., ... };", rows of
// ceil(W / 8) bytes, least significant bit first. A set bit is white (255) and a clear
// one black, as Pillow reads them. X10's 16-bit words are not read. Failures throw
// DataError naming the path and byte offset.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "image/image.h"

namespace imgpipe {

// Size from the two defines; a missing or malformed one throws DataError.
ImageInfo ReadXbmInfo(std::string_view bytes, const std::string& path);

// Decodes to RGB; more than `max_pixels` pixels is refused before allocation.
Image DecodeXbm(std::string_view bytes, const std::string& path, uint64_t max_pixels);

}  // namespace imgpipe
