// SGI image files (.sgi, .rgb, .bw): a 512-byte big-endian header (magic 474, storage
// 0 verbatim or 1 RLE, bytes per channel 1 or 2, dimension 1-3, xsize, ysize, zsize
// channels, ...), then the channels one after another, rows bottom-up. RLE files have
// a table of row offsets and one of row lengths (ysize x zsize each), each row a run
// list (a count byte or word: high bit set, that many literals; else the next value
// repeated; 0 ends). 16-bit samples are narrowed by their high byte (as Pillow). 1-2
// channels are gray (a second, alpha, ignored), 3-4 are RGB (a fourth ignored). Failures
// throw DataError naming the path and byte offset.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "image/image.h"

namespace imgpipe {

// Size and channels from the header.
ImageInfo ReadSgiInfo(std::string_view bytes, const std::string& path);

// Decodes to RGB; more than `max_pixels` pixels is refused before allocation.
Image DecodeSgi(std::string_view bytes, const std::string& path, uint64_t max_pixels);

}  // namespace imgpipe
