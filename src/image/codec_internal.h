// Pieces of the decoders (codec.cc) that the region and GIF decoders share.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "image/image.h"

namespace imgpipe {

// ReadImageInfo for bytes that must be a JPEG: any other format is a DataError naming
// `path`, "not a JPEG (PNG data)" and the like.
ImageInfo ReadJpegImageInfo(std::string_view bytes, const std::string& path,
                            uint64_t max_pixels);

// A reason a person can act on, from a libjpeg/TurboJPEG message.
std::string JpegReason(const std::string& message);

// ITU-R 601 luma of an RGB triple, rounded.
inline uint8_t Luma(uint32_t r, uint32_t g, uint32_t b) {
  return static_cast<uint8_t>((299 * r + 587 * g + 114 * b + 500) / 1000);
}

// CMYK to RGB as libjpeg's users (Pillow, OpenCV) do it: R = (1 - C)(1 - K), and so on.
// Files with an Adobe marker (Photoshop's and TurboJPEG's) store the samples inverted,
// i.e. 255 - ink, so R = C'K' / 255. `out` has its size and channels (1 or 3) set and
// its pixels allocated; `cmyk` holds 4 samples for each of its pixels.
void CmykToRgbOrGray(const std::vector<uint8_t>& cmyk, bool inverted, Image& out);

}  // namespace imgpipe
