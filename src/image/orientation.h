// EXIF orientation (TIFF tag 0x0112) applied to decoded pixels.
#pragma once

#include "image/image.h"

namespace imgpipe {

// The image as it should be displayed for EXIF `orientation` 1..8: 2 mirrors, 3 turns
// 180 degrees, 4 flips, 5 transposes, 6 turns 90 degrees clockwise, 7 transverses,
// 8 turns 90 degrees counter-clockwise. Orientations 5..8 swap width and height;
// values outside 2..8 return the image unchanged.
Image ApplyExifOrientation(Image image, int orientation);

}  // namespace imgpipe
