// Pieces the decoders of format_decoders.h share: bounds checks that throw DataError
// naming the path and byte offset, the pixel budget checked before pixels are allocated,
// and RGB pixels narrowed to the caller's channel count.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "image/image.h"

namespace imgpipe {

// Throws DataError(path, offset, "truncated <what>") unless [offset, offset + size) lies
// within `bytes`.
void RequireBytes(std::string_view bytes, uint64_t offset, uint64_t size,
                  const std::string& path, const std::string& what);

// Header facts of a decoded-here format: checks `width` x `height` as AllocateImage
// does (but not the pixel budget, which ReadImageInfo checks); colorspace "Grayscale"
// for channels 1-2, else "RGB".
ImageInfo MakeHeaderInfo(ImageFormat format, int64_t width, int64_t height, int channels,
                         const std::string& path);

// Checks `width` x `height` (each 1..2^31-1, else DataError "invalid <format>
// dimensions") and its pixel count against `max_pixels` (else DataError "image too
// large"), then returns an image of that size with `channels` zeroed channels.
Image AllocateImage(int64_t width, int64_t height, int channels, uint64_t max_pixels,
                    const std::string& path, const char* format);

// `rgb` (3 channels) as `channels` channels: itself for 3, ITU-R 601 luma for 1.
Image RgbToChannels(Image rgb, int channels);

// Logs, the first time the process decodes an animation of `format` (`name`: "GIF",
// "WebP"), that `path` is one and that frame 1 was decoded, "of `frames`" where the
// count is known (> 0). Thread-safe.
void LogAnimationOnce(ImageFormat format, const char* name, const std::string& path, int frames);

}  // namespace imgpipe
