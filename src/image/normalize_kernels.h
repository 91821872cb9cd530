// The loops of NormalizeToChw (transforms.cc): the lookup table they share and the
// AVX-512 VBMI loop (normalize_avx512_vbmi.cc, compiled for its own ISA). Plain
// structs and raw pointers only, so that the ISA-specific file needs no standard-library
// templates. Throws nothing.
#pragma once

#include <cstddef>
#include <cstdint>

namespace imgpipe::transforms_internal {

// value[k][v] = (v / 255.0f - mean[k]) / std[k] for each channel k and byte v; bytes[k][j][v]
// is byte j (little-endian) of value[k][v], the layout the AVX-512 VBMI loop looks up.
struct NormalizeTable {
  alignas(64) uint8_t bytes[3][4][256];
  float value[3][256];
};

// Writes table.value of pixels [0, m) of RGB `src` to r[0, m), g[0, m) and b[0, m), where
// m = n if n >= 64, else 0 (blocks of 64 pixels, the last overlapping the one before),
// and returns m. `mirror`: reads the pixels backwards, src pointing just past the first
// one (out[i] is the pixel at src - 3 * (i + 1)). Needs AVX-512 VBMI. Its stores may
// be streamed (non-temporal): the caller fences them (_mm_sfence) once, after its last
// run, before the planes are handed on (a fence per run would wait for each run's).
size_t NormalizeBlocksAvx512Vbmi(const uint8_t* src, size_t n, const NormalizeTable& table,
                                 float* r, float* g, float* b, bool mirror);

}  // namespace imgpipe::transforms_internal
