// The formats imgpipe decodes with neither TurboJPEG nor OpenCV nor giflib: TGA and PSD
// (stb_decoder.h), ICO/CUR (ico_decoder.h), PCX/DCX (pcx_decoder.h), SGI
// (sgi_decoder.h), Sun raster (sun_raster_decoder.h), XBM (xbm_decoder.h), HEIF and
// AVIF (heif_decoder.h), TIFF (tiff_decoder.h), DIB (dib_decoder.h), XPM (xpm_decoder.h).
// codec.cc and image_header.cc route these formats here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "image/image.h"

namespace imgpipe {

// True for the formats above.
bool HasFormatDecoder(ImageFormat format);

// The header of `bytes` of such a format; throws DataError for a bad one.
ImageInfo ReadFormatDecoderInfo(ImageFormat format, std::string_view bytes,
                                const std::string& path);

// Decodes `bytes` of such a format to `channels` (1 or 3); bad data or more than
// `max_pixels` pixels throws DataError.
Image DecodeWithFormatDecoder(ImageFormat format, std::string_view bytes,
                              const std::string& path, int channels, uint64_t max_pixels);

}  // namespace imgpipe
