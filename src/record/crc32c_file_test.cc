#include "record/crc32c_file.h"

#include <gtest/gtest.h>

#include <string>

#include "record/crc32c.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe {
namespace {

// 3 MiB and a bit, so that FileCrc32c reads several of its 1 MiB blocks and a short one.
std::string PatternBytes() {
  std::string bytes(3 * (1 << 20) + 12345, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 2654435761u) >> 13);
  return bytes;
}

TEST(Crc32cFile, WriterAndReaderAgreeWithTheCrcOfTheBytes) {
  const std::string bytes = PatternBytes();
  const std::string path = ::testing::TempDir() + "crc32c_file.bin";
  {
    std::unique_ptr<WritableFile> file = OpenWritableFile(path);
    Crc32cWritableFile checksummed(*file);
    // Uneven pieces: the running CRC must not depend on how the bytes were cut.
    for (size_t at = 0, piece = 1; at < bytes.size(); at += piece, piece = piece * 3 + 7) {
      checksummed.Append(std::string_view(bytes).substr(at, piece));
    }
    checksummed.Close();
    EXPECT_EQ(checksummed.crc32c(), crc32c::Value(bytes.data(), bytes.size()));
  }
  EXPECT_EQ(ReadFile(path), bytes);
  EXPECT_EQ(FileCrc32c(path), crc32c::Value(bytes.data(), bytes.size()));

  // One changed byte changes it.
  std::string changed = bytes;
  changed[2 * (1 << 20) + 5] ^= 1;
  WriteFileAtomic(path, changed);
  EXPECT_NE(FileCrc32c(path), crc32c::Value(bytes.data(), bytes.size()));
}

TEST(Crc32cFile, MismatchNamesBothValues) {
  EXPECT_EQ(Crc32cMismatch(0x1234abcd, 0x1234abcd), "");
  EXPECT_EQ(Crc32cMismatch(0x0000abcd, 0x1234abcd), "CRC-32C 0000abcd, recorded 1234abcd");
}

TEST(Crc32cFile, EmptyAndMissingFiles) {
  const std::string path = ::testing::TempDir() + "crc32c_empty.bin";
  WriteFileAtomic(path, "");
  EXPECT_EQ(FileCrc32c(path), 0u);
  EXPECT_THROW(FileCrc32c(::testing::TempDir() + "no-such-file"), IoError);
}

}  // namespace
}  // namespace imgpipe
