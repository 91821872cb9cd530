// GIF decoding through giflib: the first frame, as Pillow shows it (frame 0 pasted on a
// canvas of the logical screen's size, filled with the frame's transparent index or 0,
// then looked up in the frame's colour table, else the global one, else gray levels).
// Every failure throws DataError naming the path, the byte offset where giflib stopped
// and what was being read.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "image/image.h"

namespace imgpipe {

// Decodes the first frame of the GIF `bytes` to `channels` (3: RGB, 1: gray by ITU-R
// 601 luma, as Pillow's convert("L")) at the size in `info` (the logical screen's; parts
// of the frame outside it are cut off). The first animated GIF of the process is logged
// ("decoded frame 1"). Corrupt or truncated data up to the end of the first frame throws
// DataError, as does a first frame of over `max_pixels` pixels (decompression-bomb
// guard); the later frames are not read, as Pillow shows the file (damage there, in a
// frame's descriptor or data, costs nothing).
Image DecodeGif(std::string_view bytes, const std::string& path, const ImageInfo& info,
                int channels, uint64_t max_pixels);

}  // namespace imgpipe
