// Animated WebP (a VP8X chunk with the animation flag): the first frame, as Pillow 9.4
// shows it. libwebpdemux's WebPAnimDecoder (webp_anim_library.h; Pillow's _webp module
// uses the same, with its default options: RGBA, not premultiplied) composites it on the
// canvas (transparent black outside the frame); the RGB output drops the alpha, as
// Pillow's convert("RGB") does. Later frames are not decoded. Still WebP files go through
// OpenCV (opencv_decoder.h). Failures throw DataError naming the path.
#pragma once

#include <string>
#include <string_view>

#include "image/image.h"

namespace imgpipe {

// True for a WebP whose VP8X chunk has the animation flag.
bool IsAnimatedWebp(std::string_view bytes);

// Decodes the first frame of the animated WebP `bytes`, whose header gave `info` (the
// canvas size, checked against max_pixels by ReadImageInfo), to `channels` (1 or 3). A
// file libwebp's demuxer refuses (truncated, a damaged chunk) or a canvas of another size
// than the header's throws DataError. The first animated WebP of the process is logged.
Image DecodeAnimatedWebp(std::string_view bytes, const std::string& path, const ImageInfo& info,
                         int channels);

}  // namespace imgpipe
