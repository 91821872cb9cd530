// BMP with run-length-encoded pixels: BI_RLE8 (compression 1) and BI_RLE4 (2), every such
// BMP (and DIB, and ICO/CUR entry) imgpipe reads. The codes, in pairs of bytes (Microsoft's
// "Bitmap Compression"):
//   n > 0, c       an encoded run: n pixels of index c (RLE4: c's high and low nibbles,
//                  alternately, high first)
//   0, 0           end of line: the next row starts
//   0, 1           end of bitmap
//   0, 2, dx, dy   delta: dx pixels right and dy rows on; the pixels passed stay 0
//   0, n >= 3      an absolute run: n indices follow (RLE4: two a byte, high nibble
//                  first, (n + 1) / 2 bytes), padded to a 16-bit boundary of the file
// Rows are stored bottom-up (top-down where the height is negative); the indices go
// through the palette after the info header (4 bytes each, B G R and a reserved byte),
// whose entries past its colour count are the gray level of their index.
//
// Decoded as Pillow 9.4 decodes them (BmpImagePlugin.py's BmpRleDecoder, a linear
// buffer of indices), leniently, and each departure from the format counted as a repair:
// an encoded run past its row's end is cut there; an absolute run past it continues on
// the next row (Pillow's result); pixels past the image's end are dropped. A decode with
// repairs is reported to ReportDecodeWarnings (decode_warnings.h) with their count and
// the first. Rows that end early (end of line) leave the rest of the row 0, and data that
// covers the image needs no end-of-bitmap code; data that ends before the image is whole
// without one is truncated (a DataError, as Pillow refuses it). Two places follow the format rather than Pillow 9.4, whose reads there
// are bugs Pillow fixed later: a delta is 2 bytes (9.4 reads 4, python-pillow/Pillow#9443),
// and an odd-length RLE4 absolute run keeps its last pixel (9.4 drops it and loses the
// alignment, #9710). An end-of-bitmap code before the image is whole is the format's own
// (the rest 0; Pillow 9.4 refuses such files). Failures (truncated data, a palette or
// pixel data past the end of the file, a palette of over 256 colours, RLE at over 8 bits
// per pixel) throw DataError naming the path and byte offset.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "image/image.h"

namespace imgpipe {

// True when `bytes`, a BMP file (DetectImageFormat's kBmp), has RLE8 or RLE4 pixels.
bool IsRleBmp(std::string_view bytes);

// Decodes the RLE BMP `bytes` to RGB; over `max_pixels` pixels is refused before any
// allocation. Repairs are reported as above.
Image DecodeBmpRle(std::string_view bytes, const std::string& path, uint64_t max_pixels);

}  // namespace imgpipe
