// HEIF (HEIC: HEVC-coded) and AVIF (AV1-coded) through libheif (Debian's libheif1
// 1.15, which decodes HEVC with libde265 and AV1 with dav1d): the primary image, with
// its rotation, mirroring and crop applied (the container's irot/imir/clap, as Apple's
// and Android's viewers show it), colour-converted to 8-bit RGB by libheif; alpha is
// dropped. Failures throw DataError naming the path and libheif's message.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "image/image.h"

namespace imgpipe {

// The primary image's displayed size from the container (no pixels decoded).
ImageInfo ReadHeifInfo(ImageFormat format, std::string_view bytes, const std::string& path);

// Decodes the primary image to RGB; more than `max_pixels` pixels is refused before
// decoding.
Image DecodeHeif(ImageFormat format, std::string_view bytes, const std::string& path,
                 uint64_t max_pixels);

}  // namespace imgpipe
