// Small, fixed pseudo-random generators: the same numbers on every platform and
// standard library (std:: distributions are implementation-defined), so plans,
// shuffles and augmentations are reproducible from a seed.
#pragma once

#include <cstdint>

namespace imgpipe {

// splitmix64: a 64-bit state, one multiply-xorshift round per number.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed = 0) : state_(seed) {}

  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

  // Uniform in [0, bound), bound > 0, without modulo bias (Lemire's method).
  uint64_t Below(uint64_t bound) {
    while (true) {
      __uint128_t product = static_cast<__uint128_t>(Next()) * bound;
      uint64_t low = static_cast<uint64_t>(product);
      if (low >= bound || low >= (-bound) % bound) return static_cast<uint64_t>(product >> 64);
    }
  }

  // Uniform in [0, 1) with 53 random bits.
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Uniform in [lo, hi).
  double Uniform(double lo, double hi) { return lo + (hi - lo) * Uniform(); }

  uint64_t state() const { return state_; }
  void set_state(uint64_t state) { state_ = state; }

 private:
  uint64_t state_;
};

// A seed derived from a base seed and up to three counters (epoch, element index, ...),
// well mixed so that neighbouring counters give unrelated streams.
inline uint64_t DeriveSeed(uint64_t seed, uint64_t a, uint64_t b = 0, uint64_t c = 0) {
  SplitMix64 mix(seed ^ 0x6a09e667f3bcc909ull);
  uint64_t h = mix.Next();
  for (uint64_t v : {a, b, c}) {
    mix.set_state(h ^ v);
    h = mix.Next();
  }
  return h;
}

}  // namespace imgpipe
