// The resize loops for AVX-512 with VNNI (resize_simd.h over 512-bit vectors: four rows
// per horizontal step, 64 bytes per vertical chunk, and each multiply-add one vpdpwssd);
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

}  // namespace

void RowPassAvx512(const RowPass& pass) { RowPassWith<Avx512>(pass); }
void ColumnPassAvx512(const ColumnPass& pass) { ColumnPassWith<Avx512>(pass); }

}  // namespace imgpipe::resize_internal
