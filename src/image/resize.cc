#include "image/resize.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "image/resize_coefficients.h"
#include "image/resize_kernels.h"
#include "image/resize_permute_table.h"
#include "util/error.h"

namespace imgpipe {
namespace {

using resize_internal::ColumnPass;
using resize_internal::Coefficients;
using resize_internal::RowPass;

constexpr ResizeKernel kKernels[] = {ResizeKernel::kAuto, ResizeKernel::kPortable,
                                     ResizeKernel::kSse41, ResizeKernel::kAvx2,
                                     ResizeKernel::kAvx512};

// The chosen kernel as an int; -1 until the first use reads IMGPIPE_RESIZE_KERNEL.
std::atomic<int> chosen_kernel{-1};

// Returns the kernel that IMGPIPE_RESIZE_KERNEL names (kAuto if unset or empty);
// throws Error if it names none.
ResizeKernel KernelFromEnvironment() {
  const char* value = std::getenv("IMGPIPE_RESIZE_KERNEL");
  if (value == nullptr || *value == '\0') return ResizeKernel::kAuto;
  try {
    return ResizeKernelNamed(value);
  } catch (const Error& e) {
    throw Error(std::string("IMGPIPE_RESIZE_KERNEL: ") + e.what());
  }
}

// The loops of one kernel: SIMD rows need their loads within the row (RowSimdEnd),
// SIMD columns rows of at least column_min_bytes; the portable loops do the rest.
// permute_rows, where set, does the horizontal pass instead of rows wherever the
// weights fit its layout (resize_permute_table.h). rows read the weights' row groups,
// columns the layouts in column_layouts (resize_coefficients.h).
struct Loops {
  void (*rows)(const RowPass&) = nullptr;  // nullptr: portable only
  void (*columns)(const ColumnPass&) = nullptr;
  size_t column_min_bytes = 0;
  void (*permute_rows)(const RowPass&, const resize_internal::PermuteView&, int) = nullptr;
  unsigned column_layouts = 0;
};

// Whether the CPU has AVX-512 VBMI (the AVX-512 kernel's rows use it where it does).
bool CpuHasAvx512Vbmi() {
#ifdef IMGPIPE_RESIZE_SIMD
  static const bool vbmi = (__builtin_cpu_init(), __builtin_cpu_supports("avx512vbmi"));
  return vbmi;
#else
  return false;
#endif
}

Loops LoopsFor(ResizeKernel kernel) {
#ifdef IMGPIPE_RESIZE_SIMD
  if (kernel == ResizeKernel::kAvx512) {
    return {resize_internal::RowPassAvx512, resize_internal::ColumnPassAvx512, 64,
            CpuHasAvx512Vbmi() ? resize_internal::RowPassAvx512Vbmi : nullptr,
            resize_internal::kColumnDigits};
  }
  if (kernel == ResizeKernel::kAvx2) {
    return {resize_internal::RowPassAvx2, resize_internal::ColumnPassAvx2, 32, nullptr,
            resize_internal::kColumnPairs};
  }
  if (kernel == ResizeKernel::kSse41) {
    return {resize_internal::RowPassSse41, resize_internal::ColumnPassSse41, 16, nullptr,
            resize_internal::kColumnPairs};
  }
#endif
  (void)kernel;
  return {};
}

// The view of outputs [begin, ...) of `k`.
resize_internal::CoefficientView Outputs(resize_internal::CoefficientView k, int begin) {
  k.first += begin;
  k.count += begin;
  k.weights += static_cast<size_t>(begin) * k.taps;
  if (k.packed) k.packed += static_cast<size_t>(begin) * k.groups * resize_internal::kGroupInt16;
  if (k.pair_words) k.pair_words += static_cast<size_t>(begin) * k.pairs * 2;
  if (k.quad_digits) k.quad_digits += static_cast<size_t>(begin) * k.quads * 3;
  return k;
}

// The horizontal pass of the kernel on pixels [begin, out_width), whose loads would
// pass the end of the row (pixel in_end, counted like k.first): on a copy of the rows'
// ends, each padded with zeros (read only with zero weights).
void RunRowsOnPaddedCopy(const Loops& loops, const RowPass& pass, int in_end, int begin,
                         int out_width) {
  const int from = pass.k.first[begin];  // first[] never decreases
  const size_t bytes = static_cast<size_t>(in_end - from) * pass.channels;
  const size_t stride = bytes + static_cast<size_t>(pass.k.groups) * 4 * pass.channels + 16;
  thread_local std::vector<uint8_t> copy;
  copy.assign(stride * pass.rows, 0);
  const size_t skip = static_cast<size_t>(from - pass.column_offset) * pass.channels;
  for (int r = 0; r < pass.rows; ++r) {
    std::copy_n(pass.src + r * pass.src_stride + skip, bytes, copy.data() + r * stride);
  }
  loops.rows(RowPass{copy.data(), stride, from, pass.rows, pass.channels, pass.k, pass.dst,
                     pass.dst_stride, begin, out_width});
}

// The horizontal pass over all output pixels, by the kernel's permute loop or its loop
// (on a padded copy of the rows' ends where its 16-byte loads would pass them), else the
// portable one; pass.k is set here, to kh's outputs from k_begin on. The rows end at
// pixel in_end (counted like k.first; pass.src holds them from pass.column_offset).
void RunRows(const Loops& loops, RowPass pass, int in_end, int out_width,
             const std::shared_ptr<const Coefficients>& kh, int k_begin) {
  pass.begin = 0;
  pass.end = out_width;
  pass.k = Outputs(kh->View(0), k_begin);
  if (loops.permute_rows) {
    const auto table =
        resize_internal::PermuteTableFor(kh, pass.k, out_width, pass.channels);
    if (table) return loops.permute_rows(pass, table->View(), in_end);
  }
  if (!loops.rows) return resize_internal::RowPassPortable(pass);
  pass.k = Outputs(kh->View(resize_internal::kRowGroups), k_begin);
  pass.end = resize_internal::RowSimdEnd(pass.k, in_end, pass.channels, out_width);
  if (pass.end > 0) loops.rows(pass);
  if (pass.end < out_width) RunRowsOnPaddedCopy(loops, pass, in_end, pass.end, out_width);
}

void RunColumns(const Loops& loops, const ColumnPass& pass) {
  if (loops.columns && pass.row_bytes >= loops.column_min_bytes) {
    loops.columns(pass);
  } else {
    resize_internal::ColumnPassPortable(pass);
  }
}

// A pass is the identity (and skipped) when it maps whole pixels one to one.
bool IsIdentity(double in0, double in1, int out_size) {
  return in1 - in0 == out_size && in0 == std::floor(in0);
}

// Throws Error unless the arguments describe a resize this file can do.
void CheckArguments(int src_width, int src_height, int channels, const PixelBox& box,
                    int width, int height) {
  if (channels < 1 || channels > 4 || src_width < 1 || src_height < 1 || width < 1 ||
      height < 1 || !(box.x0 >= 0 && box.y0 >= 0 && box.x1 <= src_width &&
                      box.y1 <= src_height && box.x0 < box.x1 && box.y0 < box.y1)) {
    throw Error("Resize: cannot resize box (" + std::to_string(box.x0) + ", " +
                std::to_string(box.y0) + ")-(" + std::to_string(box.x1) + ", " +
                std::to_string(box.y1) + ") of a " + std::to_string(src_width) + "x" +
                std::to_string(src_height) + "x" + std::to_string(channels) + " image to " +
                std::to_string(width) + "x" + std::to_string(height));
  }
}

// The input pixels [first, end) that outputs [0, n) of `k` read.
std::pair<int, int> InputSpan(const resize_internal::CoefficientView& k, int n) {
  int end = k.first[0];
  for (int i = 0; i < n; ++i) end = std::max(end, k.first[i] + k.count[i]);
  return {k.first[0], end};
}

// Throws Error unless `rc` is a crop inside a resize of a non-empty image.
void CheckResizeCrop(const ResizeCrop& rc) {
  if (rc.full_width < 1 || rc.full_height < 1 || rc.resized_width < 1 ||
      rc.resized_height < 1 || rc.crop_width < 1 || rc.crop_height < 1 || rc.crop_x < 0 ||
      rc.crop_y < 0 || rc.crop_x > rc.resized_width - rc.crop_width ||
      rc.crop_y > rc.resized_height - rc.crop_height) {
    throw Error("ResizeCrop: cannot crop " + std::to_string(rc.crop_width) + "x" +
                std::to_string(rc.crop_height) + " at (" + std::to_string(rc.crop_x) + ", " +
                std::to_string(rc.crop_y) + ") from a " + std::to_string(rc.full_width) + "x" +
                std::to_string(rc.full_height) + " image resized to " +
                std::to_string(rc.resized_width) + "x" + std::to_string(rc.resized_height));
  }
}

}  // namespace

const char* ResizeKernelName(ResizeKernel kernel) {
  switch (kernel) {
    case ResizeKernel::kAuto: return "auto";
    case ResizeKernel::kPortable: return "portable";
    case ResizeKernel::kSse41: return "sse4.1";
    case ResizeKernel::kAvx2: return "avx2";
    case ResizeKernel::kAvx512: return "avx512";
  }
  return "?";
}

ResizeKernel ResizeKernelNamed(const std::string& name) {
  for (ResizeKernel kernel : kKernels) {
    if (name == ResizeKernelName(kernel)) return kernel;
  }
  throw Error("No resize kernel is named \"" + name +
              "\"; the kernels are auto, portable, sse4.1, avx2 and avx512.");
}

bool ResizeKernelAvailable(ResizeKernel kernel) {
#ifdef IMGPIPE_RESIZE_SIMD
  static const bool sse41 = (__builtin_cpu_init(), __builtin_cpu_supports("sse4.1"));
  static const bool avx2 = __builtin_cpu_supports("avx2");
  static const bool avx512 =
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vnni");
  if (kernel == ResizeKernel::kSse41) return sse41;
  if (kernel == ResizeKernel::kAvx2) return avx2;
  if (kernel == ResizeKernel::kAvx512) return avx512;
#else
  if (kernel == ResizeKernel::kSse41 || kernel == ResizeKernel::kAvx2 ||
      kernel == ResizeKernel::kAvx512) {
    return false;
  }
#endif
  return true;
}

std::vector<ResizeKernel> AvailableResizeKernels() {
  std::vector<ResizeKernel> kernels;
  for (ResizeKernel kernel : kKernels) {
    if (kernel != ResizeKernel::kAuto && ResizeKernelAvailable(kernel)) kernels.push_back(kernel);
  }
  return kernels;
}

void SetResizeKernel(ResizeKernel kernel) {
  if (!ResizeKernelAvailable(kernel)) {
    throw Error(std::string("The ") + ResizeKernelName(kernel) +
                " resize kernel needs a CPU (and build) with that instruction set.");
  }
  chosen_kernel.store(static_cast<int>(kernel));
}

ResizeKernel ActiveResizeKernel() {
  int chosen = chosen_kernel.load();
  if (chosen < 0) {
    SetResizeKernel(KernelFromEnvironment());
    chosen = chosen_kernel.load();
  }
  const auto kernel = static_cast<ResizeKernel>(chosen);
  if (kernel != ResizeKernel::kAuto) return kernel;
  if (ResizeKernelAvailable(ResizeKernel::kAvx512)) return ResizeKernel::kAvx512;
  if (ResizeKernelAvailable(ResizeKernel::kAvx2)) return ResizeKernel::kAvx2;
  if (ResizeKernelAvailable(ResizeKernel::kSse41)) return ResizeKernel::kSse41;
  return ResizeKernel::kPortable;
}

void ResizeInto(const uint8_t* src, int src_width, int src_height, size_t src_stride,
                int channels, const PixelBox& box, uint8_t* dst, int width, int height,
                size_t dst_stride) {
  // 1. Check the arguments: a bad call is a programming error, not bad data.
  CheckArguments(src_width, src_height, channels, box, width, height);
  const Loops loops = LoopsFor(ActiveResizeKernel());
  const size_t out_row_bytes = static_cast<size_t>(width) * channels;
  const bool horizontal = !IsIdentity(box.x0, box.x1, width);
  const bool vertical = !IsIdentity(box.y0, box.y1, height);
  const uint8_t* src_x0 = src + static_cast<size_t>(box.x0) * channels;  // when !horizontal

  // 2. Only vertical, or neither: rows of the source, at the box's first column.
  if (!horizontal) {
    if (vertical) {
      const auto kv = resize_internal::CoefficientsFor(src_height, box.y0, box.y1, height);
      RunColumns(loops, ColumnPass{src_x0, src_stride, 0, kv->View(loops.column_layouts), dst,
                                   dst_stride, height, out_row_bytes});
    } else {
      for (int y = 0; y < height; ++y) {
        std::copy_n(src_x0 + (static_cast<size_t>(box.y0) + y) * src_stride, out_row_bytes,
                    dst + y * dst_stride);
      }
    }
    return;
  }
  const auto kh = resize_internal::CoefficientsFor(src_width, box.x0, box.x1, width);
  // 3. Only horizontal: straight into dst.
  if (!vertical) {
    RunRows(loops,
            RowPass{src + static_cast<size_t>(box.y0) * src_stride, src_stride, 0, height,
                    channels, {}, dst, dst_stride, 0, 0},
            src_width, width, kh, 0);
    return;
  }
  // 4. Both: the horizontal pass over the rows the vertical pass reads, into a buffer
  //    reused by the thread, then the vertical pass.
  const auto kv = resize_internal::CoefficientsFor(src_height, box.y0, box.y1, height);
  const int first_row = kv->first.front();
  const int last_row = kv->first.back() + kv->count.back();
  thread_local std::vector<uint8_t> temp;
  temp.resize(static_cast<size_t>(last_row - first_row) * out_row_bytes);
  RunRows(loops,
          RowPass{src + static_cast<size_t>(first_row) * src_stride, src_stride, 0,
                  last_row - first_row, channels, {}, temp.data(), out_row_bytes, 0, 0},
          src_width, width, kh, 0);
  RunColumns(loops, ColumnPass{temp.data(), out_row_bytes, first_row,
                               kv->View(loops.column_layouts), dst, dst_stride, height,
                               out_row_bytes});
}

void ResizeInto(const uint8_t* src, int src_width, int src_height, size_t src_stride,
                int channels, uint8_t* dst, int width, int height, size_t dst_stride) {
  ResizeInto(src, src_width, src_height, src_stride, channels,
             PixelBox{0, 0, static_cast<double>(src_width), static_cast<double>(src_height)},
             dst, width, height, dst_stride);
}

ResizeCropSpan ResizeCropSource(const ResizeCrop& rc) {
  CheckResizeCrop(rc);
  const auto kh = resize_internal::CoefficientsFor(rc.full_width, 0, rc.full_width,
                                                   rc.resized_width);
  const auto kv = resize_internal::CoefficientsFor(rc.full_height, 0, rc.full_height,
                                                   rc.resized_height);
  ResizeCropSpan span;
  std::tie(span.x0, span.x1) = rc.resized_width == rc.full_width
                                   ? std::pair<int, int>{rc.crop_x, rc.crop_x + rc.crop_width}
                                   : InputSpan(Outputs(kh->View(0), rc.crop_x), rc.crop_width);
  std::tie(span.y0, span.y1) = rc.resized_height == rc.full_height
                                   ? std::pair<int, int>{rc.crop_y, rc.crop_y + rc.crop_height}
                                   : InputSpan(Outputs(kv->View(0), rc.crop_y), rc.crop_height);
  return span;
}

void ResizeCropInto(const uint8_t* src, const ResizeCropSpan& held, size_t src_stride,
                    int channels, const ResizeCrop& rc, uint8_t* dst, size_t dst_stride) {
  // 1. Check that `src` holds what the crop's filters read.
  const ResizeCropSpan need = ResizeCropSource(rc);
  if (channels < 1 || channels > 4 || need.x0 < held.x0 || need.x1 > held.x1 ||
      need.y0 < held.y0 || need.y1 > held.y1) {
    throw Error("ResizeCropInto: the source holds pixels [" + std::to_string(held.x0) + ", " +
                std::to_string(held.x1) + ") x [" + std::to_string(held.y0) + ", " +
                std::to_string(held.y1) + ") but the crop reads [" + std::to_string(need.x0) +
                ", " + std::to_string(need.x1) + ") x [" + std::to_string(need.y0) + ", " +
                std::to_string(need.y1) + ")");
  }
  const Loops loops = LoopsFor(ActiveResizeKernel());
  const size_t out_row_bytes = static_cast<size_t>(rc.crop_width) * channels;
  const bool horizontal = rc.resized_width != rc.full_width;
  const bool vertical = rc.resized_height != rc.full_height;
  const auto kv = resize_internal::CoefficientsFor(rc.full_height, 0, rc.full_height,
                                                   rc.resized_height);
  const auto kh = resize_internal::CoefficientsFor(rc.full_width, 0, rc.full_width,
                                                   rc.resized_width);
  const auto rows_at = [&](int y) { return src + static_cast<size_t>(y - held.y0) * src_stride; };
  // 2. The horizontal pass over the rows the vertical pass reads (into a buffer reused
  //    by the thread), or straight into dst without one; none: the crop's columns.
  thread_local std::vector<uint8_t> temp;
  const uint8_t* rows = rows_at(need.y0) + static_cast<size_t>(rc.crop_x - held.x0) * channels;
  size_t rows_stride = src_stride;
  if (horizontal) {
    uint8_t* out = dst;
    rows_stride = dst_stride;
    if (vertical) {
      temp.resize(static_cast<size_t>(need.y1 - need.y0) * out_row_bytes);
      out = temp.data();
      rows_stride = out_row_bytes;
    }
    RunRows(loops,
            RowPass{rows_at(need.y0), src_stride, held.x0, need.y1 - need.y0, channels,
                    {}, out, rows_stride, 0, 0},
            held.x1, rc.crop_width, kh, rc.crop_x);
    rows = out;
  }
  // 3. The vertical pass, or the rows as they are.
  if (vertical) {
    RunColumns(loops, ColumnPass{rows, rows_stride, need.y0,
                                 Outputs(kv->View(loops.column_layouts), rc.crop_y), dst,
                                 dst_stride, rc.crop_height, out_row_bytes});
  } else if (!horizontal) {
    for (int y = 0; y < rc.crop_height; ++y) {
      std::copy_n(rows + y * rows_stride, out_row_bytes, dst + y * dst_stride);
    }
  }
}

Image Resize(const Image& src, const PixelBox& box, int width, int height) {
  Image out;
  out.width = width;
  out.height = height;
  out.channels = src.channels;
  out.pixels.resize(static_cast<size_t>(std::max(width, 0)) * std::max(height, 0) *
                    std::max(src.channels, 0));
  ResizeInto(src.pixels.data(), src.width, src.height, src.row_bytes(), src.channels, box,
             out.pixels.data(), width, height, out.row_bytes());
  return out;
}

Image Resize(const Image& src, int width, int height) {
  return Resize(src,
                PixelBox{0, 0, static_cast<double>(src.width), static_cast<double>(src.height)},
                width, height);
}

}  // namespace imgpipe
