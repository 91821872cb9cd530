#include "image/resize_permute_table.h"

#include <algorithm>
#include <array>
#include <cstring>

namespace imgpipe::resize_internal {
namespace {

// The number of outputs from i (of n) that one block takes: at most 16 / channels (5
// for RGB) whose taps lie in a 64-byte window from input pixel first[i].
int BlockPixels(const CoefficientView& k, int i, int n, int channels) {
  const int most = channels == 3 ? 5 : 16 / channels;
  int p = 1;
  while (p < most && i + p < n && k.first[i + p] >= k.first[i] &&
         (k.first[i + p] - k.first[i] + kGroupTaps) * channels <= kPermuteVectorBytes) {
    ++p;
  }
  return p;
}

// Writes quad q of block b (outputs of k) as four vectors at `out`; false if a weight
// has no WeightDigits.
bool WriteQuad(const CoefficientView& k, const PermuteBlock& b, int q, int channels,
               uint8_t* out) {
  uint8_t* control = out;
  int8_t* digits[3] = {reinterpret_cast<int8_t*>(out + 3 * kPermuteVectorBytes),
                       reinterpret_cast<int8_t*>(out + 2 * kPermuteVectorBytes),
                       reinterpret_cast<int8_t*>(out + kPermuteVectorBytes)};
  for (int p = 0; p < b.pixels; ++p) {
    const int i = b.out + p;
    for (int c = 0; c < channels; ++c) {
      for (int j = 0; j < kGroupTaps; ++j) {
        const int byte = 4 * (p * channels + c) + j, tap = kGroupTaps * q + j;
        if (tap >= k.count[i]) continue;  // control 0, weight 0
        control[byte] = static_cast<uint8_t>((k.first[i] - b.window + j) * channels + c);
        int8_t d[3];
        if (!WeightDigits(k.weights[static_cast<size_t>(i) * k.taps + tap], d)) return false;
        for (int level = 0; level < 3; ++level) digits[level][byte] = d[level];
      }
    }
  }
  return true;
}

// Fills t with the blocks of outputs [0, n) of k; false as WriteQuad.
bool Build(const CoefficientView& k, int n, int channels, PermuteTable& t) {
  int vectors = 0;
  for (int i = 0; i < n;) {
    PermuteBlock b{i, BlockPixels(k, i, n, channels), 1, k.first[i], vectors};
    for (int p = 0; p < b.pixels; ++p) {
      b.quads = std::max(b.quads, (k.count[i + p] + kGroupTaps - 1) / kGroupTaps);
    }
    t.blocks.push_back(b);
    vectors += 4 * b.quads;
    i += b.pixels;
  }
  t.storage.assign(static_cast<size_t>(vectors + 1) * kPermuteVectorBytes, 0);
  uint8_t* base = t.storage.data();
  base += (kPermuteVectorBytes - reinterpret_cast<uintptr_t>(base) % kPermuteVectorBytes) %
          kPermuteVectorBytes;
  t.vectors = base;
  for (const PermuteBlock& b : t.blocks) {
    for (int q = 0; q < b.quads; ++q) {
      uint8_t* out = base + static_cast<size_t>(b.vector + 4 * q) * kPermuteVectorBytes;
      if (!WriteQuad(k, b, q, channels, out)) return false;
    }
  }
  return true;
}

struct PermuteCacheEntry {
  std::shared_ptr<const Coefficients> owner;
  const int32_t* first = nullptr;
  int n = 0, channels = 0;
  std::shared_ptr<const PermuteTable> table;
};

}  // namespace

PermuteView PermuteTable::View() const {
  return PermuteView{static_cast<int>(blocks.size()), blocks.data(), vectors};
}

std::shared_ptr<const PermuteTable> PermuteTableFor(std::shared_ptr<const Coefficients> owner,
                                                    const CoefficientView& k, int n,
                                                    int channels) {
  thread_local std::array<PermuteCacheEntry, 2> cache;
  thread_local size_t next = 0;
  for (const PermuteCacheEntry& e : cache) {
    if (e.owner == owner && e.first == k.first && e.n == n && e.channels == channels) {
      return e.table;
    }
  }
  auto table = std::make_shared<PermuteTable>();
  if (!Build(k, n, channels, *table)) table.reset();
  cache[next] = PermuteCacheEntry{std::move(owner), k.first, n, channels, table};
  next = (next + 1) % cache.size();
  return table;
}

}  // namespace imgpipe::resize_internal
