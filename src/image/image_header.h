// Header parsers for the formats decoded through OpenCV (PNG, BMP, PNM/PAM, GIF,
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

}  // namespace imgpipe
