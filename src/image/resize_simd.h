// The SIMD resize loops, written once over a vector type V and included only by
// resize_sse41.cc (V = 128-bit SSE4.1) and resize_avx2.cc (V = 256-bit AVX2), each
// compiled for its own ISA. Everything here is in an anonymous namespace, so that each
// of those files keeps its own copy. Throws nothing.
//
// V provides: Vec; kBytes; kRows, the image rows one vector holds in the horizontal
// pass (one per 128-bit lane); IMGPIPE_RESIZE_LANE_OPS (Zero, Load, Store, Broadcast32,
// Add32, Madd (pmaddwd), MaddAdd(acc, a, b) = Add32(acc, Madd(a, b)) (one vpdpwssd
// with AVX-512 VNNI, which declares its own after IMGPIPE_RESIZE_LANE_OPS_BUT_MADD_ADD), ShiftHi (<< kSplitBits), ShiftRound (>> kPrecisionBits,
// arithmetic), UnpackLo8, UnpackHi8, Packs32, Packus16, Shuffle8 (pshufb), each lane by
// lane as the SSE instruction of that name); LoadLanes (16 bytes into every lane); LoadRows(rows,
// offset) (16 bytes at rows[j] + offset into lane j); SplitRows(v, out) (lane j to
// out[j]).
#pragma once

#include <immintrin.h>

#include <cstring>

#include "image/resize_kernels.h"

namespace imgpipe::resize_internal {
namespace {

// The lane-by-lane operations of V (above), each the intrinsic of that name with prefix
// P (_mm, _mm256 or _mm512) and vector suffix S (si128, si256 or si512); Vec must be
// declared first.
#define IMGPIPE_RESIZE_LANE_OPS(P, S)                                                   \
  IMGPIPE_RESIZE_LANE_OPS_BUT_MADD_ADD(P, S)                                            \
  static Vec MaddAdd(Vec acc, Vec a, Vec b) { return Add32(acc, Madd(a, b)); }
#define IMGPIPE_RESIZE_LANE_OPS_BUT_MADD_ADD(P, S)                                      \
  static Vec Zero() { return P##_setzero_##S(); }                                       \
  static Vec Load(const void* p) { return P##_loadu_##S(static_cast<const Vec*>(p)); } \
  static void Store(uint8_t* p, Vec v) { P##_storeu_##S(reinterpret_cast<Vec*>(p), v); } \
  static Vec Broadcast32(const int32_t* p) { return P##_set1_epi32(*p); }               \
  static Vec Add32(Vec a, Vec b) { return P##_add_epi32(a, b); }                        \
  static Vec Madd(Vec a, Vec b) { return P##_madd_epi16(a, b); }                        \
  static Vec ShiftHi(Vec v) { return P##_slli_epi32(v, kSplitBits); }                   \
  static Vec ShiftRound(Vec v) { return P##_srai_epi32(v, kPrecisionBits); }            \
  static Vec UnpackLo8(Vec a, Vec b) { return P##_unpacklo_epi8(a, b); }                \
  static Vec UnpackHi8(Vec a, Vec b) { return P##_unpackhi_epi8(a, b); }                \
  static Vec Packs32(Vec a, Vec b) { return P##_packs_epi32(a, b); }                    \
  static Vec Packus16(Vec a, Vec b) { return P##_packus_epi16(a, b); }                  \
  static Vec Shuffle8(Vec a, Vec control) { return P##_shuffle_epi8(a, control); }

// Fills the 32-byte pshufb control that turns 16 bytes holding 4 pixels of `channels`
// bytes into int16 pairs: half h (taps 2h, 2h + 1), int16 2c + t: channel c of tap
// 2h + t, zero for c >= channels.
inline void PairShuffle(int channels, uint8_t* control) {
  for (int half = 0; half < 2; ++half) {
    for (int j = 0; j < 8; ++j) {
      const int c = j / 2, tap = 2 * half + j % 2;
      control[16 * half + 2 * j] = c < channels ? static_cast<uint8_t>(tap * channels + c) : 0x80;
      control[16 * half + 2 * j + 1] = 0x80;
    }
  }
}

// Returns the pshufb control that keeps the first C bytes of each of 4 32-bit pixels.
template <int C>
inline __m128i CompactShuffle() {
  alignas(16) uint8_t control[16];
  for (int i = 0; i < 16; ++i) {
    control[i] = i < 4 * C ? static_cast<uint8_t>(i / C * 4 + i % C) : 0x80;
  }
  return _mm_load_si128(reinterpret_cast<const __m128i*>(control));
}

// Stores the first n (1 to 4) pixels of C bytes from `bytes`.
template <int C>
inline void StorePixels(uint8_t* out, __m128i bytes, int n) {
  if (n == 4 && C == 4) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), bytes);
  } else if (n == 4 && C >= 2) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out), bytes);
    if (C == 3) {
      const int32_t last = _mm_extract_epi32(bytes, 2);
      std::memcpy(out + 8, &last, 4);
    }
  } else {
    alignas(16) uint8_t all[16];
    _mm_store_si128(reinterpret_cast<__m128i*>(all), bytes);
    std::memcpy(out, all, static_cast<size_t>(n) * C);
  }
}

// The horizontal coefficients, copied out of the pass so that stores through uint8_t
// pointers do not force reloads.
struct RowTables {
  int column_offset;
  const int32_t* first;
  const int32_t* count;
  const int16_t* packed;
  int groups;
};

// The pshufb controls of PairShuffle, in every lane.
template <class V>
struct PairShuffles {
  typename V::Vec taps01, taps23;
};

// Adds to hi and lo the four taps of a group (16 bytes at rows[j] + offset; weights w in
// the kGroupInt16 layout), channel c in 32-bit element c of lane j.
template <class V>
inline void MaddGroup(const uint8_t* const* rows, size_t offset, const int16_t* w,
                      const PairShuffles<V>& shuffle, typename V::Vec& hi,
                      typename V::Vec& lo) {
  const typename V::Vec pixels = V::LoadRows(rows, offset);
  const typename V::Vec a = V::Shuffle8(pixels, shuffle.taps01);
  const typename V::Vec b = V::Shuffle8(pixels, shuffle.taps23);
  hi = V::MaddAdd(V::MaddAdd(hi, a, V::LoadLanes(w)), b, V::LoadLanes(w + 8));
  lo = V::MaddAdd(V::MaddAdd(lo, a, V::LoadLanes(w + 16)), b, V::LoadLanes(w + 24));
}

// The same for taps 0 and 1 of a group only (the weights of taps 2 and 3 are 0).
template <class V>
inline void MaddHalfGroup(const uint8_t* const* rows, size_t offset, const int16_t* w,
                          const PairShuffles<V>& shuffle, typename V::Vec& hi,
                          typename V::Vec& lo) {
  const typename V::Vec a = V::Shuffle8(V::LoadRows(rows, offset), shuffle.taps01);
  hi = V::MaddAdd(hi, a, V::LoadLanes(w));
  lo = V::MaddAdd(lo, a, V::LoadLanes(w + 16));
}

// Sets out[r] to output pixel i of row in[r] (R rows, a multiple of V::kRows, same
// coefficients) as 32-bit channels, rounded and shifted (not yet clipped).
template <class V, int C, int R>
inline void Pixel(const uint8_t* const* in, const RowTables& t, int i,
                  const PairShuffles<V>& shuffle, __m128i* out) {
  constexpr int kVectors = R / V::kRows;
  const size_t offset = static_cast<size_t>(t.first[i] - t.column_offset) * C;
  const int16_t* w = t.packed + static_cast<size_t>(i) * t.groups * kGroupInt16;
  // Whole groups, then 1 or 2 taps left as half a group.
  const int count = t.count[i];
  const int groups = (count + 1) / kGroupTaps;
  typename V::Vec hi[kVectors], lo[kVectors];
  for (int v = 0; v < kVectors; ++v) hi[v] = lo[v] = V::Zero();
  for (int g = 0; g < groups; ++g) {
    for (int v = 0; v < kVectors; ++v) {
      MaddGroup<V>(in + v * V::kRows, offset + g * kGroupTaps * C, w + g * kGroupInt16,
                   shuffle, hi[v], lo[v]);
    }
  }
  if (groups * kGroupTaps < count) {
    for (int v = 0; v < kVectors; ++v) {
      MaddHalfGroup<V>(in + v * V::kRows, offset + groups * kGroupTaps * C,
                       w + groups * kGroupInt16, shuffle, hi[v], lo[v]);
    }
  }
  const typename V::Vec half = V::Broadcast32(&kHalf);
  for (int v = 0; v < kVectors; ++v) {
    V::SplitRows(V::ShiftRound(V::Add32(V::Add32(V::ShiftHi(hi[v]), lo[v]), half)),
                 out + v * V::kRows);
  }
}

// Returns 4 pixels of 32-bit channels as C bytes each, clipped to 0..255 (saturation to
// int16 then to uint8 is Clip8).
template <int C>
inline __m128i PackPixels(__m128i a, __m128i b, __m128i c, __m128i d, __m128i compact) {
  return _mm_shuffle_epi8(_mm_packus_epi16(_mm_packs_epi32(a, b), _mm_packs_epi32(c, d)),
                          compact);
}

// The horizontal pass over R rows from row r0, four output pixels per store. Rows past
// the last are the last again (written twice, the same bytes).
template <class V, int C, int R>
void RowBlock(const RowPass& pass, int r0, const RowTables& t,
              const PairShuffles<V>& shuffle, __m128i compact) {
  const uint8_t* in[R];
  uint8_t* out[R];
  for (int r = 0; r < R; ++r) {
    const int row = r0 + r < pass.rows ? r0 + r : pass.rows - 1;
    in[r] = pass.src + row * pass.src_stride;
    out[r] = pass.dst + row * pass.dst_stride;
  }
  const int end = pass.end;
  int i = pass.begin;
  // Whole blocks of 4 pixels, packed two by two as they come (fewer live registers).
  for (; i + 4 <= end; i += 4) {
    __m128i a[R], b[R], first_two[R];
    Pixel<V, C, R>(in, t, i, shuffle, a);
    Pixel<V, C, R>(in, t, i + 1, shuffle, b);
    for (int r = 0; r < R; ++r) first_two[r] = _mm_packs_epi32(a[r], b[r]);
    Pixel<V, C, R>(in, t, i + 2, shuffle, a);
    Pixel<V, C, R>(in, t, i + 3, shuffle, b);
    for (int r = 0; r < R; ++r) {
      const __m128i bytes = _mm_packus_epi16(first_two[r], _mm_packs_epi32(a[r], b[r]));
      StorePixels<C>(out[r] + static_cast<size_t>(i) * C, _mm_shuffle_epi8(bytes, compact), 4);
    }
  }
  // The last 1 to 3.
  if (i < end) {
    const int n = end - i < 4 ? end - i : 4;
    __m128i v[4][R];
    for (int j = 0; j < 4; ++j) {
      if (j < n) {
        Pixel<V, C, R>(in, t, i + j, shuffle, v[j]);
      } else {
        for (int r = 0; r < R; ++r) v[j][r] = _mm_setzero_si128();
      }
    }
    for (int r = 0; r < R; ++r) {
      StorePixels<C>(out[r] + static_cast<size_t>(i) * C,
                     PackPixels<C>(v[0][r], v[1][r], v[2][r], v[3][r], compact), n);
    }
  }
}

// The horizontal pass for C channels, four rows at a time.
template <class V, int C>
void Rows(const RowPass& pass) {
  alignas(32) uint8_t control[32];
  PairShuffle(C, control);
  const PairShuffles<V> shuffle{V::LoadLanes(control), V::LoadLanes(control + 16)};
  const __m128i compact = CompactShuffle<C>();
  const RowTables t{pass.column_offset, pass.k.first, pass.k.count, pass.k.packed,
                    pass.k.groups};
  for (int r = 0; r < pass.rows; r += 4) RowBlock<V, C, 4>(pass, r, t, shuffle, compact);
}

// The horizontal pass for any channel count.
template <class V>
void RowPassWith(const RowPass& pass) {
  switch (pass.channels) {
    case 1: return Rows<V, 1>(pass);
    case 2: return Rows<V, 2>(pass);
    case 3: return Rows<V, 3>(pass);
    case 4: return Rows<V, 4>(pass);
  }
}

// One output chunk of V::kBytes bytes of the vertical pass: n taps from `in` (rows
// `stride` apart), weights as pair words (resize_kernels.h). Unpacking and packing go
// lane by lane, so the bytes come back in order.
template <class V>
inline void ColumnChunk(const uint8_t* in, size_t stride, const int32_t* pair_words, int n,
                        uint8_t* out) {
  using Vec = typename V::Vec;
  const Vec zero = V::Zero();
  Vec hi[4] = {zero, zero, zero, zero}, lo[4] = {zero, zero, zero, zero};
  for (int t = 0; t < n; t += 2) {
    const Vec a = V::Load(in + t * stride);
    const Vec b = t + 1 < n ? V::Load(in + (t + 1) * stride) : a;  // weight 0 if alone
    const Vec w_hi = V::Broadcast32(pair_words + t);
    const Vec w_lo = V::Broadcast32(pair_words + t + 1);
    const Vec low = V::UnpackLo8(a, b), high = V::UnpackHi8(a, b);
    const Vec q[4] = {V::UnpackLo8(low, zero), V::UnpackHi8(low, zero),
                      V::UnpackLo8(high, zero), V::UnpackHi8(high, zero)};
    for (int j = 0; j < 4; ++j) {
      hi[j] = V::MaddAdd(hi[j], q[j], w_hi);
      lo[j] = V::MaddAdd(lo[j], q[j], w_lo);
    }
  }
  const Vec half = V::Broadcast32(&kHalf);
  Vec v[4];
  for (int j = 0; j < 4; ++j) {
    v[j] = V::ShiftRound(V::Add32(V::Add32(V::ShiftHi(hi[j]), lo[j]), half));
  }
  V::Store(out, V::Packus16(V::Packs32(v[0], v[1]), V::Packs32(v[2], v[3])));
}

// The vertical pass; the last chunk of a row overlaps the one before it.
template <class V>
void ColumnPassWith(const ColumnPass& pass) {
  const CoefficientView& k = pass.k;
  const size_t chunk = V::kBytes;
  for (int i = 0; i < pass.out_height; ++i) {
    const uint8_t* in =
        pass.src + static_cast<size_t>(k.first[i] - pass.row_offset) * pass.src_stride;
    const int32_t* pair_words = k.pair_words + static_cast<size_t>(i) * k.pairs * 2;
    uint8_t* out = pass.dst + i * pass.dst_stride;
    size_t x = 0;
    for (; x + chunk <= pass.row_bytes; x += chunk) {
      ColumnChunk<V>(in + x, pass.src_stride, pair_words, k.count[i], out + x);
    }
    if (x < pass.row_bytes) {
      x = pass.row_bytes - chunk;
      ColumnChunk<V>(in + x, pass.src_stride, pair_words, k.count[i], out + x);
    }
  }
}

}  // namespace
}  // namespace imgpipe::resize_internal
