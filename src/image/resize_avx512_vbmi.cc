// The horizontal resize loop for AVX-512 VBMI with VNNI (PermuteBlock in
// resize_kernels.h): per block and row, one vpermb and three vpdpbusd per quad of taps,
// then one store of up to 16 bytes. This file is compiled with -mavx512vbmi
// -mavx512vnni and runs only where the CPU has both (resize.cc checks).
#include <immintrin.h>

#include "image/resize_kernels.h"

namespace imgpipe::resize_internal {
namespace {

constexpr int kRows = 4;

// Returns the 64 bytes at p, of which only the first `avail` (if under 64) are read;
// the rest are 0.
inline __m512i LoadWindow(const uint8_t* p, int64_t avail) {
  if (avail >= 64) return _mm512_loadu_si512(p);
  const __mmask64 mask = avail <= 0 ? 0 : ~0ULL >> (64 - avail);
  return _mm512_maskz_loadu_epi8(mask, p);
}

// Sets x[r] to the slots of one quad (vpermb control `control`) in kRows rows: in[r] +
// start is the window's first byte; kWhole: it lies within the row, else only its first
// row_bytes - start bytes are read.
template <bool kWhole>
[[gnu::always_inline]] inline void Permute(const uint8_t* const* in, int64_t start,
                                           int64_t row_bytes, __m512i control, __m512i* x) {
  for (int r = 0; r < kRows; ++r) {
    const __m512i window = kWhole ? _mm512_loadu_si512(in[r] + start)
                                  : LoadWindow(in[r] + start, row_bytes - start);
    x[r] = _mm512_permutexvar_epi8(control, window);
  }
}

// Sets acc[r] to Pillow's sum plus its rounding half for the kQuads quads (vectors from
// v) of a block in kRows rows (Permute's in, start and row_bytes; quad q's window 4q
// pixels of C bytes on): one accumulator per row, shifted a digit at a time.
template <int C, int kQuads, bool kWhole>
[[gnu::always_inline]] inline void SumFewQuads(const uint8_t* const* in, int64_t start,
                                               int64_t row_bytes, const __m512i* v,
                                               __m512i* acc) {
  __m512i x[kQuads][kRows];
  for (int q = 0; q < kQuads; ++q) {
    Permute<kWhole>(in, start + 4 * C * q, row_bytes, _mm512_load_si512(v + 4 * q), x[q]);
  }
  for (int r = 0; r < kRows; ++r) acc[r] = _mm512_set1_epi32(kHalf >> 16);  // 2^16 times
  for (int level = 0; level < 3; ++level) {
    for (int q = 0; q < kQuads; ++q) {
      const __m512i digits = _mm512_load_si512(v + 4 * q + 1 + level);
      for (int r = 0; r < kRows; ++r) acc[r] = _mm512_dpbusd_epi32(acc[r], x[q][r], digits);
    }
    if (level < 2) {
      for (int r = 0; r < kRows; ++r) acc[r] = _mm512_slli_epi32(acc[r], 8);
    }
  }
}

// SumFewQuads for any number of quads: an accumulator per digit and row.
template <int C, bool kWhole>
[[gnu::always_inline]] inline void SumQuads(const uint8_t* const* in, int64_t start,
                                            int64_t row_bytes, const __m512i* v, int quads,
                                            __m512i* acc) {
  __m512i hi[kRows], mid[kRows], lo[kRows];
  for (int r = 0; r < kRows; ++r) {
    hi[r] = _mm512_set1_epi32(kHalf >> 16);
    mid[r] = lo[r] = _mm512_setzero_si512();
  }
  for (int q = 0; q < quads; ++q, v += 4, start += 4 * C) {
    __m512i x[kRows];
    Permute<kWhole>(in, start, row_bytes, _mm512_load_si512(v), x);
    const __m512i d2 = _mm512_load_si512(v + 1), d1 = _mm512_load_si512(v + 2),
                  d0 = _mm512_load_si512(v + 3);
    for (int r = 0; r < kRows; ++r) {
      hi[r] = _mm512_dpbusd_epi32(hi[r], x[r], d2);
      mid[r] = _mm512_dpbusd_epi32(mid[r], x[r], d1);
      lo[r] = _mm512_dpbusd_epi32(lo[r], x[r], d0);
    }
  }
  for (int r = 0; r < kRows; ++r) {
    const __m512i sum = _mm512_add_epi32(_mm512_slli_epi32(hi[r], 8), mid[r]);
    acc[r] = _mm512_add_epi32(_mm512_slli_epi32(sum, 8), lo[r]);
  }
}

// The pixels of block b in kRows rows (in[r], input byte 0 = pixel column_offset; out[r],
// output byte 0 = output 0) of C-byte pixels, with kQuads quads (0: b.quads, any).
// kWhole: every window lies within the rows; else the rows are row_bytes long and what
// passes them reads as 0.
template <int C, int kQuads, bool kWhole>
[[gnu::always_inline]] inline void Block(const uint8_t* const* in, uint8_t* const* out,
                                         const PermuteBlock& b, const uint8_t* vectors,
                                         int column_offset, int64_t row_bytes) {
  const __m512i* v = reinterpret_cast<const __m512i*>(
      vectors + static_cast<size_t>(b.vector) * kPermuteVectorBytes);
  const int64_t start = static_cast<int64_t>(b.window - column_offset) * C;
  __m512i acc[kRows];
  if constexpr (kQuads > 0) {
    SumFewQuads<C, kQuads, kWhole>(in, start, row_bytes, v, acc);
  } else {
    SumQuads<C, kWhole>(in, start, row_bytes, v, b.quads, acc);
  }
  const __mmask16 mask = static_cast<__mmask16>((1u << (b.pixels * C)) - 1);
  for (int r = 0; r < kRows; ++r) {
    const __m512i sum =
        _mm512_max_epi32(_mm512_srai_epi32(acc[r], kPrecisionBits), _mm512_setzero_si512());
    _mm_mask_storeu_epi8(out[r] + static_cast<size_t>(b.out) * C, mask,
                         _mm512_cvtusepi32_epi8(sum));  // Clip8: >= 0, saturated to 255
  }
}

// Block<C, *, kWhole>, with the quad count known at compile time where it is 1 to 4.
template <int C, bool kWhole>
inline void AnyBlock(const uint8_t* const* in, uint8_t* const* out, const PermuteBlock& b,
                     const uint8_t* vectors, int column_offset, int64_t row_bytes) {
  switch (b.quads) {
    case 1: return Block<C, 1, kWhole>(in, out, b, vectors, column_offset, row_bytes);
    case 2: return Block<C, 2, kWhole>(in, out, b, vectors, column_offset, row_bytes);
    case 3: return Block<C, 3, kWhole>(in, out, b, vectors, column_offset, row_bytes);
    case 4: return Block<C, 4, kWhole>(in, out, b, vectors, column_offset, row_bytes);
    default: return Block<C, 0, kWhole>(in, out, b, vectors, column_offset, row_bytes);
  }
}

// Returns the number of blocks from the first whose windows all lie within rows of
// row_bytes bytes (the windows only move right).
template <int C>
int WholeBlocks(const PermuteView& blocks, int column_offset, int64_t row_bytes) {
  int n = 0;
  for (; n < blocks.blocks; ++n) {
    const PermuteBlock& b = blocks.block[n];
    const int64_t last = static_cast<int64_t>(b.window + 4 * (b.quads - 1) - column_offset) * C;
    if (last + 64 > row_bytes) break;
  }
  return n;
}

template <int C>
void Rows(const RowPass& pass, const PermuteView& blocks, int in_end) {
  const int64_t row_bytes = static_cast<int64_t>(in_end - pass.column_offset) * C;
  const int whole = WholeBlocks<C>(blocks, pass.column_offset, row_bytes);
  for (int r0 = 0; r0 < pass.rows; r0 += kRows) {
    // Rows past the last are the last again (written twice, the same bytes).
    const uint8_t* in[kRows];
    uint8_t* out[kRows];
    for (int r = 0; r < kRows; ++r) {
      const int row = r0 + r < pass.rows ? r0 + r : pass.rows - 1;
      in[r] = pass.src + row * pass.src_stride;
      out[r] = pass.dst + row * pass.dst_stride;
    }
    // The next rows' bytes at each block's window, fetched while this block computes (a
    // decoded image may have left the cache).
    const size_t ahead = r0 + kRows < pass.rows ? kRows * pass.src_stride : 0;
    int i = 0;
    for (; i < whole; ++i) {
      const PermuteBlock& b = blocks.block[i];
      const size_t at = ahead + static_cast<size_t>(b.window - pass.column_offset) * C;
      for (int r = 0; r < kRows; ++r) {
        // As an integer: past the last row the address is out of the image.
        const uintptr_t address = reinterpret_cast<uintptr_t>(in[r]) + at;
        _mm_prefetch(reinterpret_cast<const char*>(address), _MM_HINT_T0);
      }
      AnyBlock<C, true>(in, out, b, blocks.vectors, pass.column_offset, row_bytes);
    }
    for (; i < blocks.blocks; ++i) {
      AnyBlock<C, false>(in, out, blocks.block[i], blocks.vectors, pass.column_offset, row_bytes);
    }
  }
}

}  // namespace

void RowPassAvx512Vbmi(const RowPass& pass, const PermuteView& blocks, int in_end) {
  switch (pass.channels) {
    case 1: return Rows<1>(pass, blocks, in_end);
    case 2: return Rows<2>(pass, blocks, in_end);
    case 3: return Rows<3>(pass, blocks, in_end);
    case 4: return Rows<4>(pass, blocks, in_end);
  }
}

}  // namespace imgpipe::resize_internal
