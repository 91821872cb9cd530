// Antialiased resize of 8-bit HWC images: a separable triangle (bilinear) filter whose
// support widens with the downscale factor, as Pillow's BILINEAR and torchvision's
// antialiased resize do, in fixed point; upscaling is plain bilinear.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

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

// A crop of a resized image: the full_width x full_height image resized to
// resized_width x resized_height, then the crop_width x crop_height pixels at
// (crop_x, crop_y) of that (torchvision's Resize then CenterCrop).
struct ResizeCrop {
  int full_width = 0, full_height = 0;
  int resized_width = 0, resized_height = 0;
  int crop_x = 0, crop_y = 0, crop_width = 0, crop_height = 0;
};

// Pixels [x0, x1) x [y0, y1) of an image.
struct ResizeCropSpan {
  int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

// The pixels of the full image that the crop's outputs read. Throws Error unless the
// crop lies inside the resized image and all sizes are positive.
ResizeCropSpan ResizeCropSource(const ResizeCrop& rc);

// Computes only the crop's pixels of the resize, with the whole resize's weights: the
// same bytes as Resize(image, resized_width, resized_height) then the crop. `src` holds
// the pixels `held` of the full image (row held.y0's pixel held.x0 first), which must
// include ResizeCropSource(rc); otherwise throws Error. `dst` gets crop_height rows.
void ResizeCropInto(const uint8_t* src, const ResizeCropSpan& held, size_t src_stride,
                    int channels, const ResizeCrop& rc, uint8_t* dst, size_t dst_stride);

// The implementations of the resize loops; all give the same bytes.
enum class ResizeKernel { kAuto, kPortable, kSse41, kAvx2, kAvx512 };

// Returns "auto", "portable", "sse4.1", "avx2" or "avx512" (AVX-512 BW with VNNI).
const char* ResizeKernelName(ResizeKernel kernel);

// Returns the kernel that `name` names (as ResizeKernelName gives it); throws Error
// quoting `name` if none.
ResizeKernel ResizeKernelNamed(const std::string& name);

// Returns whether this build and CPU can run `kernel` (kAuto and kPortable: always).
bool ResizeKernelAvailable(ResizeKernel kernel);

// Returns the kernels (not kAuto) this build and CPU can run, portable first, then
// from the narrowest instruction set to the widest.
std::vector<ResizeKernel> AvailableResizeKernels();

// Makes later resizes in this process use `kernel` (for tests and benchmarks). kAuto
// picks AVX-512 VNNI, else AVX2, else SSE4.1, else portable. The starting choice is kAuto, or the
// environment variable IMGPIPE_RESIZE_KERNEL (a name above). Throws Error if `kernel`
// is not available.
void SetResizeKernel(ResizeKernel kernel);

// Returns the kernel resizes use now, kAuto resolved. Throws Error if
// IMGPIPE_RESIZE_KERNEL names no kernel, or one this CPU lacks.
ResizeKernel ActiveResizeKernel();

}  // namespace imgpipe
