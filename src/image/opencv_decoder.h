// Decoding through OpenCV 4.6's codecs (libpng, libtiff, libwebp, OpenJPEG, its own BMP
// and PNM readers; loaded at the first such file: opencv_loader.h), for the formats
// DecodeImage does not decode itself, to the pixels
// Pillow 9.4 gives (Image.open(path).convert("RGB")). Where OpenCV's differ, the file is
// decoded otherwise or its pixels mapped:
// - TIFF orientation: OpenCV's TIFF reader applies the Orientation tag, as Pillow does
//   (and as DecodeImage applies a JPEG's EXIF one); ParseTiff sets ImageInfo's
//   orientation, so the size is checked as oriented.
// - TIFF with unassociated alpha (ExtraSamples 2): libtiff's RGBA reader, which OpenCV
//   uses for 8-bit output, multiplies the colour by alpha; Pillow keeps the colour as
//   stored. OpenCV reads a copy whose tag says "unspecified" (libtiff then passes the
//   stored colour through).
// - TIFF gray with 32-bit float samples: OpenCV refuses them for 8-bit output; Pillow
//   clips them to 0..255, truncating. They are decoded as floats and clipped so.
//   (16-bit samples keep their high byte, as in PNG and PNM: docs/image-formats.md.
//   Pillow clips those too, which keeps nothing of most 16-bit images.)
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
// oriented as above. Throws DataError naming `path` where OpenCV fails or its image does
// not have the header's (oriented) size.
Image DecodeWithOpenCv(std::string_view bytes, const std::string& path, const ImageInfo& info,
                       int channels);

}  // namespace imgpipe
