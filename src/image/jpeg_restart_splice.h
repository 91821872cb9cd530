// Crop decoding of JPEGs that have restart markers (DRI): the entropy-coded data between
// two markers holds a run of whole MCUs that decodes on its own (the DC predictions
// restart), so the MCUs under a crop window can be cut out and spliced, with renumbered
// markers, into a JPEG of their own whose decode gives exactly the window's pixels of a
// decode of the whole file. The decoder then entropy-decodes only those MCUs, not every
// MCU above and beside the window. AddJpegRestartMarkers (jpeg_transcode.h) gives any
// JPEG a marker every MCU, the finest cut.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace imgpipe {

// A JPEG spliced from MCUs of another: its pixels are those of the original's stored
// (not EXIF-oriented) rectangle [x, x + width) x [y, y + height).
struct SplicedJpeg {
  std::string bytes;
  int x = 0;
  int y = 0;
  int width = 0;
  int height = 0;
};

// Splices the MCUs that cover the stored window [x, x + window_width) x
// [y, y + window_height) of `jpeg`, and one MCU more on each side where the window comes
// within `margin` pixels of its MCUs' edge (and the image goes on): chroma upsampling
// reads up to `margin` pixels beyond the window, and the splice's edges must be the real
// neighbours there. Then the window's pixels decode exactly as in a decode of the whole
// file. Returns nullopt, for a decode of the whole file, when the file has no restart
// markers or is not a single sequential Huffman-coded scan of all its components, when
// its restart interval neither divides nor is a multiple of its MCU rows, when its
// markers are not the expected ones in the expected number (damaged or truncated data:
// the whole decode reports it), or when the window needs every MCU down to its last row
// anyway. Never throws.
std::optional<SplicedJpeg> SpliceJpegWindow(std::string_view jpeg, int x, int y,
                                            int window_width, int window_height, int margin);

// SpliceJpegWindow into `out`, reusing its buffer's capacity (a decoder that splices
// every image keeps one per thread); returns false, `out` then unspecified, where
// SpliceJpegWindow returns nullopt. Never throws but std::bad_alloc.
bool SpliceJpegWindowInto(std::string_view jpeg, int x, int y, int window_width,
                          int window_height, int margin, SplicedJpeg& out);

namespace splice_internal {

// Bit i set where bytes[i] == 0xFF, for i < min(n, 64): SSE2 where the compiler targets
// it, else FfByteMaskPortable.
uint64_t FfByteMask(const unsigned char* bytes, size_t n);
uint64_t FfByteMaskPortable(const unsigned char* bytes, size_t n);

}  // namespace splice_internal

}  // namespace imgpipe
