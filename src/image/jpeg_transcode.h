// Lossless JPEG rewriting: the same DCT coefficients, so the same pixels, in a layout
// that decodes crops faster. A restart marker every MCU lets the region decoder
// (jpeg_restart_splice.h) entropy-decode only the MCUs under a crop window.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "image/codec.h"

namespace imgpipe {

// The largest restart interval a JPEG can declare (DRI's 16-bit field), in MCUs.
inline constexpr int kMaxJpegRestartInterval = 65535;

// Rewrites `jpeg` with a restart marker every `interval` MCUs (1..65535), losslessly: the
// same coefficients, sequential (a progressive file becomes sequential), Huffman tables
// optimised for the image, the APPn and COM segments (EXIF, ICC profile) kept. Checked:
// the result decodes (DecodeImage) to exactly the input's pixels. Returns nullopt, for
// the caller to keep the input as it is, when the input already is sequential with that
// interval, is CMYK or YCCK (their Adobe marker decides how they decode) or uses
// arithmetic coding. Throws Error for a bad interval and DataError naming `path` for
// bytes that DecodeImage (with `max_pixels`) would refuse (a truncated file even where
// it would be kept as it is). A warning DecodeImage accepts (IsFatalJpegWarning) is
// reported once, by the check's decode of the input; the rewrite is without it.
std::optional<std::string> AddJpegRestartMarkers(std::string_view jpeg, const std::string& path,
                                                 int interval,
                                                 uint64_t max_pixels = kDefaultMaxPixels);

}  // namespace imgpipe
