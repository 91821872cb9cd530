#include "pipeline/source_datasets.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "pipeline/pipeline_test_util.h"
#include "pipeline/source_test_util.h"
#include "pipeline/vector_dataset.h"
#include "record/crc32c.h"
#include "record/tfrecord_format.h"
#include "record/tfrecord_reader.h"
#include "util/error.h"
#include "util/file.h"
#include "testing/unprivileged_test_util.h"

namespace imgpipe::pipeline {
namespace {

const std::string kExample = "tfrecord/pytorch-data/example.tfrecord";
const std::string kMnist = "tfrecord/tfx/mnist.tfrecord";
const std::string kPenguin = "tfrecord/tfx/penguin-train-00000-of-00001.gz";
const std::string kPhotos = "images/photos-by-class";

PipelineOptions FailOptions() {
  PipelineOptions options;
  options.error_policy = ErrorPolicy::kFail;
  return options;
}

// ---------------------------------------------------------------------------------
// ListFiles

TEST(SourceDatasetsTest, ListFilesSortsDeduplicatesAndLeavesOutFolders) {
  std::string dir = TestTempPath("list");
  MakeDirectories(JoinPath(dir, "sub.tfrecord"));
  for (const char* name : {"c.tfrecord", "a.tfrecord", "b.txt", "b.tfrecord"}) {
    WriteFileAtomic(JoinPath(dir, name), "x");
  }
  auto files = Collect(
      ListFiles({JoinPath(dir, "*.tfrecord"), JoinPath(dir, "a.*"), JoinPath(dir, "missing-*")}));
  EXPECT_EQ(files,
            (std::vector<std::string>{JoinPath(dir, "a.tfrecord"), JoinPath(dir, "b.tfrecord"),
                                      JoinPath(dir, "c.tfrecord")}));
}

TEST(SourceDatasetsTest, ListFilesWithNoMatchThrowsNamingThePatterns) {
  std::string pattern = TestTempPath("nothing") + "/*.tfrecord";
  try {
    ListFiles({pattern});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no files match"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(pattern), std::string::npos) << e.what();
  }
  EXPECT_THROW(ListFiles({}), Error);
}

TEST(SourceDatasetsTest, ListFilesShufflesEachEpochFromTheSeed) {
  std::string dir = TestTempPath("shuffle");
  std::vector<std::string> sorted = WriteRecordFolder(dir, std::vector<size_t>(20, 1), 0);
  auto run = [&](std::optional<uint64_t> seed, uint64_t epoch, uint64_t options_seed = 0) {
    PipelineOptions options;
    options.seed = options_seed;
    IteratorContext ctx = MakeTestContext(options);
    ctx.epoch = epoch;
    return Drain(ListFiles({dir + "/*.tfrecord"}, true, seed)->MakeIterator(ctx));
  };
  std::vector<std::string> e0 = run(7, 0), e1 = run(7, 1);
  EXPECT_EQ(e0, run(7, 0));
  EXPECT_NE(e0, e1);
  EXPECT_NE(e0, sorted);
  EXPECT_NE(e0, run(8, 0));
  // Default seed: the pipeline's.
  EXPECT_EQ(run(std::nullopt, 0, 7), e0);
  for (auto* order : {&e0, &e1}) {
    std::vector<std::string> copy = *order;
    std::sort(copy.begin(), copy.end());
    EXPECT_EQ(copy, sorted);
  }
  // Unshuffled: sorted in every epoch.
  IteratorContext ctx = MakeTestContext();
  ctx.epoch = 3;
  EXPECT_EQ(Drain(ListFiles({dir + "/*.tfrecord"})->MakeIterator(ctx)), sorted);
}

TEST(SourceDatasetsTest, ListFilesSaveRestoreAtEveryCut) {
  std::string dir = TestTempPath("list_state");
  WriteRecordFolder(dir, std::vector<size_t>(9, 1), 0);
  auto reference =
      CheckSaveRestoreAtEveryCut([&] { return ListFiles({dir + "/*"}, true, 3); }, 100);
  EXPECT_EQ(reference.size(), 9u);
}

// ---------------------------------------------------------------------------------
// TfRecordFiles

TEST(SourceDatasetsTest, TfRecordFilesCountsRealFiles) {
  struct Case {
    std::string file;
    size_t count;
    RecordOrigin origin;
  };
  for (const Case& c :
       {Case{kExample, 4, RecordOrigin::kTfRecord}, Case{kMnist, 1000, RecordOrigin::kTfRecord},
        Case{kPenguin, 234, RecordOrigin::kValue}}) {
    SCOPED_TRACE(c.file);
    std::string path = TestdataFile(c.file);
    IteratorContext ctx = MakeTestContext();
    auto it = TfRecordFiles(ListFiles({path}))->MakeIterator(ctx);
    std::vector<Record> records = Drain(it);
    ASSERT_EQ(records.size(), c.count);
    // The same records and offsets as the reader gives.
    TfRecordReader reader(path);
    std::string data;
    for (const Record& r : records) {
      ASSERT_TRUE(reader.Next(&data));
      EXPECT_EQ(r.data, data);
      EXPECT_EQ(r.offset, reader.record_offset());
      EXPECT_EQ(r.source, path);
      EXPECT_EQ(r.origin, c.origin);
      EXPECT_EQ(r.label, -1);
    }
    StageSnapshot stats = StatsOf(ctx, "tfrecord");
    EXPECT_EQ(stats.elements, c.count);
    EXPECT_EQ(stats.errors, 0u);
    EXPECT_GT(stats.bytes, 0u);
  }
}

TEST(SourceDatasetsTest, TfRecordFilesReadsFileAfterFile) {
  std::string dir = TestTempPath("files");
  std::vector<size_t> counts = {3, 0, 5, 1};
  WriteRecordFolder(dir, counts, 0);
  std::vector<std::string> want;
  for (size_t f = 0; f < counts.size(); ++f) {
    for (size_t r = 0; r < counts[f]; ++r) want.push_back(RecordText(f, r));
  }
  EXPECT_EQ(RecordData(Collect(TfRecordFiles(ListFiles({dir + "/*.tfrecord"})))), want);
  // All three real files: 4 + 1000 + 234.
  auto all = Collect(
      TfRecordFiles(ListFiles({TestdataFile("tfrecord/*/*.tfrecord"), TestdataFile(kPenguin)})));
  // example.tfrecord, sequence_example.tfrecord (4), mnist.tfrecord, penguin.
  EXPECT_EQ(all.size(), 4u + 4u + 1000u + 234u);
}

TEST(SourceDatasetsTest, TfRecordFilesSaveRestoreAtEveryCut) {
  std::string dir = TestTempPath("files_state");
  WriteRecordFolder(dir, {4, 0, 3, 2}, 0);
  WriteCompressedTfRecords(dir + "/part-04.tfrecord.gz", {"g0", "g1", "g2"}, Compression::kGzip);
  WriteCompressedTfRecords(dir + "/part-05.tfrecord.z", {"z0", "z1"}, Compression::kZlib);
  auto reference =
      CheckSaveRestoreAtEveryCut([&] { return TfRecordFiles(ListFiles({dir + "/part-*"})); }, 100);
  EXPECT_EQ(reference.size(), 14u);
}

TEST(SourceDatasetsTest, TfRecordFilesSaveRestoreOnRealGzipFile) {
  auto make = [] { return TfRecordFiles(ListFiles({TestdataFile(kPenguin)})); };
  std::vector<Record> all = Collect(make());
  ASSERT_EQ(all.size(), 234u);
  for (size_t cut : {1u, 117u, 233u, 234u}) {
    IteratorState state;
    {
      auto it = make()->MakeIterator(MakeTestContext());
      Drain(it, cut);
      it->Save(state);
    }
    auto it = make()->MakeIterator(MakeTestContext());
    it->Restore(IteratorState::Deserialize(state.Serialize()));
    std::vector<Record> rest = Drain(it);
    ASSERT_EQ(rest.size(), all.size() - cut) << "cut " << cut;
    for (size_t i = 0; i < rest.size(); ++i) EXPECT_EQ(rest[i].data, all[cut + i].data);
  }
}

// Each record a TFRecord source gives carries the data CRC its reader checked (read from
// the start, from a restored offset, by index), equal to the data's CRC32C; a record
// saved with it is encoded exactly as one without, and one decoded by reference has it.
void ExpectCheckedCrcs(const std::vector<Record>& records) {
  ASSERT_FALSE(records.empty());
  for (const Record& r : records) {
    ASSERT_TRUE(r.data_crc.has_value()) << r.source << " offset " << r.offset;
    EXPECT_EQ(*r.data_crc, crc32c::Value(r.data.data(), r.data.size())) << r.offset;
    StateEncoder with, without;
    ElementCodec<Record>::Encode(r, with);
    Record copy = r;
    copy.data_crc.reset();
    ElementCodec<Record>::Encode(copy, without);
    std::string encoded = with.Finish();
    EXPECT_EQ(encoded, without.Finish());
    StateDecoder decoder(encoded, "record");
    Record decoded = ElementCodec<Record>::Decode(decoder);
    EXPECT_EQ(decoded.data, r.data);
    // By reference (plain files) it is re-read and checked; by value (GZIP) it is not.
    if (r.origin == RecordOrigin::kTfRecord) {
      EXPECT_EQ(decoded.data_crc, r.data_crc);
    }
  }
}

TEST(SourceDatasetsTest, RecordsCarryTheirCheckedDataCrc) {
  for (const std::string& file : {kMnist, kPenguin}) {
    SCOPED_TRACE(file);
    auto make = [&] { return TfRecordFiles(ListFiles({TestdataFile(file)})); };
    ExpectCheckedCrcs(Collect(make(), 50));
    IteratorState state;
    {
      auto it = make()->MakeIterator(MakeTestContext());
      Drain(it, 7);
      it->Save(state);
    }
    auto it = make()->MakeIterator(MakeTestContext());
    it->Restore(state);  // mnist: read from the offset directly; penguin: re-read
    ExpectCheckedCrcs(Drain(it, 20));
  }
  ExpectCheckedCrcs(Collect(TfRecordRecordShard({TestdataFile(kMnist)}, 3, 1), 50));
}

// A file of 6 records whose record 2 has a damaged data byte; returns its path.
std::string WriteCorruptFile(const std::string& name) {
  std::string path = TestTempPath(name);
  std::vector<std::string> records;
  for (int i = 0; i < 6; ++i) records.push_back("record-" + std::to_string(i));
  std::vector<IndexEntry> entries = WriteTestTfRecords(path, records, true);
  FlipByte(path, entries[2].offset + tfrecord::kHeaderSize + 1);
  return path;
}

TEST(SourceDatasetsTest, TfRecordFilesCorruptRecordSkippedAndCountedOrFails) {
  std::string path = WriteCorruptFile("corrupt.tfrecord");
  // 1. Skip: the other five records, one error counted.
  IteratorContext ctx = MakeTestContext();
  std::vector<Record> records = Drain(TfRecordFiles(ListFiles({path}))->MakeIterator(ctx));
  EXPECT_EQ(RecordData(records),
            (std::vector<std::string>{"record-0", "record-1", "record-3", "record-4", "record-5"}));
  EXPECT_EQ(StatsOf(ctx, "tfrecord").errors, 1u);
  // 2. Fail: a DataError naming the file, after the good records before it.
  auto it = TfRecordFiles(ListFiles({path}))->MakeIterator(MakeTestContext(FailOptions()));
  EXPECT_EQ(it->Next()->data, "record-0");
  EXPECT_EQ(it->Next()->data, "record-1");
  try {
    it->Next();
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_EQ(e.path(), path);
    EXPECT_TRUE(e.offset().has_value());
  }
}

TEST(SourceDatasetsTest, TfRecordFilesSaveRestoreAroundCorruptRecords) {
  // Uncompressed (restored by seeking, falling back to the reader at the corrupt record)
  // and GZIP (restored by reading forward), both under kSkip.
  std::string plain = WriteCorruptFile("corrupt_state.tfrecord");
  std::string gzip = TestTempPath("corrupt_state.gz");
  {
    // The same damaged byte stream, compressed.
    std::string bytes = ReadFile(plain);
    std::unique_ptr<WritableFile> file = OpenWritableFile(gzip);
    std::unique_ptr<WritableFile> out = WrapCompressingFile(*file, Compression::kGzip);
    out->Append(bytes);
    out->Close();
    file->Close();
  }
  for (const std::string& path : {plain, gzip}) {
    SCOPED_TRACE(path);
    auto reference = CheckSaveRestoreAtEveryCut(
        [&] {
          return TfRecordFiles(ListFiles({path, plain}));
        },
        100);
    EXPECT_EQ(reference.size(), path == plain ? 5u : 10u);
  }
  // A restored iterator counts only the errors after the cut.
  for (size_t cut : {1u, 2u, 3u}) {
    IteratorState state;
    {
      auto it = TfRecordFiles(ListFiles({plain}))->MakeIterator(MakeTestContext());
      Drain(it, cut);
      it->Save(state);
    }
    IteratorContext ctx = MakeTestContext();
    auto it = TfRecordFiles(ListFiles({plain}))->MakeIterator(ctx);
    it->Restore(state);
    EXPECT_EQ(Drain(it).size(), 5u - cut);
    EXPECT_EQ(StatsOf(ctx, "tfrecord").errors, cut < 3 ? 1u : 0u) << "cut " << cut;
  }
}

TEST(SourceDatasetsTest, TfRecordFilesMissingFileThrowsIoError) {
  std::string dir = TestTempPath("vanishing");
  std::vector<std::string> paths = WriteRecordFolder(dir, {1, 1}, 0);
  auto dataset = TfRecordFiles(ListFiles({dir + "/*.tfrecord"}));
  RemoveFile(paths[1]);
  auto it = dataset->MakeIterator(MakeTestContext());
  EXPECT_TRUE(it->Next().has_value());
  EXPECT_THROW(it->Next(), IoError);
}

// ---------------------------------------------------------------------------------
// Damaged and unreadable files, through TfRecordFiles and the record-level shard

// A folder of three indexed files of five records each; file 1 is cut inside its record 3
// (after the index was written, so the index still lists records 3 and 4).
struct TruncatedFolder {
  std::vector<std::string> paths;
  std::vector<IndexEntry> entries;  // of file 1
};

TruncatedFolder WriteTruncatedFolder(const std::string& name) {
  TruncatedFolder out;
  out.paths = WriteRecordFolder(TestTempPath(name), {5, 5, 5});
  out.entries = ReadIndexFile(IndexPathFor(out.paths[1]));
  std::string bytes = ReadFile(out.paths[1]);
  WriteFileAtomic(out.paths[1], bytes.substr(0, out.entries[3].offset + 7));
  return out;
}

// Every record of the folder but those of file 1 from record 3 on, in order.
std::vector<std::string> RecordsBeforeTheCut() {
  std::vector<std::string> out;
  for (size_t f = 0; f < 3; ++f) {
    for (size_t r = 0; r < (f == 1 ? 3 : 5); ++r) out.push_back(RecordText(f, r));
  }
  return out;
}

TEST(SourceDatasetsTest, TruncatedShardSkippedAndCountedOrFailsNamingPathAndOffset) {
  TruncatedFolder folder = WriteTruncatedFolder("truncated");
  auto by_file = [&] { return TfRecordFiles(FromVector(folder.paths)); };
  auto by_record = [&] { return TfRecordRecordShard(folder.paths, 1, 0); };
  for (auto& [stage, make] : std::vector<std::pair<std::string, std::function<DatasetPtr<Record>()>>>{
           {"tfrecord", by_file}, {"tfrecord_shard", by_record}}) {
    SCOPED_TRACE(stage);
    // 1. Skip: everything before the cut and the files after it; the cut counted.
    IteratorContext ctx = MakeTestContext();
    EXPECT_EQ(RecordData(Drain(make()->MakeIterator(ctx))), RecordsBeforeTheCut());
    EXPECT_GE(StatsOf(ctx, stage).errors, 1u);
    // 2. Fail: the good records, then a DataError at the cut record's offset.
    auto it = make()->MakeIterator(MakeTestContext(FailOptions()));
    std::vector<std::string> before = RecordsBeforeTheCut();
    before.resize(8);  // file 0, then file 1 up to the cut
    EXPECT_EQ(RecordData(Drain(it, 8)), before);
    try {
      it->Next();
      FAIL() << "no error";
    } catch (const DataError& e) {
      EXPECT_EQ(e.path(), folder.paths[1]);
      EXPECT_EQ(e.offset(), folder.entries[3].offset);
      EXPECT_NE(e.reason().find("truncated record"), std::string::npos) << e.what();
    }
  }
}

TEST(SourceDatasetsTest, ZeroLengthFileHasNoRecordsAndNoErrors) {
  std::string dir = TestTempPath("zero");
  std::vector<std::string> paths = WriteRecordFolder(dir, {2, 0, 3}, 0);
  ASSERT_EQ(FileSize(paths[1]), 0u);
  IteratorContext ctx = MakeTestContext(FailOptions());
  EXPECT_EQ(Drain(TfRecordFiles(ListFiles({dir + "/*.tfrecord"}))->MakeIterator(ctx)).size(), 5u);
  EXPECT_EQ(StatsOf(ctx, "tfrecord").errors, 0u);
  IteratorContext shard_ctx = MakeTestContext(FailOptions());
  EXPECT_EQ(Drain(TfRecordRecordShard(paths, 1, 0)->MakeIterator(shard_ctx)).size(), 5u);
  EXPECT_EQ(StatsOf(shard_ctx, "tfrecord_shard").errors, 0u);
}

TEST(SourceDatasetsTest, DirectoryWhereAFileWasExpectedThrowsIoErrorNamingIt) {
  std::string dir = TestTempPath("dir_as_file");
  std::vector<std::string> paths = WriteRecordFolder(dir, {2}, 0);
  std::string folder = JoinPath(dir, "folder.tfrecord");
  MakeDirectories(folder);
  for (ErrorPolicy policy : {ErrorPolicy::kSkip, ErrorPolicy::kFail}) {
    PipelineOptions options;
    options.error_policy = policy;
    auto it = TfRecordFiles(FromVector<std::string>({paths[0], folder}))
                  ->MakeIterator(MakeTestContext(options));
    EXPECT_EQ(Drain(it, 2).size(), 2u);
    try {
      it->Next();
      FAIL() << "no error";
    } catch (const IoError& e) {
      EXPECT_EQ(e.error_number(), EISDIR);
      EXPECT_EQ(std::string(e.what()).rfind(folder + ": ", 0), 0u) << e.what();
    }
  }
  EXPECT_THROW(TfRecordRecordShard({paths[0], folder}, 1, 0), IoError);
}

// Unreadable files (mode 000, read as 'nobody' when the test runs as root): a TFRecord
// file is an IoError naming it under either policy; an image of ImageFiles is a counted
// skip under kSkip and the IoError under kFail.
TEST(SourceDatasetsTest, UnreadableFilesThrowIoErrorOrAreCountedSkips) {
  std::string dir = TestTempPath("unreadable");
  std::vector<std::string> paths = WriteRecordFolder(dir, {2, 2, 2});
  MakeUnreadable(paths[1]);
  std::string images = TestTempPath("unreadable_images");
  for (const char* name : {"cat/1.jpg", "cat/2.jpg", "dog/3.jpg"}) {
    MakeDirectories(DirName(JoinPath(images, name)));
    WriteFileAtomic(JoinPath(images, name), name);
  }
  MakeUnreadable(JoinPath(images, "cat/2.jpg"));
  UnprivilegedResult r = RunUnprivileged([&](std::string* message) {
    // 1. TFRecord files: read whole, the error comes after file 0's records; record-level,
    //    when the shard is made (it checks each file's compression).
    for (ErrorPolicy policy : {ErrorPolicy::kSkip, ErrorPolicy::kFail}) {
      PipelineOptions options;
      options.error_policy = policy;
      auto it = TfRecordFiles(ListFiles({dir + "/*.tfrecord"}))->MakeIterator(MakeTestContext(options));
      if (Drain(it, 2).size() != 2) return 1;
      for (int stage = 0; stage < 2; ++stage) {
        try {
          if (stage == 0) it->Next();
          if (stage == 1) TfRecordRecordShard(paths, 1, 0);
          return 2;
        } catch (const IoError& e) {
          *message = e.what();
          if (e.error_number() != EACCES) return 3;
          if (*message != paths[1] + ": open: Permission denied") return 4;
        }
      }
    }
    // 2. Image files: one counted skip, or the error.
    IteratorContext ctx = MakeTestContext();
    std::vector<Record> got = Drain(ImageFiles(images)->MakeIterator(ctx));
    if (got.size() != 2 || got[1].data != "dog/3.jpg" || StatsOf(ctx, "image_files").errors != 1) {
      return 5;
    }
    auto it = ImageFiles(images)->MakeIterator(MakeTestContext(FailOptions()));
    it->Next();
    try {
      it->Next();
      return 6;
    } catch (const IoError& e) {
      return std::string(e.what()).find(JoinPath(images, "cat/2.jpg")) == 0 ? 0 : 7;
    }
  });
  EXPECT_EQ(r.status, 0) << r.message;
  EXPECT_EQ(r.message, paths[1] + ": open: Permission denied");
}

// ---------------------------------------------------------------------------------
// TfRecordRecordShard and ShardedTfRecords

// Uneven files, some without index files (built on the fly), one empty.
std::vector<std::string> WriteUnevenFolder(const std::string& dir) {
  return WriteRecordFolder(dir, {5, 1, 0, 8, 2, 3, 4}, 0b1011011);
}

TEST(SourceDatasetsTest, RecordShardGivesEveryRecordToExactlyOneShard) {
  std::vector<std::string> files = WriteUnevenFolder(TestTempPath("data_shard"));
  std::vector<Record> everything =
      Collect(TfRecordFiles(ListFiles({DirName(files[0]) + "/*.tfrecord"})));
  ASSERT_EQ(everything.size(), 23u);
  for (int num_shards = 1; num_shards <= 5; ++num_shards) {
    SCOPED_TRACE("num_shards " + std::to_string(num_shards));
    std::vector<std::string> concatenated;
    std::vector<size_t> sizes;
    for (int index = 0; index < num_shards; ++index) {
      std::vector<Record> shard = Collect(TfRecordRecordShard(files, num_shards, index));
      sizes.push_back(shard.size());
      for (const Record& r : shard) {
        EXPECT_EQ(r.origin, RecordOrigin::kTfRecord);
        EXPECT_EQ(ReadTfRecordAt(r.source, r.offset), r.data);
        concatenated.push_back(ElementView(r));
      }
    }
    // Shards in order are the whole sequence, each record once, sizes within 1.
    EXPECT_EQ(concatenated, ElementViews(everything));
    auto [lo, hi] = std::minmax_element(sizes.begin(), sizes.end());
    EXPECT_LE(*hi - *lo, 1u);
  }
}

TEST(SourceDatasetsTest, RecordShardSaveRestoreAtEveryCut) {
  std::vector<std::string> files = WriteUnevenFolder(TestTempPath("data_shard_state"));
  auto reference =
      CheckSaveRestoreAtEveryCut([&] { return TfRecordRecordShard(files, 2, 1); }, 100);
  EXPECT_EQ(reference.size(), 12u);  // records [11, 23)
}

TEST(SourceDatasetsTest, RecordShardRejectsCompressedFilesAndBadArguments) {
  std::string gz = TestTempPath("shard.gz");
  WriteCompressedTfRecords(gz, {"a", "b"}, Compression::kGzip);
  try {
    TfRecordRecordShard({gz}, 2, 0);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(gz), std::string::npos) << e.what();
  }
  std::vector<std::string> files = WriteRecordFolder(TestTempPath("shard_args"), {2});
  EXPECT_THROW(TfRecordRecordShard(files, 0, 0), Error);
  EXPECT_THROW(TfRecordRecordShard(files, 2, 2), Error);
  EXPECT_THROW(TfRecordRecordShard(files, 2, -1), Error);
  EXPECT_THROW(ShardedTfRecords({files[0]}, 2, 5, ShardPolicy::kFile), Error);
}

TEST(SourceDatasetsTest, RecordShardCorruptRecordSkippedAndCountedOrFails) {
  std::string path = WriteCorruptFile("corrupt_shard.tfrecord");
  IteratorContext ctx = MakeTestContext();
  auto records = Drain(TfRecordRecordShard({path}, 1, 0)->MakeIterator(ctx));
  EXPECT_EQ(records.size(), 5u);
  EXPECT_EQ(StatsOf(ctx, "tfrecord_shard").errors, 1u);
  auto it = TfRecordRecordShard({path}, 1, 0)->MakeIterator(MakeTestContext(FailOptions()));
  Drain(it, 2);
  EXPECT_THROW(it->Next(), DataError);
}

TEST(SourceDatasetsTest, RecordShardStaleIndexIsAnError) {
  std::string path = TestTempPath("stale.tfrecord");
  std::vector<IndexEntry> entries = WriteTestTfRecords(path, {"aaaa", "bbbb"}, false);
  entries[0].size += 1;  // claims a longer first record
  entries[1].offset += 1;
  entries[1].size -= 1;
  WriteIndexFile(IndexPathFor(path), entries);
  IteratorContext ctx = MakeTestContext();
  std::vector<Record> records = Drain(TfRecordRecordShard({path}, 1, 0)->MakeIterator(ctx));
  EXPECT_TRUE(records.empty());
  EXPECT_EQ(StatsOf(ctx, "tfrecord_shard").errors, 2u);
}

TEST(SourceDatasetsTest, ShardedTfRecordsByFileByDataAndAuto) {
  std::string dir = TestTempPath("sharded");
  std::vector<std::string> files = WriteUnevenFolder(dir);
  std::string pattern = dir + "/*.tfrecord";
  std::vector<std::string> everything = ElementViews(Collect(TfRecordFiles(ListFiles({pattern}))));
  // 1. kFile: shard i reads files i, i + 3, ...
  std::multiset<std::string> union_of_shards;
  for (int index = 0; index < 3; ++index) {
    std::vector<Record> shard = Collect(ShardedTfRecords({pattern}, 3, index, ShardPolicy::kFile));
    std::vector<std::string> want;
    for (size_t f = static_cast<size_t>(index); f < files.size(); f += 3) {
      for (const Record& r : Collect(TfRecordFiles(ListFiles({files[f]}))))
        want.push_back(ElementView(r));
    }
    EXPECT_EQ(ElementViews(shard), want) << "shard " << index;
    for (const Record& r : shard) union_of_shards.insert(ElementView(r));
  }
  EXPECT_EQ(union_of_shards, std::multiset<std::string>(everything.begin(), everything.end()));
  // 2. kData: as TfRecordRecordShard.
  EXPECT_EQ(ElementViews(Collect(ShardedTfRecords({pattern}, 4, 3, ShardPolicy::kData))),
            ElementViews(Collect(TfRecordRecordShard(files, 4, 3))));
  // 3. kAuto: by file with 7 files for 7 shards, by data for 8.
  EXPECT_EQ(ElementViews(Collect(ShardedTfRecords({pattern}, 7, 3, ShardPolicy::kAuto))),
            ElementViews(Collect(ShardedTfRecords({pattern}, 7, 3, ShardPolicy::kFile))));
  EXPECT_EQ(ElementViews(Collect(ShardedTfRecords({pattern}, 8, 2, ShardPolicy::kAuto))),
            ElementViews(Collect(TfRecordRecordShard(files, 8, 2))));
  // 4. By file, with state.
  CheckSaveRestoreAtEveryCut([&] { return ShardedTfRecords({pattern}, 2, 0, ShardPolicy::kFile); },
                             100);
}

TEST(SourceDatasetsTest, RecordShardOnRealMnist) {
  std::string mnist = TestdataFile(kMnist);  // no .idx beside it: the index is built
  ASSERT_FALSE(PathExists(IndexPathFor(mnist)));
  size_t total = 0;
  for (int index = 0; index < 3; ++index) {
    size_t n = Collect(TfRecordRecordShard({mnist}, 3, index)).size();
    EXPECT_TRUE(n == 333 || n == 334) << n;
    total += n;
  }
  EXPECT_EQ(total, 1000u);
}

// ---------------------------------------------------------------------------------
// ImageFiles

TEST(SourceDatasetsTest, ImageFilesReadsEveryPhotoWithItsLabel) {
  std::string folder = TestdataFile(kPhotos);
  IteratorContext ctx = MakeTestContext();
  std::vector<Record> records = Drain(ImageFiles(folder)->MakeIterator(ctx));
  ASSERT_EQ(records.size(), 47u);
  std::set<int64_t> labels;
  std::vector<std::string> class_names = {};
  for (const std::string& name : ListDirectory(folder)) {
    if (IsDirectory(JoinPath(folder, name))) class_names.push_back(name);
  }
  ASSERT_EQ(class_names.size(), 19u);
  for (const Record& r : records) {
    labels.insert(r.label);
    ASSERT_GE(r.label, 0);
    ASSERT_LT(r.label, 19);
    // The file is in its class's folder, and the data is the whole file.
    EXPECT_EQ(BaseName(DirName(r.source)), class_names[static_cast<size_t>(r.label)]) << r.source;
    EXPECT_EQ(r.data, ReadFile(r.source));
    EXPECT_EQ(r.offset, 0u);
    EXPECT_EQ(r.origin, RecordOrigin::kFile);
    EXPECT_NE(BaseName(r.source), "image_list.txt");
  }
  EXPECT_EQ(labels.size(), 19u);
  EXPECT_EQ(StatsOf(ctx, "image_files").elements, 47u);
}

TEST(SourceDatasetsTest, ImageFilesShufflesEachEpoch) {
  std::string folder = TestdataFile(kPhotos);
  auto sources = [&](bool shuffle, uint64_t epoch) {
    IteratorContext ctx = MakeTestContext();
    ctx.epoch = epoch;
    std::vector<std::string> out;
    for (const Record& r : Drain(ImageFiles(folder, shuffle, 5)->MakeIterator(ctx))) {
      out.push_back(r.source);
    }
    return out;
  };
  std::vector<std::string> plain = sources(false, 0), e0 = sources(true, 0), e1 = sources(true, 1);
  EXPECT_EQ(e0, sources(true, 0));
  EXPECT_NE(e0, plain);
  EXPECT_NE(e0, e1);
  std::sort(e0.begin(), e0.end());
  std::sort(plain.begin(), plain.end());
  EXPECT_EQ(e0, plain);
}

TEST(SourceDatasetsTest, ImageFilesSaveRestore) {
  std::string folder = TestdataFile(kPhotos);
  CheckSaveRestoreAtEveryCut([&] { return ImageFiles(folder, true, 11); }, 8);
}

TEST(SourceDatasetsTest, ImageFilesUnreadableFileSkippedAndCountedOrFails) {
  std::string dir = TestTempPath("images");
  for (const char* name : {"cat/1.jpg", "cat/2.jpg", "dog/3.jpg"}) {
    MakeDirectories(DirName(JoinPath(dir, name)));
    WriteFileAtomic(JoinPath(dir, name), name);
  }
  auto dataset = ImageFiles(dir);
  RemoveFile(JoinPath(dir, "cat/2.jpg"));  // gone after listing
  IteratorContext ctx = MakeTestContext();
  std::vector<Record> records = Drain(dataset->MakeIterator(ctx));
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].data, "cat/1.jpg");
  EXPECT_EQ(records[1].data, "dog/3.jpg");
  EXPECT_EQ(records[1].label, 1);
  EXPECT_EQ(StatsOf(ctx, "image_files").errors, 1u);
  auto it = dataset->MakeIterator(MakeTestContext(FailOptions()));
  it->Next();
  EXPECT_THROW(it->Next(), IoError);
}

}  // namespace
}  // namespace imgpipe::pipeline
