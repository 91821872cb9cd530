// Decoding through OpenCV 4.6's codecs (libpng, libwebp, OpenJPEG, its own BMP and PNM
// readers; loaded at the first such file: opencv_loader.h), for the formats DecodeImage
// does not decode itself (TIFF it reads with libtiff: tiff_decoder.h), to the pixels
// Pillow 9.4 gives (Image.open(path).convert("RGB")). Where OpenCV's differ, the file is
// decoded otherwise or its pixels mapped:
// - BMP with 16-bit pixels (5-5-5, or 5-6-5 bit fields): OpenCV widens a 5-bit sample
//   v to v << 3, Pillow to v * 255 / 31 (a 6-bit one to v * 255 / 63); OpenCV's values
//   are mapped to Pillow's.
// Benign damage the libraries pass over decodes (libpng drops an ancillary chunk with a
// bad CRC, as Pillow 9.4 does after the image data); truncated data is a DataError.
#pragma once

#include <string>
#include <string_view>

#include "image/image.h"

namespace imgpipe {

// Decodes `bytes`, whose header gave `info`, to `channels` (1: gray, 3: RGB) pixels,
// Throws DataError naming `path` where OpenCV fails or its image does
// not have the header's (oriented) size.
Image DecodeWithOpenCv(std::string_view bytes, const std::string& path, const ImageInfo& info,
                       int channels);

}  // namespace imgpipe
