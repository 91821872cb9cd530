#include "io/byte_source.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "io/io_test_util.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe {
namespace {

// The local file and the memory source give the same bytes at every offset, short reads
// only at the end, and name themselves in errors.
TEST(ByteSourceTest, LocalAndMemoryReadAlike) {
  std::string bytes;
  for (int i = 0; i < 10000; ++i) bytes += static_cast<char>(i * 7 + i / 251);
  const std::string path = ScratchDir("byte_source") + "/bytes";
  WriteFileAtomic(path, bytes, false);
  const auto local = OpenLocalByteSource(path);
  const auto memory = MakeMemoryByteSource("mem://x", bytes);
  EXPECT_EQ(local->name(), path);
  EXPECT_EQ(memory->name(), "mem://x");
  for (const ByteSource* source : {local.get(), memory.get()}) {
    EXPECT_EQ(source->size(), bytes.size());
    EXPECT_EQ(ReadRange(*source, 0, 10), bytes.substr(0, 10));
    EXPECT_EQ(ReadRange(*source, 4097, 3000), bytes.substr(4097, 3000));
    EXPECT_EQ(ReadRange(*source, 9990, 100), bytes.substr(9990));  // short at the end
    EXPECT_EQ(ReadRange(*source, 10000, 5), "");
    EXPECT_EQ(ReadRange(*source, 123456, 5), "");
  }
  RemoveFile(path);
  EXPECT_THROW(OpenLocalByteSource(path), IoError);
  EXPECT_THROW(OpenLocalByteSource(::testing::TempDir()), IoError);
}

TEST(ByteSourceTest, FrontToBackReadsEverythingInPieces) {
  std::string bytes(5000, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i % 253);
  const auto file = ReadFrontToBack(MakeMemoryByteSource("mem://y", bytes));
  EXPECT_EQ(file->path(), "mem://y");
  std::string got;
  char buffer[777];
  while (size_t n = file->Read(buffer, sizeof buffer)) got.append(buffer, n);
  EXPECT_EQ(got, bytes);
  EXPECT_EQ(file->Read(buffer, sizeof buffer), 0u);
}

}  // namespace
}  // namespace imgpipe
