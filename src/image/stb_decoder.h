// TGA and PSD (the composite image) through stb_image (Debian's libstb-dev, v2.27),
// compiled here with only those two loaders. stb reads TGA types 1-3 and 9-11 (colour
// mapped, true colour, gray; RLE or not; 8-32 bits) and PSD of colour mode RGB, 8 or 16
// bits (16 bits narrowed by the high byte); it un-premultiplies a 4-channel PSD's
// composite against Photoshop's white matte. Failures throw DataError naming the path
// and stb's reason.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "image/image.h"

namespace imgpipe {

// Width, height and channels of the TGA or PSD `bytes` (format kTga or kPsd), from the
// header alone; a header stb refuses throws DataError.
ImageInfo ReadStbInfo(ImageFormat format, std::string_view bytes, const std::string& path);

// Decodes the TGA or PSD `bytes` to RGB. More than `max_pixels` pixels, or data stb
// refuses (truncated, corrupt, an unsupported variant), throws DataError.
Image DecodeStb(ImageFormat format, std::string_view bytes, const std::string& path,
                uint64_t max_pixels);

}  // namespace imgpipe
