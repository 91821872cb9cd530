#include "record/index.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "record/crc32c_file.h"
#include "record/record_test_util.h"
#include "record/tfrecord_reader.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe {
namespace {

using ::testing::HasSubstr;
using testing::RandomBytes;
using testing::TempDir;
using testing::TestdataPath;
using testing::WriteRaw;
using testing::WriteRecords;

TEST(IndexTest, FormatsAndParses) {
  std::vector<IndexEntry> entries = {{0, 16}, {16, 100}, {116, 5000000016}};
  std::string text = FormatIndex(entries);
  EXPECT_EQ(text, "0 16\n16 100\n116 5000000016\n");
  EXPECT_EQ(ParseIndex(text, "x.idx"), entries);
  EXPECT_TRUE(ParseIndex("", "x.idx").empty());
  EXPECT_EQ(IndexPathFor("/data/train-00001.tfrecord"), "/data/train-00001.tfrecord.idx");
}

// Each bad text fails with the byte offset of its bad line and a reason.
TEST(IndexTest, RejectsMalformedLines) {
  struct Case {
    std::string text;
    uint64_t line_offset;
    std::string reason;
  };
  std::vector<Case> cases = {
      {"0 16\n16 x\n", 5, "malformed index line"},
      {"0 16\n16  20\n", 5, "malformed index line"},
      {"0 16\n16\n", 5, "malformed index line"},
      {"0 16\n-16 20\n", 5, "malformed index line"},
      {"0 16\n16 20 \n", 5, "malformed index line"},
      {"0 16\n\n", 5, "malformed index line"},
      {"0 16\r\n", 0, "malformed index line"},
      {" 0 16\n", 0, "malformed index line"},
      {"0 16\n16 20", 5, "does not end with a newline"},
      {"0 99999999999999999999\n", 0, "malformed index line"},
      {"0 16\n16 15\n", 5, "smaller than a record's 16 framing bytes"},
      {"0 16\n17 20\n", 5, "not contiguous (expected 16)"},
      {"0 16\n16 20\n0 20\n", 11, "not contiguous (expected 36)"},
      {"5 16\n", 0, "not contiguous (expected 0)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    try {
      ParseIndex(c.text, "shard.idx");
      ADD_FAILURE() << "no error";
    } catch (const DataError& e) {
      EXPECT_EQ(e.path(), "shard.idx");
      EXPECT_EQ(e.offset(), c.line_offset);
      EXPECT_THAT(e.reason(), HasSubstr(c.reason));
      EXPECT_THAT(e.what(), HasSubstr("shard.idx: offset " + std::to_string(c.line_offset)));
    }
  }
}

TEST(IndexTest, WritesAndReadsFiles) {
  TempDir dir;
  std::string path = dir.File("a.idx");
  std::vector<IndexEntry> entries = {{0, 20}, {20, 16}};
  uint32_t crc = WriteIndexFile(path, entries);
  EXPECT_EQ(ReadFile(path), "0 20\n20 16\n");
  EXPECT_EQ(crc, FileCrc32c(path));  // of the bytes written
  EXPECT_EQ(ReadIndexFile(path), entries);
  EXPECT_TRUE(ListDirectory(dir.path()) == std::vector<std::string>{"a.idx"});
  WriteRaw(path, "0 20\n21 16\n");
  try {
    ReadIndexFile(path);
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_EQ(e.path(), path);
    EXPECT_EQ(e.offset(), 5u);
  }
  EXPECT_THROW(ReadIndexFile(dir.File("missing.idx")), IoError);
}

TEST(IndexTest, BuildsIndexOfTensorFlowFile) {
  std::string path = TestdataPath("tfrecord/tfx/mnist.tfrecord");
  std::vector<IndexEntry> entries = BuildIndex(path);
  ASSERT_EQ(entries.size(), 1000u);
  // Contiguous, covering the file, and each entry frames a record the reader agrees on.
  EXPECT_EQ(ParseIndex(FormatIndex(entries), path), entries);
  EXPECT_EQ(entries.back().offset + entries.back().size, FileSize(path));
  TfRecordReader reader(path);
  std::string record;
  for (const IndexEntry& e : entries) {
    ASSERT_TRUE(reader.Next(&record));
    EXPECT_EQ(reader.record_offset(), e.offset);
    EXPECT_EQ(record.size() + 16, e.size);
  }
  EXPECT_EQ(ReadTfRecordAt(path, entries[500].offset).size() + 16, entries[500].size);
}

TEST(IndexTest, CountRecordsReadsTheIndexElseTheFile) {
  TempDir dir;
  std::string path = dir.File("c.tfrecord");
  std::vector<IndexEntry> entries = WriteRecords(path, {RandomBytes(10, 1), RandomBytes(20, 2), RandomBytes(5, 3)});
  EXPECT_EQ(CountRecords(path), 3);
  WriteIndexFile(IndexPathFor(path), {entries[0], entries[1]});  // the index, not the file, counts
  EXPECT_EQ(CountRecords(path), 2);
  std::string bytes = ReadFile(path);
  WriteRaw(path, bytes.substr(0, bytes.size() - 1));  // the last record truncated, no index
  std::remove(IndexPathFor(path).c_str());
  EXPECT_THROW(CountRecords(path), DataError);
  EXPECT_EQ(CountRecords(path, ErrorPolicy::kSkip), 2);
}

TEST(IndexTest, BuildIndexThrowsOnCorruption) {
  TempDir dir;
  std::string path = dir.File("d.tfrecord");
  std::vector<IndexEntry> entries = WriteRecords(path, {RandomBytes(100, 1), RandomBytes(50, 2)});
  EXPECT_EQ(BuildIndex(path), entries);
  std::string bytes = ReadFile(path);
  WriteRaw(path, bytes.substr(0, bytes.size() - 1));
  try {
    BuildIndex(path);
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_EQ(e.path(), path);
    EXPECT_EQ(e.offset(), entries[1].offset);
  }
  bytes[entries[1].offset + 3] ^= 1;
  WriteRaw(path, bytes);
  EXPECT_THROW(BuildIndex(path), DataError);
  WriteRaw(path, "");
  EXPECT_TRUE(BuildIndex(path).empty());
}

}  // namespace
}  // namespace imgpipe
