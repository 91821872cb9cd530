// Resize coefficients for one axis: Pillow's fixed-point triangle-filter weights
// (Resample.c, 8-bit images), and the same weights split and laid out for the SIMD
// kernels. Throws nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "image/resize_kernels.h"

namespace imgpipe::resize_internal {

// The SIMD layouts of the weights that a loop reads (resize_kernels.h), or'd together.
enum CoefficientLayout : unsigned {
  kRowGroups = 1,     // packed: the SSE4.1, AVX2 and AVX-512 horizontal loops
  kColumnPairs = 2,   // pair_words: the SSE4.1 and AVX2 vertical loops
  kColumnDigits = 4,  // quad_digits, or pair_words where a weight has no digits: AVX-512's
  kAllLayouts = 7,
};

// The weights of one pass and their SIMD layouts; `View(layouts)` hands them to the
// kernels. A layout is built on the first View that asks for it (once, whichever thread
// asks), so a kernel pays only for what it reads.
struct Coefficients {
  int taps = 0;                  // the most taps of any output pixel: stride of `weights`
  int groups = 0;                // ceil(taps / kGroupTaps): stride of `packed`, in groups
  int pairs = 0;                 // ceil(taps / 2): stride of `pair_words`, in pairs
  int quads = 0;                 // ceil(taps / kGroupTaps): stride of quad_digits, in quads
  std::vector<int32_t> first;    // output i reads inputs [first[i], first[i] + count[i])
  std::vector<int32_t> count;
  std::vector<int32_t> weights;  // 22-bit fixed point, >= 0, zero past count[i]

  // The view of the weights and of `layouts` (the others' pointers are null).
  CoefficientView View(unsigned layouts = kAllLayouts) const;

 private:
  mutable std::once_flag packed_once_, pairs_once_, digits_once_;
  mutable std::vector<int16_t> packed_;      // kGroupInt16 per group, see resize_kernels.h
  mutable std::vector<int32_t> pair_words_;  // per pair of taps: hi word, lo word
  mutable std::vector<int32_t> quad_digits_;  // per quad of taps: 3 words; empty if a
                                              // weight has no WeightDigits
};

// Sets d[0..2] to signed base-256 digits of w (w = d[2] * 2^16 + d[1] * 2^8 + d[0],
// each an int8, the multipliers of vpdpbusd); returns false if w has none.
bool WeightDigits(int32_t w, int8_t* d);

// Returns the coefficients of out_size outputs over the input span [in0, in1) of an axis
// of in_size pixels, as Pillow's precompute_coeffs + normalize_coeffs_8bpc; the last few
// are cached per thread (keyed by all four arguments), so repeated sizes cost nothing.
std::shared_ptr<const Coefficients> CoefficientsFor(int in_size, double in0, double in1,
                                                    int out_size);

}  // namespace imgpipe::resize_internal
