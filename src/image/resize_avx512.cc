// The resize loops for AVX-512 with VNNI (resize_simd.h over 512-bit vectors: four rows
// per horizontal step, 64 bytes per vertical chunk, and each multiply-add one vpdpwssd;
// the vertical pass by the weights' digits and vpdpbusd where they have them);
// this file is compiled with -mavx512bw -mavx512vnni and runs only where the CPU has
// both (resize.cc checks).
#include "image/resize_simd.h"

namespace imgpipe::resize_internal {
namespace {

struct Avx512 {
  using Vec = __m512i;
  static constexpr size_t kBytes = 64;
  static constexpr int kRows = 4;

  IMGPIPE_RESIZE_LANE_OPS_BUT_MADD_ADD(_mm512, si512)
  static Vec MaddAdd(Vec acc, Vec a, Vec b) { return _mm512_dpwssd_epi32(acc, a, b); }
  static __m128i Load128(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }
  static Vec LoadLanes(const void* p) { return _mm512_broadcast_i32x4(Load128(p)); }
  static Vec LoadRows(const uint8_t* const* rows, size_t offset) {
    const __m256i low = _mm256_inserti128_si256(
        _mm256_castsi128_si256(Load128(rows[0] + offset)), Load128(rows[1] + offset), 1);
    const __m256i high = _mm256_inserti128_si256(
        _mm256_castsi128_si256(Load128(rows[2] + offset)), Load128(rows[3] + offset), 1);
    return _mm512_inserti64x4(_mm512_castsi256_si512(low), high, 1);
  }
  static void SplitRows(Vec v, __m128i* out) {
    out[0] = _mm512_castsi512_si128(v);
    out[1] = _mm512_extracti32x4_epi32(v, 1);
    out[2] = _mm512_extracti32x4_epi32(v, 2);
    out[3] = _mm512_extracti32x4_epi32(v, 3);
  }
};

// Sets q[j] to the bytes of 4 rows from `in` (rows `stride` apart; past n rows, row 0
// again, which has weight 0) as 32-bit words (row 0 in the low byte): q[j] holds bytes
// 4j to 4j + 3 of each 128-bit lane.
inline void InterleaveRows(const uint8_t* in, size_t stride, int n, __m512i* q) {
  __m512i row[4];
  for (int t = 0; t < 4; ++t) row[t] = _mm512_loadu_si512(in + (t < n ? t * stride : 0));
  const __m512i ab_lo = _mm512_unpacklo_epi8(row[0], row[1]);
  const __m512i ab_hi = _mm512_unpackhi_epi8(row[0], row[1]);
  const __m512i cd_lo = _mm512_unpacklo_epi8(row[2], row[3]);
  const __m512i cd_hi = _mm512_unpackhi_epi8(row[2], row[3]);
  q[0] = _mm512_unpacklo_epi16(ab_lo, cd_lo);
  q[1] = _mm512_unpackhi_epi16(ab_lo, cd_lo);
  q[2] = _mm512_unpacklo_epi16(ab_hi, cd_hi);
  q[3] = _mm512_unpackhi_epi16(ab_hi, cd_hi);
}

// One 64-byte output chunk of the vertical pass: n taps from `in` (rows `stride` apart),
// weights as quad digits (resize_kernels.h); each quad of taps is one vpdpbusd per digit
// and 16 bytes. kOneQuad (n <= 4): one accumulator per vector, shifted a digit at a time.
template <bool kOneQuad>
inline void DigitChunk(const uint8_t* in, size_t stride, const int32_t* digits, int n,
                       uint8_t* out) {
  __m512i v[4];
  if (kOneQuad) {
    __m512i q[4];
    InterleaveRows(in, stride, n, q);
    const __m512i d2 = _mm512_set1_epi32(digits[0]), d1 = _mm512_set1_epi32(digits[1]),
                  d0 = _mm512_set1_epi32(digits[2]);
    for (int j = 0; j < 4; ++j) {
      __m512i acc = _mm512_dpbusd_epi32(_mm512_set1_epi32(kHalf >> 16), q[j], d2);
      acc = _mm512_dpbusd_epi32(_mm512_slli_epi32(acc, 8), q[j], d1);
      acc = _mm512_dpbusd_epi32(_mm512_slli_epi32(acc, 8), q[j], d0);
      v[j] = _mm512_srai_epi32(acc, kPrecisionBits);
    }
  } else {
    __m512i hi[4], mid[4], lo[4];
    for (int j = 0; j < 4; ++j) {
      hi[j] = _mm512_set1_epi32(kHalf >> 16);
      mid[j] = lo[j] = _mm512_setzero_si512();
    }
    for (int t = 0; t < n; t += 4, digits += 3, in += 4 * stride) {
      __m512i q[4];
      InterleaveRows(in, stride, n - t, q);
      const __m512i d2 = _mm512_set1_epi32(digits[0]), d1 = _mm512_set1_epi32(digits[1]),
                    d0 = _mm512_set1_epi32(digits[2]);
      for (int j = 0; j < 4; ++j) {
        hi[j] = _mm512_dpbusd_epi32(hi[j], q[j], d2);
        mid[j] = _mm512_dpbusd_epi32(mid[j], q[j], d1);
        lo[j] = _mm512_dpbusd_epi32(lo[j], q[j], d0);
      }
    }
    for (int j = 0; j < 4; ++j) {
      const __m512i sum = _mm512_add_epi32(_mm512_slli_epi32(hi[j], 8), mid[j]);
      v[j] = _mm512_srai_epi32(_mm512_add_epi32(_mm512_slli_epi32(sum, 8), lo[j]),
                               kPrecisionBits);
    }
  }
  // Lane by lane, so the bytes come back in order; saturation is Clip8.
  _mm512_storeu_si512(out, _mm512_packus_epi16(_mm512_packs_epi32(v[0], v[1]),
                                               _mm512_packs_epi32(v[2], v[3])));
}

// The vertical pass by quad digits (k.quad_digits set); the last chunk of a row overlaps
// the one before it.
void DigitColumns(const ColumnPass& pass) {
  const CoefficientView& k = pass.k;
  constexpr size_t kChunk = 64;
  for (int i = 0; i < pass.out_height; ++i) {
    const uint8_t* in =
        pass.src + static_cast<size_t>(k.first[i] - pass.row_offset) * pass.src_stride;
    const int32_t* digits = k.quad_digits + static_cast<size_t>(i) * k.quads * 3;
    uint8_t* out = pass.dst + i * pass.dst_stride;
    const int n = k.count[i];
    auto chunk = [&](size_t x) {
      if (n <= kGroupTaps) {
        DigitChunk<true>(in + x, pass.src_stride, digits, n, out + x);
      } else {
        DigitChunk<false>(in + x, pass.src_stride, digits, n, out + x);
      }
    };
    size_t x = 0;
    for (; x + kChunk <= pass.row_bytes; x += kChunk) chunk(x);
    if (x < pass.row_bytes) chunk(pass.row_bytes - kChunk);
  }
}

}  // namespace

void RowPassAvx512(const RowPass& pass) { RowPassWith<Avx512>(pass); }
void ColumnPassAvx512(const ColumnPass& pass) {
  if (pass.k.quad_digits) return DigitColumns(pass);
  ColumnPassWith<Avx512>(pass);
}

}  // namespace imgpipe::resize_internal
