// The portable resize loops (resize_kernels.h): plain C++, the reference that the SIMD
// kernels must equal byte for byte.
#include <vector>

#include "image/resize_kernels.h"

namespace imgpipe::resize_internal {
namespace {

inline uint8_t Clip8(int32_t v) {
  v >>= kPrecisionBits;
  return static_cast<uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v);
}

// The horizontal pass with C channels known at compile time, so that the inner loops
// unroll.
template <int C>
void Rows(const RowPass& pass) {
  const CoefficientView& k = pass.k;
  for (int r = 0; r < pass.rows; ++r) {
    const uint8_t* in = pass.src + r * pass.src_stride;
    uint8_t* out = pass.dst + r * pass.dst_stride;
    for (int i = pass.begin; i < pass.end; ++i) {
      const int32_t* w = &k.weights[static_cast<size_t>(i) * k.taps];
      const uint8_t* p = in + static_cast<size_t>(k.first[i] - pass.column_offset) * C;
      const int n = k.count[i];
      int32_t acc[C];
      for (int c = 0; c < C; ++c) acc[c] = kHalf;
      for (int t = 0; t < n; ++t) {
        for (int c = 0; c < C; ++c) acc[c] += p[t * C + c] * w[t];
      }
      for (int c = 0; c < C; ++c) out[i * C + c] = Clip8(acc[c]);
    }
  }
}

}  // namespace

void RowPassPortable(const RowPass& pass) {
  switch (pass.channels) {
    case 1: return Rows<1>(pass);
    case 2: return Rows<2>(pass);
    case 3: return Rows<3>(pass);
    case 4: return Rows<4>(pass);
  }
}

void ColumnPassPortable(const ColumnPass& pass) {
  const CoefficientView& k = pass.k;
  thread_local std::vector<int32_t> acc_buffer;
  acc_buffer.resize(pass.row_bytes);
  int32_t* acc = acc_buffer.data();
  for (int i = 0; i < pass.out_height; ++i) {
    const int32_t* w = &k.weights[static_cast<size_t>(i) * k.taps];
    const uint8_t* first =
        pass.src + static_cast<size_t>(k.first[i] - pass.row_offset) * pass.src_stride;
    for (size_t b = 0; b < pass.row_bytes; ++b) acc[b] = kHalf;
    for (int t = 0; t < k.count[i]; ++t) {
      const uint8_t* in = first + t * pass.src_stride;
      const int32_t weight = w[t];
      for (size_t b = 0; b < pass.row_bytes; ++b) acc[b] += in[b] * weight;
    }
    uint8_t* out = pass.dst + i * pass.dst_stride;
    for (size_t b = 0; b < pass.row_bytes; ++b) out[b] = Clip8(acc[b]);
  }
}

}  // namespace imgpipe::resize_internal
