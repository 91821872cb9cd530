// The resize loops for SSE4.1 (resize_simd.h over 128-bit vectors); this file is
// compiled with -msse4.1 and runs only where the CPU has it (resize.cc checks).
#include "image/resize_simd.h"

namespace imgpipe::resize_internal {
namespace {

struct Sse41 {
  using Vec = __m128i;
  static constexpr size_t kBytes = 16;
  static constexpr int kRows = 1;

  static Vec Zero() { return _mm_setzero_si128(); }
  static Vec Load(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }
  static void Store(uint8_t* p, Vec v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v); }
  static Vec Broadcast32(const int32_t* p) { return _mm_set1_epi32(*p); }
  static Vec Add32(Vec a, Vec b) { return _mm_add_epi32(a, b); }
  static Vec Madd(Vec a, Vec b) { return _mm_madd_epi16(a, b); }
  static Vec ShiftHi(Vec v) { return _mm_slli_epi32(v, kSplitBits); }
  static Vec ShiftRound(Vec v) { return _mm_srai_epi32(v, kPrecisionBits); }
  static Vec UnpackLo8(Vec a, Vec b) { return _mm_unpacklo_epi8(a, b); }
  static Vec UnpackHi8(Vec a, Vec b) { return _mm_unpackhi_epi8(a, b); }
  static Vec Packs32(Vec a, Vec b) { return _mm_packs_epi32(a, b); }
  static Vec Packus16(Vec a, Vec b) { return _mm_packus_epi16(a, b); }
  static Vec Shuffle8(Vec a, Vec control) { return _mm_shuffle_epi8(a, control); }
  static Vec LoadLanes(const void* p) { return Load(p); }
  static Vec LoadRows(const uint8_t* const* rows, size_t offset) { return Load(rows[0] + offset); }
  static void SplitRows(Vec v, __m128i* out) { out[0] = v; }
};

}  // namespace

void RowPassSse41(const RowPass& pass) { RowPassWith<Sse41>(pass); }
void ColumnPassSse41(const ColumnPass& pass) { ColumnPassWith<Sse41>(pass); }

}  // namespace imgpipe::resize_internal
