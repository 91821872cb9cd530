#include "image/orientation.h"

#include <cstddef>
#include <cstring>

namespace imgpipe {

Image ApplyExifOrientation(Image image, int orientation) {
  if (orientation < 2 || orientation > 8) return image;
  const int w = image.width, h = image.height, c = image.channels;
  const bool transposed = orientation >= 5;
  Image out;
  out.width = transposed ? h : w;
  out.height = transposed ? w : h;
  out.channels = c;
  out.pixels.resize(image.pixels.size());
  // 1. Where source pixel (x, y) lands: dst(x, y) = origin + x * step_x + y * step_y,
  //    in destination pixels.
  const std::ptrdiff_t ow = out.width, oh = out.height;
  std::ptrdiff_t origin = 0, step_x = 0, step_y = 0;
  switch (orientation) {
    case 2: origin = ow - 1;            step_x = -1;  step_y = ow;  break;  // mirror
    case 3: origin = oh * ow - 1;       step_x = -1;  step_y = -ow; break;  // 180
    case 4: origin = (oh - 1) * ow;     step_x = 1;   step_y = -ow; break;  // flip
    case 5: origin = 0;                 step_x = ow;  step_y = 1;   break;  // transpose
    case 6: origin = ow - 1;            step_x = ow;  step_y = -1;  break;  // 90 cw
    case 7: origin = oh * ow - 1;       step_x = -ow; step_y = -1;  break;  // transverse
    case 8: origin = (oh - 1) * ow;     step_x = -ow; step_y = 1;   break;  // 90 ccw
  }
  // 2. Copy every pixel to its place.
  for (int y = 0; y < h; ++y) {
    const uint8_t* src = image.row(y);
    std::ptrdiff_t dst = origin + y * step_y;
    for (int x = 0; x < w; ++x, dst += step_x, src += c) {
      std::memcpy(out.pixels.data() + dst * c, src, c);
    }
  }
  return out;
}

}  // namespace imgpipe
