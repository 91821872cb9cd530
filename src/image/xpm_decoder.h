// XPM (X11 pixmap), C source text read line by line as Pillow 9.4's XpmImagePlugin reads
// it: "/* XPM */", then the first line that starts "W H NCOLORS CPP (each a number and one
// space apart), then NCOLORS colour lines ("KEY c #RRGGBB", or c None: black), then H
// pixel lines, each the characters after its first one: W keys of CPP characters. A
// key with no colour is black; a row shorter than W keys takes the characters after its
// end (its quote and comma, then spaces) and a missing row is spaces, as Pillow reads
// them; both are counted as repairs and reported to ReportDecodeWarnings.
//
// Beyond Pillow (which reads 1 character per pixel and up to 256 colours): keys of 2 to
// 8 characters and any number of colours; comment lines ("/* pixels */", which
// ImageMagick writes before the rows and Pillow reads as a row) and blank lines are
// skipped; #RGB, #RRRGGGBBB and #RRRRGGGGBBBB colours are read as X11 reads them (the
// high 8 bits of each channel; Pillow takes the low 24 bits of the number). Colour names
// are refused. Failures throw DataError naming the path and byte offset.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "image/image.h"

namespace imgpipe {

// Size from the values line; a missing or malformed one throws DataError.
ImageInfo ReadXpmInfo(std::string_view bytes, const std::string& path);

// Decodes to RGB; more than `max_pixels` pixels is refused before allocation.
Image DecodeXpm(std::string_view bytes, const std::string& path, uint64_t max_pixels);

}  // namespace imgpipe
