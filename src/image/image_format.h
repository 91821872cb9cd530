// Image container formats, told apart by their first bytes (never by file name).
#pragma once

#include <string_view>

namespace imgpipe {

enum class ImageFormat {
  kUnknown, kJpeg, kPng, kBmp, kTiff, kPnm, kGif, kWebp, kJpeg2000,
  kTga, kIco, kPsd, kPcx, kSgi, kSunRaster, kXbm, kHeif, kAvif, kDib, kXpm
};

// The format whose signature `bytes` starts with, or kUnknown. TGA has no signature:
// it is the last guess, for a header whose fields all hold values the format allows. A
// DIB's only signature is its info header's size (Pillow's: 12, 40, 64, 108 or 124), so
// its other fields must hold values a BMP allows too; it is guessed before TGA.
ImageFormat DetectImageFormat(std::string_view bytes);

// Lower-case name: "jpeg", "png", "bmp", "tiff", "pnm", "gif", "webp", "jpeg2000", "tga",
// "ico", "psd", "pcx", "sgi", "sun-raster", "xbm", "heif", "avif", "dib", "xpm", "unknown".
const char* ImageFormatName(ImageFormat format);

// For bytes of kUnknown format: the name of an image format imgpipe recognises by its
// signature but does not decode ("DDS texture", "Apple icon (ICNS)", ...), or nullptr.
const char* UnsupportedImageFormatName(std::string_view bytes);

}  // namespace imgpipe
