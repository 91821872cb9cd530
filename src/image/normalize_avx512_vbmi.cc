#include <immintrin.h>

#include "image/normalize_kernels.h"

namespace imgpipe::transforms_internal {
namespace {

// Looks up 64 byte indices in one channel's table: each byte j of the 64 floats by two
// vpermi2b (values 0-127, 128-255) and a blend on the index's top bit, then unpacks the
// four byte planes into floats. The unpacks interleave within 128-bit lanes, so vector q
// holds the indices at positions 16l + 4q + m (l, m in 0..3), in that order of l, m.
// Stores vectors `first` to 3 (out[16 first, 64)).
[[gnu::always_inline]] inline void LookUp(__m512i idx, const uint8_t (*bytes)[256], float* out,
                                          int first) {
  const __mmask64 top = _mm512_movepi8_mask(idx);
  __m512i b[4];
  for (int j = 0; j < 4; ++j) {
    const uint8_t* t = bytes[j];
    const __m512i lo =
        _mm512_permutex2var_epi8(_mm512_load_si512(t), idx, _mm512_load_si512(t + 64));
    const __m512i hi = _mm512_permutex2var_epi8(_mm512_load_si512(t + 128), idx,
                                                _mm512_load_si512(t + 192));
    b[j] = _mm512_mask_blend_epi8(top, lo, hi);
  }
  const __m512i w01l = _mm512_unpacklo_epi8(b[0], b[1]);
  const __m512i w01h = _mm512_unpackhi_epi8(b[0], b[1]);
  const __m512i w23l = _mm512_unpacklo_epi8(b[2], b[3]);
  const __m512i w23h = _mm512_unpackhi_epi8(b[2], b[3]);
  const __m512i floats[4] = {
      _mm512_unpacklo_epi16(w01l, w23l), _mm512_unpackhi_epi16(w01l, w23l),
      _mm512_unpacklo_epi16(w01h, w23h), _mm512_unpackhi_epi16(w01h, w23h)};
  // Streamed past the caches where `out` is 64-byte aligned (each vector one whole
  // line): a sample is written once and read later by another thread or the device, so
  // caching it would only evict the decoder's data (measured: 30% less time in this loop
  // in the pipeline).
  if ((reinterpret_cast<uintptr_t>(out) & 63) == 0) {
    for (int q = first; q < 4; ++q) {
      _mm512_stream_si512(reinterpret_cast<__m512i*>(out + 16 * q), floats[q]);
    }
  } else {
    for (int q = first; q < 4; ++q) _mm512_storeu_si512(out + 16 * q, floats[q]);
  }
}

// Per direction (forward, mirrored) and channel, the vpermb control that takes a block's
// 64 samples from its 192 bytes, already in the order LookUp's unpacks undo: position
// 16l + 4q + m holds pixel 16q + 4l + m (63 minus that when mirrored).
struct BlockControls {
  alignas(64) uint8_t bytes[2][3][64];
};

constexpr BlockControls MakeBlockControls() {
  BlockControls controls{};
  for (int mirror = 0; mirror < 2; ++mirror) {
    for (int pos = 0; pos < 64; ++pos) {
      int pixel = 16 * ((pos / 4) % 4) + 4 * (pos / 16) + pos % 4;
      if (mirror) pixel = 63 - pixel;
      for (int k = 0; k < 3; ++k) controls.bytes[mirror][k][pos] = static_cast<uint8_t>(3 * pixel + k);
    }
  }
  return controls;
}

constexpr BlockControls kBlockControls = MakeBlockControls();

}  // namespace

size_t NormalizeBlocksAvx512Vbmi(const uint8_t* src, size_t n, const NormalizeTable& table,
                                 float* r, float* g, float* b, bool mirror) {
  if (n < 64) return 0;
  // 1. The controls of this direction, and the positions whose byte lies in the block's
  //    third 64 bytes.
  __m512i c[3];
  __mmask64 third[3];
  for (int k = 0; k < 3; ++k) {
    c[k] = _mm512_load_si512(kBlockControls.bytes[mirror ? 1 : 0][k]);
    third[k] = _mm512_movepi8_mask(c[k]);
  }
  // 2. Blocks of 64 pixels, the last one ending at n, overlapping the one before; of
  //    that one only the vectors of 16 pixels that reach past the others are stored.
  float* out[3] = {r, g, b};
  const auto block = [&](size_t i, int first) __attribute__((always_inline)) {
    const uint8_t* p = mirror ? src - 3 * (i + 64) : src + 3 * i;
    const __m512i v0 = _mm512_loadu_si512(p);
    const __m512i v1 = _mm512_loadu_si512(p + 64);
    const __m512i v2 = _mm512_loadu_si512(p + 128);
    for (int k = 0; k < 3; ++k) {
      __m512i idx = _mm512_permutex2var_epi8(v0, c[k], v1);
      idx = _mm512_mask_permutexvar_epi8(idx, third[k], c[k], v2);
      LookUp(idx, table.bytes[k], out[k] + i, first);
    }
  };
  for (size_t i = 0; i + 64 <= n; i += 64) block(i, 0);
  if (n % 64 != 0) block(n - 64, static_cast<int>((64 - n % 64) / 16));
  return n;
}

}  // namespace imgpipe::transforms_internal
