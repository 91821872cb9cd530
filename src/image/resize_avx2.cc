// The resize loops for AVX2 (resize_simd.h over 256-bit vectors); this file is
// compiled with -mavx2 and runs only where the CPU has it (resize.cc checks).
#include "image/resize_simd.h"

namespace imgpipe::resize_internal {
namespace {

struct Avx2 {
  using Vec = __m256i;
  static constexpr size_t kBytes = 32;
  static constexpr int kRows = 2;

  IMGPIPE_RESIZE_LANE_OPS(_mm256, si256)
  static __m128i Load128(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }
  static Vec LoadLanes(const void* p) { return _mm256_broadcastsi128_si256(Load128(p)); }
  static Vec LoadRows(const uint8_t* const* rows, size_t offset) {
    return _mm256_inserti128_si256(_mm256_castsi128_si256(Load128(rows[0] + offset)),
                                   Load128(rows[1] + offset), 1);
  }
  static void SplitRows(Vec v, __m128i* out) {
    out[0] = _mm256_castsi256_si128(v);
    out[1] = _mm256_extracti128_si256(v, 1);
  }
};

}  // namespace

void RowPassAvx2(const RowPass& pass) { RowPassWith<Avx2>(pass); }
void ColumnPassAvx2(const ColumnPass& pass) { ColumnPassWith<Avx2>(pass); }

}  // namespace imgpipe::resize_internal
