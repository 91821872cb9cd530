#include "util/file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "util/error.h"
#include "testing/unprivileged_test_util.h"

namespace imgpipe {
namespace {

std::string TempDir() {
  std::string dir = JoinPath(::testing::TempDir(), "file_test_" + std::to_string(::getpid()));
  MakeDirectories(dir);
  return dir;
}

TEST(File, AtomicWriterCommitsUnderFinalName) {
  std::string path = JoinPath(TempDir(), "a.bin");
  {
    AtomicFileWriter writer(path);
    writer.file().Append("hello ");
    writer.file().Append(std::string(3 << 20, 'x'));
    EXPECT_FALSE(PathExists(path));
    EXPECT_TRUE(PathExists(writer.temporary_path()));
    writer.Commit();
  }
  EXPECT_EQ(FileSize(path), 6u + (3u << 20));
  EXPECT_EQ(ReadFile(path).substr(0, 6), "hello ");
}

TEST(File, AtomicWriterWithoutCommitLeavesNothing) {
  std::string dir = JoinPath(TempDir(), "nocommit");
  MakeDirectories(dir);
  {
    AtomicFileWriter writer(JoinPath(dir, "b.bin"));
    writer.file().Append("partial");
  }
  EXPECT_TRUE(ListDirectory(dir).empty());
}

TEST(File, ErrorsNameThePath) {
  try {
    ReadFile("/nonexistent/imgpipe/file");
    FAIL();
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/imgpipe/file"), std::string::npos);
    EXPECT_EQ(e.error_number(), ENOENT);
  }
  EXPECT_THROW(ReadFile(TempDir()), IoError);  // a directory where a file was expected
}

// A file its reader may not open (mode 000, read by 'nobody' when the test runs as root).
TEST(File, UnreadableFileErrorNamesThePath) {
  std::string dir = JoinPath(TempDir(), "unreadable");
  MakeDirectories(dir);
  std::string path = JoinPath(dir, "secret.bin");
  WriteFileAtomic(path, "data");
  MakeUnreadable(path);
  UnprivilegedResult r = RunUnprivileged([&](std::string* message) {
    try {
      ReadFile(path);
    } catch (const IoError& e) {
      *message = e.what();
      return e.error_number() == EACCES ? 0 : 1;
    }
    return 2;  // read it: privileges were not dropped
  });
  EXPECT_EQ(r.status, 0) << r.message;
  EXPECT_EQ(r.message, path + ": open: Permission denied");
  EXPECT_THROW(FileSize(dir), IoError);  // and a directory where a file was expected
}

TEST(File, PathHelpers) {
  EXPECT_EQ(JoinPath("a/", "/b"), "a/b");
  EXPECT_EQ(BaseName("x/y/z.jpg"), "z.jpg");
  EXPECT_EQ(DirName("x/y/z.jpg"), "x/y");
  EXPECT_EQ(DirName("z.jpg"), ".");
}

TEST(DataError, MessageHasPathAndOffset) {
  DataError e("f.tfrecord", 42, "bad crc");
  EXPECT_STREQ(e.what(), "f.tfrecord: offset 42: bad crc");
  EXPECT_EQ(e.reason(), "bad crc");
}

}  // namespace
}  // namespace imgpipe
