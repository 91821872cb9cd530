// Image container formats, told apart by their first bytes (never by file name).
#pragma once

#include <string_view>

namespace imgpipe {

enum class ImageFormat { kUnknown, kJpeg, kPng, kBmp, kTiff, kPnm, kGif, kWebp, kJpeg2000 };

// The format whose signature `bytes` starts with, or kUnknown.
ImageFormat DetectImageFormat(std::string_view bytes);

// Lower-case name: "jpeg", "png", "bmp", "tiff", "pnm", "gif", "webp", "jpeg2000", "unknown".
const char* ImageFormatName(ImageFormat format);

}  // namespace imgpipe
