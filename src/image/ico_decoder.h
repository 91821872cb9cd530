// ICO and CUR: a directory of images, each a PNG file or a BMP DIB (its height doubled
// for the AND mask that follows the colour bitmap). imgpipe reads the entry Pillow
// reads: for ICO the largest (width x height from the directory, 0 meaning 256), then
// the deepest colour, then the last in the file; for CUR the first, or a later one
// wider and taller. A PNG entry is decoded as PNG, a DIB as the
// BMP it would be with a file header and its own height (the mask is transparency only,
// and imgpipe's output has none; dib_decoder.h). The directory's size field is not used:
// an entry runs to the end of the file, as Pillow reads it (cursors whose size is 0 or
// wrong). A CUR of PNG entries is read too (Pillow 9.4 refuses it). Failures throw
// DataError naming the path and offset.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "image/image.h"

namespace imgpipe {

// The chosen entry's size, from its own header (the PNG's IHDR, the DIB's header), not
// the directory's one-byte fields. A truncated directory, an entry outside the file or
// an entry neither PNG nor DIB throws DataError.
ImageInfo ReadIcoInfo(std::string_view bytes, const std::string& path);

// Decodes the chosen entry to `channels` (1 or 3); the entry's pixel count must be at
// most `max_pixels`.
Image DecodeIco(std::string_view bytes, const std::string& path, int channels,
                uint64_t max_pixels);

}  // namespace imgpipe
