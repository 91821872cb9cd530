// The horizontal layout of the AVX-512 VBMI resize kernel (PermuteBlock in
// resize_kernels.h), made from one axis's coefficients for one channel count. Throws
// nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "image/resize_coefficients.h"
#include "image/resize_kernels.h"

namespace imgpipe::resize_internal {

// The blocks and their vectors; `View()` hands them to the kernel.
struct PermuteTable {
  std::vector<PermuteBlock> blocks;
  std::vector<uint8_t> storage;  // the vectors, from the first 64-byte boundary
  const uint8_t* vectors = nullptr;

  PermuteView View() const;
};

// Returns the layout of outputs [0, n) of `k`, a view into `owner`, for pixels of
// `channels` (1 to 4) bytes, or nullptr if a weight has no WeightDigits. The last two
// are cached per thread (each entry holds its owner).
std::shared_ptr<const PermuteTable> PermuteTableFor(std::shared_ptr<const Coefficients> owner,
                                                    const CoefficientView& k, int n,
                                                    int channels);

}  // namespace imgpipe::resize_internal
