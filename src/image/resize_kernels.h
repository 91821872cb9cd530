// The loops of the resize (resize.cc), one set per instruction set: portable C++,
// SSE4.1, AVX2 and AVX-512 VNNI (resize_sse41.cc, resize_avx2.cc, resize_avx512.cc,
// each compiled for its own ISA).
// All give the same bytes: Pillow's 22-bit fixed point, exactly. Plain structs of raw
// pointers only, so that the ISA-specific files need no standard-library templates
// (an inline function compiled there with -mavx2 could be the copy the linker keeps).
// Throws nothing.
#pragma once

#include <cstddef>
#include <cstdint>

namespace imgpipe::resize_internal {

// Pillow's fixed point for 8-bit images: weights scaled by 2^22, so that 255 * a row
// of weights, plus rounding, fits in an int32.
constexpr int kPrecisionBits = 22;
constexpr int32_t kHalf = 1 << (kPrecisionBits - 1);

// The SIMD kernels multiply 16-bit pixels by 16-bit halves of each weight
// (pmaddwd): w = hi * 2^kSplitBits + lo, 0 <= hi <= 128, 0 <= lo < 2^15; the int32 sums
// of both halves recombine to Pillow's sum exactly (modulo 2^32, where it fits).
constexpr int kSplitBits = 15;
constexpr int32_t kLoMask = (1 << kSplitBits) - 1;

// Horizontal SIMD layout: taps in groups of 4 (one 16-byte load of RGB or RGBA pixels).
// A group is kGroupInt16 int16: hi then lo, each two 8-int16 halves for taps (0, 1)
// and (2, 3), each half the pair (w[2k], w[2k + 1]) repeated 4 times.
constexpr int kGroupTaps = 4;
constexpr int kGroupInt16 = 32;

// One axis's coefficients (resize_coefficients.h), borrowed.
struct CoefficientView {
  int taps, groups, pairs;
  const int32_t* first;
  const int32_t* count;
  const int32_t* weights;     // taps per output
  const int16_t* packed;      // groups * kGroupInt16 per output
  const int32_t* pair_words;  // pairs * 2 per output: (hi(w[2k]) | hi(w[2k+1]) << 16),
                              // then the same of the lo halves
  int quads;                  // ceil(taps / kGroupTaps)
  const int32_t* quad_digits;  // quads * 3 per output: digits 2, 1 and 0 (WeightDigits) of
                               // taps 4q to 4q + 3 (byte j: tap 4q + j); nullptr if a
                               // weight has none
};

// Horizontal layout of the AVX-512 VBMI kernel (resize_permute_table.h): output pixels
// in blocks whose taps all lie in one 64-byte window of the row. Each 32-bit slot of a
// vector is one (pixel, channel) of the block; quad q of a block covers taps 4q to
// 4q + 3 of every pixel: one vpermb of the window from input pixel `window` + 4q puts
// the four tap bytes in each slot, and three vpdpbusd multiply them by the weights'
// signed base-256 digits (w = d2 * 2^16 + d1 * 2^8 + d0), exactly.
struct PermuteBlock {
  int32_t out;     // first output pixel
  int32_t pixels;  // pixels * channels <= 16
  int32_t quads;   // >= 1
  int32_t window;  // input pixel of quad 0's window, counted like first[]
  int32_t vector;  // quad q's vectors are vector + 4q to vector + 4q + 3 of `vectors`
};
// Each quad's four 64-byte vectors: the vpermb control, then digits 2, 1 and 0 (int8).
constexpr int kPermuteVectorBytes = 64;

struct PermuteView {
  int blocks;
  const PermuteBlock* block;
  const uint8_t* vectors;  // 64-byte aligned
};

// The horizontal pass: for `rows` rows, output pixels [begin, end) of each row; src
// holds each row from pixel column_offset (output i reads k.first[i] - column_offset on).
struct RowPass {
  const uint8_t* src;
  size_t src_stride;
  int column_offset;
  int rows, channels;  // channels 1 to 4
  CoefficientView k;
  uint8_t* dst;
  size_t dst_stride;
  int begin, end;
};

// The vertical pass: output row i reads source rows k.first[i] - row_offset onwards
// (src holds rows from row_offset), row_bytes bytes of each.
struct ColumnPass {
  const uint8_t* src;
  size_t src_stride;
  int row_offset;
  CoefficientView k;
  uint8_t* dst;
  size_t dst_stride;
  int out_height;
  size_t row_bytes;
};

// The portable loops; any pass.
void RowPassPortable(const RowPass& pass);
void ColumnPassPortable(const ColumnPass& pass);

// SSE4.1 (the CPU must have it). Rows: every tap group's 16-byte load must lie within
// the source row (RowSimdEnd), which may be a padded copy. Columns: row_bytes >= 16.
void RowPassSse41(const RowPass& pass);
void ColumnPassSse41(const ColumnPass& pass);

// AVX2 (the CPU must have it); as SSE4.1, columns need row_bytes >= 32.
void RowPassAvx2(const RowPass& pass);
void ColumnPassAvx2(const ColumnPass& pass);

// AVX-512 BW with VNNI (the CPU must have both); as SSE4.1, columns need row_bytes >= 64
// (and use k.quad_digits where set).
void RowPassAvx512(const RowPass& pass);
void ColumnPassAvx512(const ColumnPass& pass);

// AVX-512 VBMI with VNNI (the CPU must have both): the horizontal pass over the blocks of
// `blocks`, made for pass.k and pass.channels (pass.begin and pass.end are not read);
// the rows end at input pixel in_end (counted like k.first), and no load passes it.
void RowPassAvx512Vbmi(const RowPass& pass, const PermuteView& blocks, int in_end);

// Returns the end of the first run of output pixels from 0 whose 16-byte group loads
// all stay within a row of in_width pixels of `channels` bytes.
int RowSimdEnd(const CoefficientView& k, int in_width, int channels, int out_width);

}  // namespace imgpipe::resize_internal
