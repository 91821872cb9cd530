// The resize loops for AVX2 (resize_simd.h over 256-bit vectors); this file is
// compiled with -mavx2 and runs only where the CPU has it (resize.cc checks).
#include "image/resize_simd.h"

namespace imgpipe::resize_internal {
namespace {

struct Avx2 {
  using Vec = __m256i;
  using Shuffle = __m256i;
  static constexpr size_t kBytes = 32;

  static Shuffle LoadShuffle(const uint8_t* control) { return Load(control); }
  static Vec Zero() { return _mm256_setzero_si256(); }
  static Vec Load(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
  static void Store(uint8_t* p, Vec v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
  }
  static Vec Broadcast32(const int32_t* p) { return _mm256_set1_epi32(*p); }
  static Vec Add32(Vec a, Vec b) { return _mm256_add_epi32(a, b); }
  static Vec Madd(Vec a, Vec b) { return _mm256_madd_epi16(a, b); }
  static Vec ShiftHi(Vec v) { return _mm256_slli_epi32(v, kSplitBits); }
  static Vec ShiftRound(Vec v) { return _mm256_srai_epi32(v, kPrecisionBits); }
  static Vec UnpackLo8(Vec a, Vec b) { return _mm256_unpacklo_epi8(a, b); }
  static Vec UnpackHi8(Vec a, Vec b) { return _mm256_unpackhi_epi8(a, b); }
  static Vec Packs32(Vec a, Vec b) { return _mm256_packs_epi32(a, b); }
  static Vec Packus16(Vec a, Vec b) { return _mm256_packus_epi16(a, b); }
  static __m128i ReduceTo128(Vec v) {
    return _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  }

  // The 16 bytes in both lanes; taps (0, 1) in the low lane, (2, 3) in the high one.
  static void MaddGroup(const uint8_t* p, const int16_t* w, const Shuffle& shuffle, Vec& hi,
                        Vec& lo) {
    const Vec pixels =
        _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    const Vec pairs = _mm256_shuffle_epi8(pixels, shuffle);
    hi = Add32(hi, Madd(pairs, Load(w)));
    lo = Add32(lo, Madd(pairs, Load(w + 16)));
  }
};

}  // namespace

void RowPassAvx2(const RowPass& pass) { RowPassWith<Avx2>(pass); }
void ColumnPassAvx2(const ColumnPass& pass) { ColumnPassWith<Avx2>(pass); }

}  // namespace imgpipe::resize_internal
