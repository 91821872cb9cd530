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
