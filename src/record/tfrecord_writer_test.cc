#include "record/tfrecord_writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "record/crc32c.h"
#include "record/record_test_util.h"
#include "record/tfrecord_format.h"
#include "record/tfrecord_reader.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe {
namespace {

using testing::RandomBytes;
using testing::ReadRecords;
using testing::TempDir;
using testing::WriteRecords;

// Records of sizes 0, 1, a few MB, and around the reader's 1 MiB buffer, among others.
std::vector<std::string> MixedRecords() {
  std::vector<size_t> sizes = {0,      1,      5 << 20, 0,      100,   1048560, 1048561, 1,
                               300000, 300000, 300000,  300000, 65536, 12,      16};
  std::vector<std::string> records;
  for (size_t i = 0; i < sizes.size(); ++i) {
    records.push_back(RandomBytes(sizes[i], static_cast<uint32_t>(i)));
  }
  return records;
}

TEST(TfRecordWriterTest, WritesTheDocumentedFraming) {
  TempDir dir;
  std::string path = dir.File("abc.tfrecord");
  std::vector<IndexEntry> entries = WriteRecords(path, {"abc", ""});
  std::string bytes = ReadFile(path);
  ASSERT_EQ(bytes.size(), 12u + 3 + 4 + 12 + 4);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x03\0\0\0\0\0\0\0", 8));
  EXPECT_EQ(tfrecord::DecodeFixed32(bytes.data() + 8),
            crc32c::Mask(crc32c::Value(bytes.data(), 8)));
  EXPECT_EQ(bytes.substr(12, 3), "abc");
  EXPECT_EQ(tfrecord::DecodeFixed32(bytes.data() + 15), crc32c::Mask(crc32c::Value("abc", 3)));
  EXPECT_EQ(bytes.substr(19, 8), std::string(8, '\0'));
  EXPECT_EQ(tfrecord::DecodeFixed32(bytes.data() + 31), crc32c::Mask(0));
  EXPECT_EQ(entries, (std::vector<IndexEntry>{{0, 19}, {19, 16}}));
}

TEST(TfRecordWriterTest, RoundTripsEveryCompression) {
  TempDir dir;
  std::vector<std::string> records = MixedRecords();
  for (Compression c : {Compression::kNone, Compression::kGzip, Compression::kZlib}) {
    SCOPED_TRACE(CompressionName(c));
    std::string path = dir.File(std::string("mixed.") + CompressionName(c));
    std::vector<IndexEntry> entries = WriteRecords(path, records, c);
    // 1. Entries are contiguous and frame each record.
    ASSERT_EQ(entries.size(), records.size());
    uint64_t offset = 0;
    for (size_t i = 0; i < entries.size(); ++i) {
      EXPECT_EQ(entries[i].offset, offset);
      EXPECT_EQ(entries[i].size, records[i].size() + 16);
      offset += entries[i].size;
    }
    // 2. The reader, with the compression detected, returns them at those offsets.
    TfRecordReaderStats stats;
    std::vector<uint64_t> offsets;
    TfRecordReader reader(path);
    EXPECT_EQ(reader.compression(), c);
    EXPECT_TRUE(ReadRecords(path, {}, &stats, &offsets) == records);
    for (size_t i = 0; i < entries.size(); ++i) EXPECT_EQ(offsets[i], entries[i].offset);
    EXPECT_EQ(stats.records, records.size());
    EXPECT_EQ(stats.data_bytes, offset - 16 * records.size());
    // 3. Uncompressed files: the index matches a scan, and random access works.
    if (c == Compression::kNone) {
      EXPECT_EQ(FileSize(path), offset);
      EXPECT_EQ(BuildIndex(path), entries);
      for (size_t i = 0; i < entries.size(); ++i) {
        EXPECT_TRUE(ReadTfRecordAt(path, entries[i].offset) == records[i]) << i;
      }
    }
  }
}

TEST(TfRecordWriterTest, CloseLeavesSinkOpenAndBlocksWrites) {
  TempDir dir;
  std::string path = dir.File("two.tfrecord");
  auto file = OpenWritableFile(path);
  TfRecordWriter writer(*file, Compression::kNone);
  writer.Write("first");
  EXPECT_EQ(writer.bytes_written(), 21u);
  writer.Close();
  writer.Close();  // idempotent
  EXPECT_THROW(writer.Write("late"), Error);
  // The sink is still its owner's: a second writer appends after the first.
  TfRecordWriter second(*file, Compression::kNone);
  second.Write("second");
  second.Close();
  file->Close();
  EXPECT_EQ(ReadRecords(path), (std::vector<std::string>{"first", "second"}));
}

TEST(TfRecordWriterTest, DestructorEndsTheCompressedStream) {
  TempDir dir;
  std::string path = dir.File("d.tfrecord.gz");
  auto file = OpenWritableFile(path);
  {
    TfRecordWriter writer(*file, Compression::kGzip);
    writer.Write("kept");
  }
  file->Close();
  EXPECT_EQ(ReadRecords(path), std::vector<std::string>{"kept"});
}

}  // namespace
}  // namespace imgpipe
