// Helpers for the tests of the sources, shard and interleave: folders of small
// TFRecord files with known contents.
#pragma once

#include <string>
#include <vector>

#include "pipeline/pipeline_test_util.h"
#include "record/compression.h"
#include "record/tfrecord_writer.h"
#include "util/file.h"

namespace imgpipe::pipeline {

// A path of the shared test data, e.g. TestdataFile("tfrecord/tfx/mnist.tfrecord").
inline std::string TestdataFile(const std::string& relative) {
  return JoinPath(IMGPIPE_TESTDATA_DIR, relative);
}

// The content of record r of file f in a folder made by WriteRecordFolder.
inline std::string RecordText(size_t f, size_t r) {
  return "file" + std::to_string(f) + "-record" + std::to_string(r) + std::string(r % 7, 'x');
}

// Writes `path` with `records`, compressed as given (no index file).
inline void WriteCompressedTfRecords(const std::string& path,
                                     const std::vector<std::string>& records,
                                     Compression compression) {
  std::unique_ptr<WritableFile> file = OpenWritableFile(path);
  TfRecordWriter writer(*file, compression);
  for (const std::string& r : records) writer.Write(r);
  writer.Close();
  file->Close();
}

// A fresh folder with one uncompressed TFRecord file per entry of `counts`
// ("part-00.tfrecord", ...), file f holding RecordText(f, 0..counts[f]-1), with an
// index file for those whose `with_index` bit is set (bit f; all by default).
// Returns the files' paths in order.
inline std::vector<std::string> WriteRecordFolder(const std::string& dir,
                                                  const std::vector<size_t>& counts,
                                                  uint64_t with_index = ~uint64_t{0}) {
  MakeDirectories(dir);
  std::vector<std::string> paths;
  for (size_t f = 0; f < counts.size(); ++f) {
    std::vector<std::string> records;
    for (size_t r = 0; r < counts[f]; ++r) records.push_back(RecordText(f, r));
    std::string name = std::string("part-") + (f < 10 ? "0" : "") + std::to_string(f) + ".tfrecord";
    paths.push_back(JoinPath(dir, name));
    WriteTestTfRecords(paths.back(), records, (with_index >> f) & 1);
  }
  return paths;
}

// The data of each record, in order.
inline std::vector<std::string> RecordData(const std::vector<Record>& records) {
  std::vector<std::string> out;
  for (const Record& r : records) out.push_back(r.data);
  return out;
}

// Flips one bit of the byte at `offset` of `path`.
inline void FlipByte(const std::string& path, uint64_t offset) {
  std::string bytes = ReadFile(path);
  bytes[offset] = static_cast<char>(bytes[offset] ^ 0x20);
  std::unique_ptr<WritableFile> file = OpenWritableFile(path);
  file->Append(bytes);
  file->Close();
}

// The first StageStats snapshot named `name` in `ctx`'s registry.
inline StageSnapshot StatsOf(const IteratorContext& ctx, const std::string& name) {
  for (const StageSnapshot& s : ctx.stats->Snapshot()) {
    if (s.name == name) return s;
  }
  ADD_FAILURE() << "no stage named " << name;
  return {};
}

}  // namespace imgpipe::pipeline
