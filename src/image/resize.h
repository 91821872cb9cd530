// Antialiased resize of 8-bit HWC images: a separable triangle (bilinear) filter whose
// support widens with the downscale factor, as Pillow's BILINEAR and torchvision's
// antialiased resize do, in fixed point; upscaling is plain bilinear.
#pragma once

#include <cstddef>
#include <cstdint>

#include "image/image.h"

namespace imgpipe {

// Resizes `src` to width x height (same channel count).
Image Resize(const Image& src, int width, int height);

// The same on raw buffers; strides in bytes. `dst` must hold height rows.
void ResizeInto(const uint8_t* src, int src_width, int src_height, size_t src_stride,
                int channels, uint8_t* dst, int width, int height, size_t dst_stride);

// Resizes the part of `src` inside `box` (fractional edges allowed, within the image),
// as Pillow's Image.resize(size, BILINEAR, box=...): the window is never copied.
Image Resize(const Image& src, const PixelBox& box, int width, int height);
void ResizeInto(const uint8_t* src, int src_width, int src_height, size_t src_stride,
                int channels, const PixelBox& box, uint8_t* dst, int width, int height,
                size_t dst_stride);

}  // namespace imgpipe
