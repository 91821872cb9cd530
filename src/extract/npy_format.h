// The NumPy .npy file format, version 1.0, as imgpipe extract writes it (NumPy's
// numpy/lib/format.py describes the format; np.load reads these files unchanged):
//
//   magic            6 bytes  "\x93NUMPY"
//   version          2 bytes  major 1, minor 0
//   header_len       2 bytes  uint16 little endian: bytes of the header that follows
//   header           header_len bytes of ASCII: a Python dict literal
//                      {'descr': '<f4', 'fortran_order': False, 'shape': (N, D), }
//                    padded with spaces and ended by '\n' so that the data starts at a
//                    multiple of 64 bytes
//   data             the array's elements in C order, little endian
//
// dtypes used: '<f2' (IEEE half), '<f4' (float), '<i8' (int64), '<UW' (fixed-width
// unicode: W UTF-32LE code units per element, zero-padded).
#pragma once

#include <cstddef>

namespace imgpipe::npy {

inline constexpr char kMagic[] = "\x93NUMPY";
inline constexpr size_t kMagicBytes = 6;
inline constexpr size_t kPreambleBytes = 10;  // magic, version, header_len
inline constexpr size_t kHeaderAlignment = 64;
inline constexpr size_t kMaxHeaderBytes = 65535;  // header_len is a uint16 in version 1.0

}  // namespace imgpipe::npy
