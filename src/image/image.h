// Decoded images and their headers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "image/image_format.h"

namespace imgpipe {

// Interleaved 8-bit pixels, row-major, height x width x channels (HWC).
struct Image {
  int width = 0;
  int height = 0;
  int channels = 0;
  std::vector<uint8_t> pixels;

  size_t row_bytes() const { return static_cast<size_t>(width) * channels; }
  uint8_t* row(int y) { return pixels.data() + static_cast<size_t>(y) * row_bytes(); }
  const uint8_t* row(int y) const { return pixels.data() + static_cast<size_t>(y) * row_bytes(); }
};

// A rectangle with fractional edges in pixel coordinates: pixel (x, y) covers
// [x, x + 1) x [y, y + 1). Resize reads a source box; the region decoder reports where a
// window lies in its (DCT-scaled) result.
struct PixelBox {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  double width() const { return x1 - x0; }
  double height() const { return y1 - y0; }
};

// What a header says about an image, without decoding its pixels.
struct ImageInfo {
  ImageFormat format = ImageFormat::kUnknown;
  int width = 0;
  int height = 0;
  int channels = 0;        // in the file: 1 (gray), 3 (RGB/YCbCr), 4 (CMYK/RGBA)
  std::string colorspace;  // "RGB", "Grayscale", "CMYK" (TensorFlow's vocabulary)
  // EXIF orientation 1..8 (JPEG APP1, TIFF's Orientation tag; 1 elsewhere). width and
  // height are as stored; DecodeImage applies the orientation, which swaps them for 5..8.
  int orientation = 1;

  int decoded_width() const { return orientation >= 5 ? height : width; }
  int decoded_height() const { return orientation >= 5 ? width : height; }
};

}  // namespace imgpipe
