// Image header parsing, decoding and JPEG encoding. JPEG goes through libjpeg-turbo
// (TurboJPEG); GIF (its first frame) through giflib (gif_decoder.h); the other formats
// through the libraries Debian's OpenCV uses (libpng, libtiff, libwebp, OpenJPEG, its own
// BMP/PNM readers); TGA, PSD, ICO/CUR, PCX, SGI, Sun raster, XBM, HEIF and AVIF through
// format_decoders.h. docs/image-formats.md lists them all, and those refused by name.
//
// Every error is a DataError naming `path` (a label only; nothing is read from it),
// with a reason a person can act on, e.g. "unsupported JPEG: lossless (SOF3)",
// "unsupported JPEG: 12-bit samples", "truncated JPEG data", "not an image (unknown
// signature)", "not an image: DDS texture (unsupported)", "image too large: 30000x30000
// pixels exceeds the limit of 268435456".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "image/image.h"

namespace imgpipe {

// Upper bound on width*height accepted by default (decompression-bomb guard).
inline constexpr uint64_t kDefaultMaxPixels = uint64_t{1} << 28;

// Reads the header and checks that imgpipe can decode the image (format known,
// JPEG process supported, dimensions positive and within max_pixels). Cheap: JPEG
// parses markers up to the first scan; no pixels are decoded.
ImageInfo ReadImageInfo(std::string_view bytes, const std::string& path,
                        uint64_t max_pixels = kDefaultMaxPixels);

struct DecodeOptions {
  int channels = 3;  // 3: RGB output (gray and CMYK converted), 1: grayscale
  uint64_t max_pixels = kDefaultMaxPixels;
};

// Decodes the whole image; corrupt or truncated data throws DataError. libjpeg's
// warnings are judged by IsFatalJpegWarning (jpeg_lib.h): truncation throws, the others
// (extraneous bytes before a marker, damaged entropy-coded data in a whole file...)
// decode to Pillow's pixels and are reported to ReportDecodeWarnings (decode_warnings.h).
Image DecodeImage(std::string_view bytes, const std::string& path,
                  const DecodeOptions& options = {});

// Encodes 1- or 3-channel pixels as baseline JPEG (4:2:0 for RGB) at `quality` 1..100.
std::string EncodeJpeg(const Image& image, int quality = 95);

}  // namespace imgpipe
