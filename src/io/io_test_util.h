// Helpers shared by the io layer's tests.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "io/byte_source.h"
#include "util/file.h"

namespace imgpipe {

// A fresh folder named after `name` under the test's temporary directory.
inline std::string ScratchDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/" + name + "_" + std::to_string(getpid());
  MakeDirectories(dir);
  return dir;
}

// A file of the shared test data (../shared/testdata).
inline std::string TestDataPath(const std::string& relative) {
  return std::string(IMGPIPE_TESTDATA_DIR) + "/" + relative;
}

// n bytes that differ with `seed` and repeat no short period.
inline std::string Pattern(size_t n, int seed) {
  std::string bytes(n, '\0');
  for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<char>((i * 131 + seed) ^ (i >> 9));
  return bytes;
}

// Bytes [offset, offset + n) of `source`, fewer at its end.
inline std::string ReadRange(const ByteSource& source, uint64_t offset, size_t n) {
  std::string out(n, '\0');
  out.resize(source.Read(offset, out.data(), n));
  return out;
}

}  // namespace imgpipe
