#include "record/tfrecord_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "io/byte_source.h"
#include "record/crc32c.h"
#include "record/example.h"
#include "record/record_test_util.h"
#include "record/tfrecord_format.h"
#include "util/error.h"
#include "util/file.h"
#include "util/logging.h"
#include "testing/unprivileged_test_util.h"

namespace imgpipe {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::RandomBytes;
using testing::ReadRecords;
using testing::TempDir;
using testing::TestdataPath;
using testing::WriteRaw;
using testing::WriteRecords;

TfRecordReaderOptions SkipOptions() {
  TfRecordReaderOptions options;
  options.policy = ErrorPolicy::kSkip;
  return options;
}

// Reads `path` under kFail, expecting a DataError; returns it.
DataError ReadExpectingDataError(const std::string& path, TfRecordReaderOptions options = {}) {
  try {
    ReadRecords(path, options);
  } catch (const DataError& e) {
    EXPECT_EQ(e.path(), path);
    EXPECT_THAT(e.what(), HasSubstr(path));
    return e;
  }
  ADD_FAILURE() << "no DataError for " << path;
  return DataError(path, std::nullopt, "none");
}

std::vector<float> Floats(const Features& features, const std::string& key) {
  const auto& list = features.feature().at(key).float_list().value();
  return {list.begin(), list.end()};
}

std::vector<int64_t> Int64s(const Features& features, const std::string& key) {
  const auto& list = features.feature().at(key).int64_list().value();
  return {list.begin(), list.end()};
}

// ---- Files TensorFlow wrote -------------------------------------------------------------

TEST(TfRecordReaderTest, ReadsTensorFlowExamples) {
  std::string path = TestdataPath("tfrecord/pytorch-data/example.tfrecord");
  TfRecordReader reader(path);
  EXPECT_EQ(reader.compression(), Compression::kNone);
  std::string record;
  uint64_t expected_offset = 0;
  int i = 0;
  for (; reader.Next(&record); ++i) {
    EXPECT_EQ(reader.record_offset(), expected_offset);
    expected_offset += 16 + record.size();
    Example example = ParseExample(record, path, reader.record_offset());
    const Features& f = example.features();
    EXPECT_THAT(DescribeFeatures(f), ElementsAre(FeatureDescription{"x_byte", "bytes", 1, 0},
                                                 FeatureDescription{"x_float", "float", 10, 0},
                                                 FeatureDescription{"x_int", "int64", 10, 0}));
    std::vector<float> floats = Floats(f, "x_float");
    std::vector<int64_t> ints = Int64s(f, "x_int");
    for (int j = 0; j < 10; ++j) {
      EXPECT_EQ(floats[j], static_cast<float>(10 * i + j));
      EXPECT_EQ(ints[j], 100 * i + 10 * j);
    }
    EXPECT_EQ(GetBytesFeature(f, "x_byte"), "test str");
    EXPECT_EQ(GetInt64Feature(f, "x_int"), 100 * i);
  }
  EXPECT_EQ(i, 4);
  EXPECT_EQ(expected_offset, FileSize(path));
  EXPECT_EQ(reader.stats().records, 4u);
  EXPECT_EQ(reader.stats().corrupt, 0u);
}

TEST(TfRecordReaderTest, ReadsTensorFlowSequenceExamples) {
  std::string path = TestdataPath("tfrecord/pytorch-data/sequence_example.tfrecord");
  std::vector<std::string> records = ReadRecords(path);
  ASSERT_EQ(records.size(), 4u);
  for (size_t i = 0; i < records.size(); ++i) {
    SequenceExample example = ParseSequenceExample(records[i], path, 0);
    EXPECT_THAT(DescribeFeatures(example.context()),
                ElementsAre(FeatureDescription{"x_byte", "bytes", 1, 0},
                            FeatureDescription{"x_float", "float", 10, 0},
                            FeatureDescription{"x_int", "int64", 10, 0}));
    std::vector<FeatureDescription> lists = DescribeFeatureLists(example.feature_lists());
    ASSERT_EQ(lists.size(), 3u);
    size_t steps = 2 * i + 3;
    EXPECT_EQ(lists[0], (FeatureDescription{"x_byte_seq", "bytes", steps, steps}));
    EXPECT_EQ(lists[1].key, "x_float_seq");
    EXPECT_EQ(lists[1].kind, "float");
    EXPECT_EQ(lists[2].key, "x_int_seq");
    EXPECT_EQ(lists[2].kind, "int64");
    for (const auto& step : example.feature_lists().feature_list().at("x_byte_seq").feature()) {
      EXPECT_EQ(step.bytes_list().value(0), "test str");
    }
  }
}

TEST(TfRecordReaderTest, ReadsMnist) {
  std::string path = TestdataPath("tfrecord/tfx/mnist.tfrecord");
  TfRecordReader reader(path);
  std::string record;
  std::vector<int64_t> classes;
  while (reader.Next(&record)) {
    Example example = ParseExample(record, path, reader.record_offset());
    const Features& f = example.features();
    ASSERT_EQ(f.feature().at("image_floats").float_list().value_size(), 784);
    for (float v : f.feature().at("image_floats").float_list().value()) {
      ASSERT_GE(v, -0.5f);
      ASSERT_LE(v, 0.5f);
    }
    ASSERT_EQ(f.feature().at("image_class").int64_list().value_size(), 1);
    classes.push_back(*GetInt64Feature(f, "image_class"));
  }
  ASSERT_EQ(classes.size(), 1000u);
  EXPECT_THAT(std::vector<int64_t>(classes.begin(), classes.begin() + 10),
              ElementsAre(9, 3, 6, 1, 8, 2, 2, 3, 5, 7));
  EXPECT_EQ(std::set<int64_t>(classes.begin(), classes.end()).size(), 10u);
  EXPECT_EQ(*std::min_element(classes.begin(), classes.end()), 0);
  EXPECT_EQ(*std::max_element(classes.begin(), classes.end()), 9);
  EXPECT_EQ(reader.stats().data_bytes + 16 * 1000, FileSize(path));
}

TEST(TfRecordReaderTest, ReadsGzipPenguinsDetected) {
  std::string path = TestdataPath("tfrecord/tfx/penguin-train-00000-of-00001.gz");
  TfRecordReader reader(path);
  EXPECT_EQ(reader.compression(), Compression::kGzip);
  std::string record;
  std::set<int64_t> species;
  uint64_t expected_offset = 0;
  int n = 0;
  for (; reader.Next(&record); ++n) {
    EXPECT_EQ(reader.record_offset(), expected_offset);
    expected_offset += 16 + record.size();
    Example example = ParseExample(record, path, reader.record_offset());
    EXPECT_THAT(DescribeFeatures(example.features()),
                ElementsAre(FeatureDescription{"body_mass_g", "float", 1, 0},
                            FeatureDescription{"culmen_depth_mm", "float", 1, 0},
                            FeatureDescription{"culmen_length_mm", "float", 1, 0},
                            FeatureDescription{"flipper_length_mm", "float", 1, 0},
                            FeatureDescription{"species", "int64", 1, 0}));
    if (n == 0) {
      EXPECT_EQ(*GetInt64Feature(example.features(), "species"), 0);
      EXPECT_FLOAT_EQ(Floats(example.features(), "culmen_length_mm")[0], 0.2545454502105713f);
    }
    species.insert(*GetInt64Feature(example.features(), "species"));
  }
  EXPECT_EQ(n, 234);
  EXPECT_EQ(species, (std::set<int64_t>{0, 1, 2}));
  // The same with the compression given, and as an uncompressed file it is corrupt.
  TfRecordReaderOptions gzip;
  gzip.compression = Compression::kGzip;
  EXPECT_EQ(ReadRecords(path, gzip).size(), 234u);
  TfRecordReaderOptions none;
  none.compression = Compression::kNone;
  DataError e = ReadExpectingDataError(path, none);
  EXPECT_EQ(e.offset(), 0u);
  EXPECT_EQ(e.reason(), "length CRC mismatch");
}

// ---- Damaged files ----------------------------------------------------------------------

struct Fixture {
  TempDir dir;
  std::string path = dir.File("data.tfrecord");
  std::vector<std::string> records;
  std::vector<IndexEntry> entries;
  std::string bytes;

  explicit Fixture(std::vector<size_t> sizes) {
    for (size_t i = 0; i < sizes.size(); ++i) {
      records.push_back(RandomBytes(sizes[i], static_cast<uint32_t>(i + 100)));
    }
    entries = WriteRecords(path, records);
    bytes = ReadFile(path);
  }
};

TEST(TfRecordReaderTest, DataCrcMismatch) {
  Fixture fx({10, 500, 20, 3000, 7});
  std::string bad = fx.bytes;
  bad[fx.entries[1].offset + 12 + 250] ^= 0x01;
  WriteRaw(fx.path, bad);
  // 1. kFail names the record's offset.
  DataError e = ReadExpectingDataError(fx.path);
  EXPECT_EQ(e.offset(), fx.entries[1].offset);
  EXPECT_EQ(e.reason(), "data CRC mismatch");
  EXPECT_THAT(e.what(), HasSubstr("offset " + std::to_string(fx.entries[1].offset)));
  // 2. kSkip returns the others and counts the bad one.
  TfRecordReaderStats stats;
  std::vector<uint64_t> offsets;
  std::vector<std::string> got = ReadRecords(fx.path, SkipOptions(), &stats, &offsets);
  EXPECT_THAT(got, ElementsAre(fx.records[0], fx.records[2], fx.records[3], fx.records[4]));
  EXPECT_THAT(offsets, ElementsAre(fx.entries[0].offset, fx.entries[2].offset, fx.entries[3].offset,
                                   fx.entries[4].offset));
  EXPECT_EQ(stats.records, 4u);
  EXPECT_EQ(stats.corrupt, 1u);
  EXPECT_EQ(stats.crc_errors, 1u);
  EXPECT_EQ(stats.skipped_bytes, fx.entries[1].size);
  ASSERT_EQ(stats.errors.size(), 1u);
  EXPECT_EQ(stats.errors[0].offset, fx.entries[1].offset);
  EXPECT_EQ(stats.errors[0].reason, "data CRC mismatch");
  // 3. Without data CRC checks the damaged record comes back as it is.
  TfRecordReaderOptions unchecked;
  unchecked.verify_data_crc = false;
  got = ReadRecords(fx.path, unchecked);
  ASSERT_EQ(got.size(), 5u);
  EXPECT_NE(got[1], fx.records[1]);
  EXPECT_EQ(got[3], fx.records[3]);
}

// A byte source (here in memory, named as a URL) reads as the file does: TensorFlow's gzip
// shard detected and read whole, and a damaged record named by the source and offset,
// sequentially and at random.
TEST(TfRecordReaderTest, ReadsFromAByteSource) {
  const std::string path = TestdataPath("tfrecord/tfx/penguin-train-00000-of-00001.gz");
  const std::string url = "https://example.test/penguins.gz";
  TfRecordReader gzip(MakeMemoryByteSource(url, ReadFile(path)));
  EXPECT_EQ(gzip.compression(), Compression::kGzip);
  EXPECT_EQ(gzip.path(), url);
  std::vector<std::string> from_source;
  for (std::string record; gzip.Next(&record);) from_source.push_back(record);
  EXPECT_EQ(from_source, ReadRecords(path));

  Fixture fx({10, 500, 20});
  std::string bad = fx.bytes;
  bad[fx.entries[1].offset + 12 + 100] ^= 0x01;
  try {
    TfRecordReader reader(MakeMemoryByteSource(url, bad));
    for (std::string record; reader.Next(&record);) {
    }
    ADD_FAILURE() << "no DataError";
  } catch (const DataError& e) {
    EXPECT_EQ(e.path(), url);
    EXPECT_EQ(e.offset(), fx.entries[1].offset);
  }
  TfRecordRandomReader random(MakeMemoryByteSource(url, bad), 64);
  EXPECT_EQ(random.path(), url);
  EXPECT_EQ(random.size(), bad.size());
  EXPECT_EQ(random.ReadAt(fx.entries[2].offset), fx.records[2]);
  try {
    random.ReadAt(fx.entries[1].offset);
    ADD_FAILURE() << "no DataError";
  } catch (const DataError& e) {
    EXPECT_EQ(e.path(), url);
    EXPECT_EQ(e.reason(), "data CRC mismatch");
  }
}

TEST(TfRecordReaderTest, LengthCrcMismatchResynchronises) {
  Fixture fx({100, 200, 300, 400, 2000000, 50});
  // Damage the length, then the length CRC, of each record in turn.
  for (size_t k = 0; k < fx.records.size(); ++k) {
    for (size_t byte : {size_t{0}, size_t{5}, size_t{9}}) {
      SCOPED_TRACE("record " + std::to_string(k) + " byte " + std::to_string(byte));
      std::string bad = fx.bytes;
      bad[fx.entries[k].offset + byte] ^= 0x40;
      WriteRaw(fx.path, bad);
      DataError e = ReadExpectingDataError(fx.path);
      EXPECT_EQ(e.offset(), fx.entries[k].offset);
      EXPECT_EQ(e.reason(), "length CRC mismatch");

      TfRecordReaderStats stats;
      std::vector<uint64_t> offsets;
      std::vector<std::string> got = ReadRecords(fx.path, SkipOptions(), &stats, &offsets);
      std::vector<std::string> expected = fx.records;
      expected.erase(expected.begin() + static_cast<ptrdiff_t>(k));
      EXPECT_TRUE(got == expected);
      EXPECT_EQ(stats.corrupt, 1u);
      EXPECT_EQ(stats.crc_errors, 1u);
      EXPECT_EQ(stats.skipped_bytes, fx.entries[k].size);
      ASSERT_EQ(stats.errors.size(), 1u);
      EXPECT_EQ(stats.errors[0].offset, fx.entries[k].offset);
      if (k + 1 < fx.entries.size()) {
        EXPECT_EQ(offsets[k], fx.entries[k + 1].offset);
      }
    }
  }
}

TEST(TfRecordReaderTest, GarbageBetweenRecordsIsSkipped) {
  Fixture fx({1000, 1500, 2500});
  std::string junk = RandomBytes(777, 9);
  std::string damaged =
      fx.bytes.substr(0, fx.entries[1].offset) + junk + fx.bytes.substr(fx.entries[1].offset);
  WriteRaw(fx.path, damaged);
  TfRecordReaderStats stats;
  std::vector<uint64_t> offsets;
  EXPECT_EQ(ReadRecords(fx.path, SkipOptions(), &stats, &offsets), fx.records);
  EXPECT_EQ(stats.corrupt, 1u);
  EXPECT_EQ(stats.skipped_bytes, junk.size());
  EXPECT_THAT(offsets, ElementsAre(0, fx.entries[1].offset + junk.size(),
                                   fx.entries[2].offset + junk.size()));
  DataError e = ReadExpectingDataError(fx.path);
  EXPECT_EQ(e.offset(), fx.entries[1].offset);
}

TEST(TfRecordReaderTest, CountsEveryCorruptRecord) {
  std::vector<size_t> sizes(40, 64);
  Fixture fx(sizes);
  std::string bad = fx.bytes;
  for (size_t k = 0; k < sizes.size(); k += 2) bad[fx.entries[k].offset + 12] ^= 0x80;
  WriteRaw(fx.path, bad);
  TfRecordReaderStats stats;
  EXPECT_EQ(ReadRecords(fx.path, SkipOptions(), &stats).size(), 20u);
  EXPECT_EQ(stats.corrupt, 20u);
  EXPECT_EQ(stats.errors.size(), 20u);
  EXPECT_EQ(stats.errors[19].offset, fx.entries[38].offset);
}

// The records of `bytes` read from memory, where the reader's buffer is only as large as
// the source (at least 4 KiB); fills *stats.
std::vector<std::string> ReadFromMemory(const std::string& name, std::string bytes, TfRecordReaderOptions options,
                                        TfRecordReaderStats* stats) {
  TfRecordReader reader(MakeMemoryByteSource(name, std::move(bytes)), options);
  std::vector<std::string> records;
  for (std::string record; reader.Next(&record);) records.push_back(record);
  *stats = reader.stats();
  return records;
}

// Every cut point of a file of small records, and of one with a record larger than the
// read buffer; read from the file and from memory alike.
void CheckTruncation(const Fixture& fx, const std::vector<size_t>& cuts) {
  // Hundreds of expected warnings would bury the test output.
  LogLevel level = GetLogLevel();
  SetLogLevel(LogLevel::kError);
  for (size_t cut : cuts) {
    SCOPED_TRACE("cut " + std::to_string(cut));
    WriteRaw(fx.path, fx.bytes.substr(0, cut));
    // The record the cut falls in, or none when it falls on a boundary.
    size_t complete = 0;
    while (complete < fx.entries.size() &&
           fx.entries[complete].offset + fx.entries[complete].size <= cut) {
      ++complete;
    }
    bool on_boundary = complete == fx.entries.size() || fx.entries[complete].offset == cut;
    std::vector<std::string> expected(fx.records.begin(),
                                      fx.records.begin() + static_cast<ptrdiff_t>(complete));
    if (on_boundary) {
      EXPECT_TRUE(ReadRecords(fx.path) == expected);
    } else {
      const IndexEntry& cut_entry = fx.entries[complete];
      uint64_t expected_bytes = cut - cut_entry.offset < 12 ? 12 : cut_entry.size;
      DataError e = ReadExpectingDataError(fx.path);
      EXPECT_EQ(e.offset(), cut_entry.offset);
      EXPECT_EQ(e.reason(), "truncated record (expected " + std::to_string(expected_bytes) +
                                " bytes, file ends after " +
                                std::to_string(cut - cut_entry.offset) + ")");
    }
    TfRecordReaderStats stats;
    EXPECT_TRUE(ReadRecords(fx.path, SkipOptions(), &stats) == expected);
    EXPECT_EQ(stats.corrupt, on_boundary ? 0u : 1u);
    EXPECT_EQ(stats.crc_errors, 0u);
    EXPECT_EQ(stats.skipped_bytes, on_boundary ? 0 : cut - fx.entries[complete].offset);
    // From memory: the same records, errors and counts.
    TfRecordReaderStats memory_stats;
    EXPECT_TRUE(ReadFromMemory(fx.path, fx.bytes.substr(0, cut), SkipOptions(), &memory_stats) == expected);
    EXPECT_EQ(memory_stats.corrupt, stats.corrupt);
    EXPECT_EQ(memory_stats.skipped_bytes, stats.skipped_bytes);
    try {
      EXPECT_TRUE(ReadFromMemory(fx.path, fx.bytes.substr(0, cut), {}, &memory_stats) == expected);
      EXPECT_TRUE(on_boundary);
    } catch (const DataError& e) {
      EXPECT_FALSE(on_boundary);
      const DataError from_file = ReadExpectingDataError(fx.path);
      EXPECT_EQ(e.offset(), from_file.offset());
      EXPECT_EQ(e.reason(), from_file.reason());
    }
  }
  SetLogLevel(level);
}

TEST(TfRecordReaderTest, TruncatedAtEveryCutPoint) {
  Fixture fx({0, 1, 30, 17, 64});
  std::vector<size_t> cuts;
  for (size_t cut = 0; cut <= fx.bytes.size(); ++cut) cuts.push_back(cut);
  CheckTruncation(fx, cuts);
}

TEST(TfRecordReaderTest, TruncatedLargeRecords) {
  // Records larger than the 1 MiB read buffer, and ones that straddle its end.
  Fixture fx({700000, 3000000, 1048560, 1048561, 10});
  std::vector<size_t> cuts;
  for (const IndexEntry& e : fx.entries) {
    for (uint64_t into : {uint64_t{0}, uint64_t{5}, uint64_t{12}, uint64_t{13}, e.size / 3,
                          e.size - 4, e.size - 1}) {
      cuts.push_back(e.offset + into);
    }
  }
  cuts.push_back(fx.bytes.size());
  for (size_t cut : {size_t{1} << 20, (size_t{1} << 20) + 1, size_t{2} << 20, size_t{3} << 20}) {
    cuts.push_back(cut);
  }
  CheckTruncation(fx, cuts);
}

TEST(TfRecordReaderTest, TruncatedGzipFile) {
  TempDir dir;
  std::string path = dir.File("data.tfrecord.gz");
  std::vector<std::string> records;
  for (int i = 0; i < 50; ++i) records.push_back(RandomBytes(2000, i));
  WriteRecords(path, records, Compression::kGzip);
  std::string bytes = ReadFile(path);
  for (size_t cut : {bytes.size() / 2, bytes.size() - 1, bytes.size() - 9}) {
    SCOPED_TRACE("cut " + std::to_string(cut));
    WriteRaw(path, bytes.substr(0, cut));
    DataError e = ReadExpectingDataError(path);
    EXPECT_THAT(e.reason(), HasSubstr("truncated"));
    TfRecordReaderStats stats;
    std::vector<std::string> got = ReadRecords(path, SkipOptions(), &stats);
    EXPECT_EQ(stats.corrupt, 1u);
    ASSERT_LE(got.size(), records.size());
    EXPECT_TRUE(got == std::vector<std::string>(
                           records.begin(), records.begin() + static_cast<ptrdiff_t>(got.size())));
    // Every record whose bytes were all in the part that survived comes back.
    EXPECT_GE(got.size(), cut == bytes.size() / 2 ? 1u : 49u);
    EXPECT_THAT(stats.errors[0].reason, HasSubstr("gzip"));
  }
}

TEST(TfRecordReaderTest, ZeroLengthFileIsEmpty) {
  TempDir dir;
  std::string path = dir.File("empty.tfrecord");
  WriteRaw(path, "");
  TfRecordReaderStats stats;
  EXPECT_TRUE(ReadRecords(path, {}, &stats).empty());
  EXPECT_EQ(stats.corrupt, 0u);
  TfRecordReaderOptions gzip;
  gzip.compression = Compression::kGzip;
  EXPECT_TRUE(ReadRecords(path, gzip).empty());
}

TEST(TfRecordReaderTest, DirectoryAndMissingPathThrowIoError) {
  TempDir dir;
  for (const std::string& path : {dir.path(), dir.File("missing.tfrecord")}) {
    for (std::optional<Compression> c :
         {std::optional<Compression>(), std::optional(Compression::kNone)}) {
      TfRecordReaderOptions options;
      options.compression = c;
      try {
        ReadRecords(path, options);
        ADD_FAILURE() << "no error for " << path;
      } catch (const IoError& e) {
        EXPECT_THAT(e.what(), HasSubstr(path));
      }
    }
    EXPECT_THROW(ReadTfRecordAt(path, 0), IoError);
  }
}

// A file the reader may not open: an IoError naming the path, under either policy and
// for random access. A readable copy beside it is read by the same unprivileged child,
// so the error comes from the file's mode and not from the folder.
TEST(TfRecordReaderTest, UnreadableFileThrowsIoErrorNamingThePath) {
  TempDir dir;
  MakeWritableByAnyone(dir.path());
  std::string readable = dir.File("readable.tfrecord");
  std::string unreadable = dir.File("unreadable.tfrecord");
  WriteRecords(readable, {"a", "bb"});
  WriteRecords(unreadable, {"a", "bb"});
  MakeUnreadable(unreadable);
  UnprivilegedResult r = RunUnprivileged([&](std::string* message) {
    if (ReadRecords(readable).size() != 2) return 1;
    int errors = 0;
    for (TfRecordReaderOptions options : {TfRecordReaderOptions(), SkipOptions()}) {
      try {
        ReadRecords(unreadable, options);
      } catch (const IoError& e) {
        *message = e.what();
        errors += e.error_number() == EACCES;
      }
    }
    try {
      ReadTfRecordAt(unreadable, 0);
    } catch (const IoError& e) {
      errors += e.error_number() == EACCES;
    }
    return errors == 3 ? 0 : 2;
  });
  EXPECT_EQ(r.status, 0) << r.message;
  EXPECT_EQ(r.message, unreadable + ": open: Permission denied");
}

TEST(TfRecordReaderTest, GarbageFile) {
  TempDir dir;
  std::string path = dir.File("garbage.tfrecord");
  std::string garbage = RandomBytes(100000, 77);
  WriteRaw(path, garbage);
  DataError e = ReadExpectingDataError(path);
  EXPECT_EQ(e.offset(), 0u);
  EXPECT_EQ(e.reason(), "length CRC mismatch");
  TfRecordReaderStats stats;
  EXPECT_TRUE(ReadRecords(path, SkipOptions(), &stats).empty());
  EXPECT_EQ(stats.corrupt, 1u);
  EXPECT_EQ(stats.skipped_bytes, garbage.size());
}

TEST(TfRecordReaderTest, LengthOverLimit) {
  TempDir dir;
  std::string path = dir.File("huge.tfrecord");
  std::string bytes(12, '\0');
  tfrecord::EncodeHeader(tfrecord::kMaxRecordLength + 1, bytes.data());
  WriteRaw(path, bytes + std::string(100, 'x'));
  DataError e = ReadExpectingDataError(path);
  EXPECT_EQ(e.offset(), 0u);
  EXPECT_THAT(e.reason(), HasSubstr("record length 4294967297 exceeds limit"));
  TfRecordReaderStats stats;
  EXPECT_TRUE(ReadRecords(path, SkipOptions(), &stats).empty());
  EXPECT_EQ(stats.corrupt, 1u);
  EXPECT_EQ(stats.crc_errors, 0u);
  EXPECT_THROW(ReadTfRecordAt(path, 0), DataError);
}

// A length within the limit but far beyond the file's end is a truncated record; the
// reader finds out without allocating the whole length.
TEST(TfRecordReaderTest, LengthBeyondTheEndOfTheFile) {
  TempDir dir;
  std::string path = dir.File("long.tfrecord");
  std::string bytes(12, '\0');
  uint64_t length = tfrecord::kMaxRecordLength - 10;
  tfrecord::EncodeHeader(length, bytes.data());
  bytes += RandomBytes(3 << 20, 5);
  WriteRaw(path, bytes);
  std::string expected = "truncated record (expected " + std::to_string(length + 16) +
                         " bytes, file ends after " + std::to_string(bytes.size()) + ")";
  EXPECT_EQ(ReadExpectingDataError(path).reason(), expected);
  TfRecordReaderStats stats;
  EXPECT_TRUE(ReadRecords(path, SkipOptions(), &stats).empty());
  EXPECT_EQ(stats.corrupt, 1u);
  EXPECT_EQ(stats.skipped_bytes, bytes.size());
  try {
    ReadTfRecordAt(path, 0);
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_EQ(e.reason(), expected);
  }
}

// ---- Random access -----------------------------------------------------------------------

TEST(TfRecordReaderTest, ReadTfRecordAt) {
  Fixture fx({0, 5, 3000000, 40});
  for (size_t i = 0; i < fx.entries.size(); ++i) {
    EXPECT_EQ(ReadTfRecordAt(fx.path, fx.entries[i].offset), fx.records[i]);
  }
  // 1. Not a record boundary.
  try {
    ReadTfRecordAt(fx.path, fx.entries[2].offset + 1);
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_EQ(e.path(), fx.path);
    EXPECT_EQ(e.offset(), fx.entries[2].offset + 1);
    EXPECT_EQ(e.reason(), "length CRC mismatch");
  }
  // 2. Past the end, and a truncated record.
  EXPECT_THROW(ReadTfRecordAt(fx.path, fx.bytes.size()), DataError);
  WriteRaw(fx.path, fx.bytes.substr(0, fx.entries[3].offset + 20));
  try {
    ReadTfRecordAt(fx.path, fx.entries[3].offset);
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_EQ(e.offset(), fx.entries[3].offset);
    EXPECT_EQ(e.reason(), "truncated record (expected 56 bytes, file ends after 20)");
  }
  // 3. A damaged record.
  std::string bad = fx.bytes;
  bad[fx.entries[1].offset + 13] ^= 1;
  WriteRaw(fx.path, bad);
  try {
    ReadTfRecordAt(fx.path, fx.entries[1].offset);
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_EQ(e.offset(), fx.entries[1].offset);
    EXPECT_EQ(e.reason(), "data CRC mismatch");
  }
}

// ReadTfRecordsAt gives, in the order asked, what ReadTfRecordAt gives for each location
// (of two files, out of order, one twice), and a bad location's DataError beside the
// good ones.
TEST(TfRecordReaderTest, ReadTfRecordsAtIsReadTfRecordAtForEach) {
  Fixture a({0, 5, 3000000, 40}), b({700, 20, 9});
  std::vector<RecordLocation> locations;
  std::vector<std::string> expected;
  for (size_t i : {3, 1, 2, 0, 1}) {
    locations.push_back({a.path, a.entries[i].offset, a.records[i].size()});
    expected.push_back(a.records[i]);
  }
  for (size_t i : {2, 0}) {
    locations.push_back({b.path, b.entries[i].offset, b.records[i].size()});
    expected.push_back(b.records[i]);
  }
  locations.push_back({b.path, b.entries[1].offset + 1, 20});  // not a record boundary
  const std::vector<RecordAt> read = ReadTfRecordsAt(locations);
  ASSERT_EQ(read.size(), locations.size());
  for (size_t k = 0; k < expected.size(); ++k) {
    ASSERT_FALSE(read[k].error) << k;
    EXPECT_EQ(read[k].data, expected[k]) << k;
    EXPECT_EQ(read[k].data_crc, crc32c::Value(expected[k].data(), expected[k].size())) << k;
  }
  ASSERT_TRUE(read.back().error);
  try {
    std::rethrow_exception(read.back().error);
  } catch (const DataError& e) {
    EXPECT_EQ(e.path(), b.path);
    EXPECT_EQ(e.offset(), b.entries[1].offset + 1);
    EXPECT_EQ(e.reason(), "length CRC mismatch");
  }
  // A file that is not there: an IoError, not a record's error.
  EXPECT_THROW(ReadTfRecordsAt({{a.dir.File("missing.tfrecord"), 0, 1}}), IoError);
  EXPECT_TRUE(ReadTfRecordsAt({}).empty());
}

// record_crc() and ReadAt's data_crc give the CRC the reader checked, which equals the
// data's CRC32C: on TensorFlow's files (plain and GZIP) and on records larger than the
// read buffer; unchecked (verify_data_crc off), there is none.
TEST(TfRecordReaderTest, RecordCrcIsTheCheckedDataCrc) {
  Fixture fx({0, 5, 3000000, 1048561, 40});
  for (const std::string& path :
       {TestdataPath("tfrecord/tfx/mnist.tfrecord"),
        TestdataPath("tfrecord/tfx/penguin-train-00000-of-00001.gz"), fx.path}) {
    TfRecordReader reader(path);
    std::string record;
    int n = 0;
    for (; reader.Next(&record); ++n) {
      ASSERT_TRUE(reader.record_crc().has_value()) << path;
      EXPECT_EQ(*reader.record_crc(), crc32c::Value(record.data(), record.size())) << path;
    }
    EXPECT_GT(n, 0) << path;
  }
  TfRecordReaderOptions unchecked;
  unchecked.verify_data_crc = false;
  TfRecordReader reader(fx.path, unchecked);
  std::string record;
  ASSERT_TRUE(reader.Next(&record));
  EXPECT_FALSE(reader.record_crc().has_value());

  TfRecordRandomReader random(fx.path);
  for (size_t i = 0; i < fx.entries.size(); ++i) {
    uint32_t crc = 0;
    uint64_t end = 0;
    EXPECT_EQ(random.ReadAt(fx.entries[i].offset, &end, &crc), fx.records[i]);
    EXPECT_EQ(crc, crc32c::Value(fx.records[i].data(), fx.records[i].size()));
    EXPECT_EQ(end, fx.entries[i].offset + fx.entries[i].size);
    crc = 0;
    ReadTfRecordAt(fx.path, fx.entries[i].offset, &crc);
    EXPECT_EQ(crc, crc32c::Value(fx.records[i].data(), fx.records[i].size()));
  }
}

}  // namespace
}  // namespace imgpipe
