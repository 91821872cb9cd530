#include "record/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace imgpipe::crc32c {
namespace {

// CRC-32C polynomial, bit-reversed.
constexpr uint32_t kPolynomial = 0x82f63b78u;

// Slicing-by-8 tables: kTables[0] is the classic byte table; kTables[k][b] is the CRC
// register after feeding byte b followed by k zero bytes.
using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables MakeTables() {
  Tables t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t crc = b;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? kPolynomial : 0);
    t[0][b] = crc;
  }
  for (uint32_t b = 0; b < 256; ++b) {
    for (int k = 1; k < 8; ++k) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
  }
  return t;
}

constexpr Tables kTables = MakeTables();

inline uint64_t LoadLittleEndian64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;  // x86 and the other little-endian hosts we build for
}

// The raw CRC register update (no pre/post inversion), table-driven.
uint32_t RawExtendPortable(uint32_t crc, const uint8_t* p, size_t n) {
  // 1. Bytes until p is 8-aligned.
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    crc = kTables[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    --n;
  }
  // 2. Eight bytes at a time.
  while (n >= 8) {
    uint64_t v = LoadLittleEndian64(p) ^ crc;
    crc = kTables[7][v & 0xff] ^ kTables[6][(v >> 8) & 0xff] ^ kTables[5][(v >> 16) & 0xff] ^
          kTables[4][(v >> 24) & 0xff] ^ kTables[3][(v >> 32) & 0xff] ^
          kTables[2][(v >> 40) & 0xff] ^ kTables[1][(v >> 48) & 0xff] ^ kTables[0][v >> 56];
    p += 8;
    n -= 8;
  }
  // 3. The tail.
  while (n > 0) {
    crc = kTables[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    --n;
  }
  return crc;
}

#if defined(__x86_64__)

// Block lengths of the three interleaved hardware streams.
constexpr size_t kLongBlock = 8192;
constexpr size_t kShortBlock = 256;

// Tables that advance a raw CRC register over `length` zero bytes, one table per byte
// of the register: shift(crc) = t[0][crc&ff] ^ t[1][(crc>>8)&ff] ^ ... (the operation
// is linear in the register, so it is the XOR of its effect on each byte).
struct ZeroShift {
  std::array<std::array<uint32_t, 256>, 4> t;

  explicit ZeroShift(size_t length) {
    // 1. Effect of `length` zero bytes on each single-bit register value.
    static const std::array<uint8_t, kLongBlock> zeros{};
    std::array<uint32_t, 32> basis;
    for (int bit = 0; bit < 32; ++bit) {
      basis[bit] = RawExtendPortable(uint32_t{1} << bit, zeros.data(), length);
    }
    // 2. Tabulate per register byte.
    for (int byte = 0; byte < 4; ++byte) {
      for (uint32_t v = 0; v < 256; ++v) {
        uint32_t out = 0;
        for (int bit = 0; bit < 8; ++bit) {
          if (v & (1u << bit)) out ^= basis[byte * 8 + bit];
        }
        t[byte][v] = out;
      }
    }
  }

  uint32_t operator()(uint32_t crc) const {
    return t[0][crc & 0xff] ^ t[1][(crc >> 8) & 0xff] ^ t[2][(crc >> 16) & 0xff] ^ t[3][crc >> 24];
  }
};

const ZeroShift& LongShift() {
  static const ZeroShift shift(kLongBlock);
  return shift;
}
const ZeroShift& ShortShift() {
  static const ZeroShift shift(kShortBlock);
  return shift;
}

// Runs three crc32 streams over consecutive blocks of `block` bytes while at least
// 3 * block bytes remain, then combines them: crc(A|B) = shift_|B|(crc(A)) ^ crc0(B).
__attribute__((target("sse4.2"))) uint64_t ThreeWay(uint64_t crc0, const uint8_t*& p, size_t& n,
                                                    size_t block, const ZeroShift& shift) {
  while (n >= 3 * block) {
    uint64_t crc1 = 0;
    uint64_t crc2 = 0;
    const uint8_t* end = p + block;
    do {
      crc0 = _mm_crc32_u64(crc0, LoadLittleEndian64(p));
      crc1 = _mm_crc32_u64(crc1, LoadLittleEndian64(p + block));
      crc2 = _mm_crc32_u64(crc2, LoadLittleEndian64(p + 2 * block));
      p += 8;
    } while (p < end);
    crc0 = shift(static_cast<uint32_t>(crc0)) ^ crc1;
    crc0 = shift(static_cast<uint32_t>(crc0)) ^ crc2;
    p += 2 * block;
    n -= 3 * block;
  }
  return crc0;
}

__attribute__((target("sse4.2"))) uint32_t RawExtendHardware(uint32_t crc, const uint8_t* p,
                                                             size_t n) {
  uint64_t crc0 = crc;
  // 1. Bytes until p is 8-aligned.
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    crc0 = _mm_crc32_u8(static_cast<uint32_t>(crc0), *p++);
    --n;
  }
  // 2. Three interleaved streams hide the instruction's latency.
  if (n >= 3 * kShortBlock) {
    crc0 = ThreeWay(crc0, p, n, kLongBlock, LongShift());
    crc0 = ThreeWay(crc0, p, n, kShortBlock, ShortShift());
  }
  // 3. One stream for the rest.
  while (n >= 8) {
    crc0 = _mm_crc32_u64(crc0, LoadLittleEndian64(p));
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    crc0 = _mm_crc32_u8(static_cast<uint32_t>(crc0), *p++);
    --n;
  }
  return static_cast<uint32_t>(crc0);
}

bool DetectHardware() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2");
}

#endif  // __x86_64__

using ExtendFunction = uint32_t (*)(uint32_t, const void*, size_t);

ExtendFunction ChooseExtend() { return HardwareAvailable() ? &ExtendHardware : &ExtendPortable; }

}  // namespace

uint32_t ExtendPortable(uint32_t init_crc, const void* data, size_t n) {
  return ~RawExtendPortable(~init_crc, static_cast<const uint8_t*>(data), n);
}

uint32_t ExtendHardware(uint32_t init_crc, const void* data, size_t n) {
#if defined(__x86_64__)
  return ~RawExtendHardware(~init_crc, static_cast<const uint8_t*>(data), n);
#else
  return ExtendPortable(init_crc, data, n);
#endif
}

bool HardwareAvailable() {
#if defined(__x86_64__)
  static const bool available = DetectHardware();
  return available;
#else
  return false;
#endif
}

uint32_t Extend(uint32_t init_crc, const void* data, size_t n) {
  static const ExtendFunction extend = ChooseExtend();
  return extend(init_crc, data, n);
}

}  // namespace imgpipe::crc32c
