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

// What AddJpegRestartMarkers made of a JPEG.
struct JpegRestartRewrite {
  std::optional<std::string> jpeg;  // the rewritten JPEG; nullopt: keep the input as given
  // Why the input is kept as given although it needed the rewrite: the rewrite failed
  // ("cannot rewrite the JPEG: DCT coefficient out of range") or its pixels differed.
  // Empty when rewritten, and when kept by design (see AddJpegRestartMarkers).
  std::string failure;
};

// Rewrites `jpeg` with a restart marker every `interval` MCUs (1..65535), losslessly: the
// same coefficients, sequential (a progressive file becomes sequential), Huffman tables
// optimised for the image, the APPn and COM segments (EXIF, ICC profile) kept. Checked:
// the result decodes (DecodeImage) to exactly the input's pixels. Keeps the input (jpeg
// nullopt) by design when it already is sequential with that interval, is CMYK or YCCK
// (their Adobe marker decides how they decode) or uses arithmetic coding; and, with
// `failure` set, when the rewrite fails or changes a pixel but the input decodes: such
// a JPEG (one whose coefficients libjpeg's encoder refuses, such as DC values past the
// baseline range that only restarts expose) is never lost. Throws Error for a bad
// interval and DataError naming `path` for bytes that DecodeImage (with `max_pixels`)
// would refuse (a truncated file even where it would be kept as it is). A warning
// DecodeImage accepts (IsFatalJpegWarning) is reported once, by the check's decode of
// the input; the rewrite is without it.
JpegRestartRewrite AddJpegRestartMarkers(std::string_view jpeg, const std::string& path,
                                         int interval, uint64_t max_pixels = kDefaultMaxPixels);

}  // namespace imgpipe
