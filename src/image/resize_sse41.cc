// The resize loops for SSE4.1 (resize_simd.h over 128-bit vectors); this file is
// compiled with -msse4.1 and runs only where the CPU has it (resize.cc checks).
#include "image/resize_simd.h"

namespace imgpipe::resize_internal {
namespace {

struct Sse41 {
  using Vec = __m128i;
  static constexpr size_t kBytes = 16;
  static constexpr int kRows = 1;

  IMGPIPE_RESIZE_LANE_OPS(_mm, si128)
  static Vec LoadLanes(const void* p) { return Load(p); }
  static Vec LoadRows(const uint8_t* const* rows, size_t offset) { return Load(rows[0] + offset); }
  static void SplitRows(Vec v, __m128i* out) { out[0] = v; }
};

}  // namespace

void RowPassSse41(const RowPass& pass) { RowPassWith<Sse41>(pass); }
void ColumnPassSse41(const ColumnPass& pass) { ColumnPassWith<Sse41>(pass); }

}  // namespace imgpipe::resize_internal
