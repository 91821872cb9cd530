// Every resize kernel (portable, SSE4.1, AVX2, AVX-512) gives the same bytes, on random
// images, sizes, boxes, channel counts and strides, and so do the AVX-512 loops that
// this CPU may not run (the rows without VBMI, the columns without weight digits); and
// choosing a kernel.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "image/image_test_util.h"
#include "image/resize.h"
#include "image/resize_coefficients.h"
#include "image/resize_kernels.h"
#include "util/error.h"

namespace imgpipe {
namespace {

// One random resize: source size and padding, box, output size.
struct RandomCase {
  int src_width, src_height, channels, src_padding, dst_padding;
  PixelBox box;
  int width, height;
  std::string Describe() const {
    return std::to_string(src_width) + "x" + std::to_string(src_height) + "x" +
           std::to_string(channels) + " box (" + std::to_string(box.x0) + ", " +
           std::to_string(box.y0) + ")-(" + std::to_string(box.x1) + ", " +
           std::to_string(box.y1) + ") to " + std::to_string(width) + "x" +
           std::to_string(height);
  }
};

// A random box within `size` pixels: the whole axis, whole pixels, or fractional edges.
void RandomSpan(std::mt19937& rng, int size, double& lo, double& hi) {
  const int kind = std::uniform_int_distribution<int>(0, 2)(rng);
  if (kind == 0 || size < 2) {
    lo = 0;
    hi = size;
  } else if (kind == 1) {
    const int a = std::uniform_int_distribution<int>(0, size - 1)(rng);
    lo = a;
    hi = std::uniform_int_distribution<int>(a + 1, size)(rng);
  } else {
    lo = std::uniform_real_distribution<double>(0, size * 0.6)(rng);
    hi = std::uniform_real_distribution<double>(lo + 0.01, size)(rng);
  }
}

RandomCase MakeCase(std::mt19937& rng) {
  auto uniform = [&](int a, int b) { return std::uniform_int_distribution<int>(a, b)(rng); };
  RandomCase c;
  c.src_width = uniform(1, 3) == 1 ? uniform(1, 12) : uniform(1, 420);
  c.src_height = uniform(1, 3) == 1 ? uniform(1, 12) : uniform(1, 320);
  c.channels = uniform(1, 4);
  c.src_padding = uniform(0, 1) * uniform(0, 40);
  c.dst_padding = uniform(0, 1) * uniform(0, 40);
  RandomSpan(rng, c.src_width, c.box.x0, c.box.x1);
  RandomSpan(rng, c.src_height, c.box.y0, c.box.y1);
  // Down to a twentieth, or up to three times the box.
  c.width = uniform(1, std::max(1, static_cast<int>(c.box.width() * 3)));
  c.height = uniform(1, std::max(1, static_cast<int>(c.box.height() * 3)));
  if (uniform(0, 3) == 0) c.width = c.height = 224;
  return c;
}

// The resize of `src` (rows src_stride apart) under `kernel`, rows of the output
// dst_stride apart, padding bytes included (filled with 0x5A before).
std::vector<uint8_t> ResizeWith(ResizeKernel kernel, const RandomCase& c,
                                const std::vector<uint8_t>& src) {
  ScopedResizeKernel scoped(kernel);
  const size_t src_stride = static_cast<size_t>(c.src_width) * c.channels + c.src_padding;
  const size_t dst_stride = static_cast<size_t>(c.width) * c.channels + c.dst_padding;
  std::vector<uint8_t> out(dst_stride * c.height, 0x5A);
  ResizeInto(src.data(), c.src_width, c.src_height, src_stride, c.channels, c.box, out.data(),
             c.width, c.height, dst_stride);
  return out;
}

TEST(ResizeKernelsTest, EveryKernelGivesThePortableBytes) {
  const std::vector<ResizeKernel> kernels = AvailableResizeKernels();
  std::mt19937 rng(12);
  for (int n = 0; n < 600; ++n) {
    const RandomCase c = MakeCase(rng);
    SCOPED_TRACE(c.Describe());
    const size_t src_stride = static_cast<size_t>(c.src_width) * c.channels + c.src_padding;
    std::vector<uint8_t> src(src_stride * c.src_height);
    // Noise, or a smooth picture with noise, so that both extremes and rounding show.
    const bool noise = n % 2 == 0;
    for (size_t i = 0; i < src.size(); ++i) {
      src[i] = noise ? static_cast<uint8_t>(rng()) : static_cast<uint8_t>(i * 7 / 5 + rng() % 3);
    }
    const std::vector<uint8_t> portable = ResizeWith(ResizeKernel::kPortable, c, src);
    for (ResizeKernel kernel : kernels) {
      ASSERT_EQ(ResizeWith(kernel, c, src), portable) << ResizeKernelName(kernel);
    }
  }
}

// Extremes: a 20x downscale of a wide row (many tap groups), an upscale of 2 pixels,
// full-range values.
TEST(ResizeKernelsTest, ExtremeScalesAgree) {
  std::mt19937 rng(5);
  std::vector<RandomCase> cases = {
      {1999, 7, 3, 0, 0, PixelBox{0, 0, 1999, 7}, 97, 3},
      {2, 2, 3, 0, 0, PixelBox{0, 0, 2, 2}, 500, 300},
      {640, 480, 4, 3, 5, PixelBox{0.5, 0.5, 639.5, 479.5}, 224, 224},
      {5000, 3, 1, 0, 0, PixelBox{0, 0, 5000, 3}, 7, 1},
  };
  for (const RandomCase& c : cases) {
    SCOPED_TRACE(c.Describe());
    std::vector<uint8_t> src((static_cast<size_t>(c.src_width) * c.channels + c.src_padding) *
                             c.src_height);
    for (uint8_t& v : src) v = rng() % 2 ? 255 : static_cast<uint8_t>(rng());
    const std::vector<uint8_t> portable = ResizeWith(ResizeKernel::kPortable, c, src);
    for (ResizeKernel kernel : AvailableResizeKernels()) {
      EXPECT_EQ(ResizeWith(kernel, c, src), portable) << ResizeKernelName(kernel);
    }
  }
}

#if defined(__x86_64__)
// The AVX-512 kernel's fallback loops against the portable ones, on random rows: the
// row loop of CPUs without VBMI (over the outputs whose loads stay in the row) and the
// column loop for weights without digits (quad_digits unset).
TEST(ResizeKernelsTest, Avx512FallbackLoopsGiveThePortableBytes) {
  if (!ResizeKernelAvailable(ResizeKernel::kAvx512)) GTEST_SKIP() << "no AVX-512 VNNI";
  using namespace resize_internal;
  std::mt19937 rng(9);
  auto uniform = [&](int a, int b) { return std::uniform_int_distribution<int>(a, b)(rng); };
  for (int n = 0; n < 200; ++n) {
    const int in_size = uniform(1, 700), out_size = uniform(1, 300), channels = uniform(1, 4);
    const int rows = uniform(1, 9), columns = uniform(64, 200);
    SCOPED_TRACE(std::to_string(in_size) + " -> " + std::to_string(out_size) + " x" +
                 std::to_string(channels));
    const auto k = CoefficientsFor(in_size, 0, in_size, out_size);
    const size_t stride = static_cast<size_t>(in_size) * channels;
    std::vector<uint8_t> src(stride * std::max(rows, in_size) + columns);
    for (uint8_t& v : src) v = static_cast<uint8_t>(rng());
    // Rows.
    const size_t row_out = static_cast<size_t>(out_size) * channels;
    std::vector<uint8_t> portable(row_out * rows), avx512(row_out * rows);
    const int end = RowSimdEnd(k->View(), in_size, channels, out_size);
    RowPassPortable({src.data(), stride, 0, rows, channels, k->View(), portable.data(),
                     row_out, 0, end});
    RowPassAvx512({src.data(), stride, 0, rows, channels, k->View(), avx512.data(), row_out,
                   0, end});
    ASSERT_EQ(avx512, portable) << "rows";
    // Columns: in_size rows of `columns` bytes.
    CoefficientView view = k->View();
    view.quad_digits = nullptr;
    std::vector<uint8_t> column_portable(out_size * columns), column_avx512(out_size * columns);
    ColumnPassPortable({src.data(), stride, 0, view, column_portable.data(),
                        static_cast<size_t>(columns), out_size, static_cast<size_t>(columns)});
    ColumnPassAvx512({src.data(), stride, 0, view, column_avx512.data(),
                      static_cast<size_t>(columns), out_size, static_cast<size_t>(columns)});
    ASSERT_EQ(column_avx512, column_portable) << "columns";
  }
}
#endif

// A view has the layouts it asks for, built on first request, and null pointers for the
// others; each layout is the same whichever view asked for it first.
TEST(ResizeKernelsTest, ViewsBuildTheLayoutsTheyAskFor) {
  using namespace resize_internal;
  const auto bare = CoefficientsFor(500, 0, 500, 341);
  const CoefficientView none = bare->View(0);
  EXPECT_EQ(none.packed, nullptr);
  EXPECT_EQ(none.pair_words, nullptr);
  EXPECT_EQ(none.quad_digits, nullptr);
  EXPECT_EQ(none.weights, bare->weights.data());
  const CoefficientView rows = bare->View(kRowGroups);
  EXPECT_NE(rows.packed, nullptr);
  EXPECT_EQ(rows.pair_words, nullptr);
  const CoefficientView digits = bare->View(kColumnDigits);
  EXPECT_NE(digits.quad_digits, nullptr);
  EXPECT_EQ(digits.pair_words, nullptr);  // 22-bit weights all have digits
  // The same layouts as a fresh set's view of all of them (four other sizes push the
  // first set out of the per-thread cache).
  for (int out = 100; out < 104; ++out) CoefficientsFor(500, 0, 500, out);
  const auto fresh = CoefficientsFor(500, 0, 500, 341);
  ASSERT_NE(fresh.get(), bare.get());
  const CoefficientView all = fresh->View();
  const size_t outputs = bare->first.size();
  EXPECT_TRUE(std::equal(rows.packed, rows.packed + outputs * bare->groups * kGroupInt16,
                         all.packed));
  EXPECT_TRUE(std::equal(digits.quad_digits, digits.quad_digits + outputs * bare->quads * 3,
                         all.quad_digits));
  EXPECT_NE(all.pair_words, nullptr);
  EXPECT_EQ(bare->View(kAllLayouts).packed, rows.packed);  // built once
}

TEST(ResizeKernelsTest, AutoPicksTheWidestAvailable) {
  ScopedResizeKernel scoped(ResizeKernel::kAuto);
  EXPECT_EQ(ActiveResizeKernel(), AvailableResizeKernels().back());
  EXPECT_TRUE(ResizeKernelAvailable(ResizeKernel::kPortable));
  SetResizeKernel(ResizeKernel::kPortable);
  EXPECT_EQ(ActiveResizeKernel(), ResizeKernel::kPortable);
  for (ResizeKernel kernel : {ResizeKernel::kAuto, ResizeKernel::kPortable,
                              ResizeKernel::kSse41, ResizeKernel::kAvx2, ResizeKernel::kAvx512}) {
    EXPECT_EQ(ResizeKernelNamed(ResizeKernelName(kernel)), kernel);  // IMGPIPE_RESIZE_KERNEL
  }
  EXPECT_STREQ(ResizeKernelName(ResizeKernel::kSse41), "sse4.1");
  EXPECT_THROW(ResizeKernelNamed("sse41"), Error);
  for (ResizeKernel kernel : {ResizeKernel::kSse41, ResizeKernel::kAvx2, ResizeKernel::kAvx512}) {
    if (!ResizeKernelAvailable(kernel)) {
      EXPECT_THROW(SetResizeKernel(kernel), Error);
    }
  }
}

}  // namespace
}  // namespace imgpipe
