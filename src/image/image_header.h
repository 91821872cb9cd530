// Header parsers for the formats decoded through OpenCV (PNG, BMP, TIFF, PNM/PAM, GIF,
// WebP, JPEG 2000): size and channels from the first bytes, no pixels decoded.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "image/image.h"

namespace imgpipe {

// Parses the header of `bytes`, whose signature is `format` (not kJpeg or kUnknown).
// Throws DataError naming `path` for a truncated or invalid header, a variant OpenCV
// cannot decode (e.g. BMP compression 4), or dimensions outside 1..2^31-1.
ImageInfo ParseImageHeader(ImageFormat format, std::string_view bytes, const std::string& path);

// One entry of a TIFF's first IFD: its tag, type and count, where its 4-byte value field
// lies in the file, and the value when it is one SHORT or LONG (else -1).
struct TiffEntry {
  uint32_t tag = 0, type = 0;
  uint64_t count = 0;
  uint64_t value_offset = 0;
  int64_t value = -1;
};

// The entries of IFD0 of `bytes`, a TIFF (either byte order); throws DataError naming
// `path` ("truncated TIFF header") where the header or the IFD is cut short.
std::vector<TiffEntry> ReadTiffEntries(std::string_view bytes, const std::string& path);

}  // namespace imgpipe
