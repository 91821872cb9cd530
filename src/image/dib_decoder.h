// DIB: a BMP without its 14-byte file header (an info header of 12, 40, 52, 56, 64, 108 or
// 124 bytes, the bit masks, the palette, the pixels), as Pillow's DIB format reads it
// (.dib files, the clipboard's CF_DIB) and as ICO and CUR files hold their bitmaps. Read
// by giving it a file header and decoding it as the BMP it then is (OpenCV, or
// bmp_rle_decoder.h for RLE). Failures throw DataError naming the path and offset.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "image/image.h"

namespace imgpipe {

// `dib` as a BMP file: a file header whose pixel offset skips the info header, its bit
// masks (BI_BITFIELDS with a 40-byte header) and, at up to 8 bits per pixel, the palette
// (Pillow reads a larger depth's pixels straight after the masks, whatever the colour
// count). With `halve_height` (ICO and CUR entries) the height is halved: the AND mask
// follows the colour rows. `dib` lies at byte `offset` of the file and `kind` ("ICO",
// "DIB") names it in errors: an unknown header size, a truncated header, a palette of over
// 256 colours or a result that is no BMP throw DataError.
std::string DibAsBmp(std::string_view dib, bool halve_height, uint64_t offset,
                     const std::string& path, const char* kind);

// The DIB `bytes`' header, as its BMP's (format kDib).
ImageInfo ReadDibInfo(std::string_view bytes, const std::string& path);

// Decodes the DIB `bytes` to `channels` (1 or 3), as its BMP.
Image DecodeDib(std::string_view bytes, const std::string& path, int channels,
                uint64_t max_pixels);

}  // namespace imgpipe
