#include "record/record_test_util.h"

#include <stdlib.h>

#include <filesystem>
#include <random>

#include "record/tfrecord_writer.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe::testing {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "record_test.XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw IoError(pattern, "mkdtemp", errno);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string TestdataPath(const std::string& relative) {
  return JoinPath(IMGPIPE_TESTDATA_DIR, relative);
}

std::vector<IndexEntry> WriteRecords(const std::string& path,
                                     const std::vector<std::string>& records,
                                     Compression compression) {
  auto file = OpenWritableFile(path);
  std::vector<IndexEntry> entries;
  {
    TfRecordWriter writer(*file, compression);
    for (const std::string& record : records) entries.push_back(writer.Write(record));
    writer.Close();
  }
  file->Close();
  return entries;
}

std::vector<std::string> ReadRecords(const std::string& path, TfRecordReaderOptions options,
                                     TfRecordReaderStats* stats, std::vector<uint64_t>* offsets) {
  TfRecordReader reader(path, options);
  std::vector<std::string> records;
  std::string record;
  while (reader.Next(&record)) {
    records.push_back(record);
    if (offsets != nullptr) offsets->push_back(reader.record_offset());
  }
  if (stats != nullptr) *stats = reader.stats();
  return records;
}

std::string RandomBytes(size_t size, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string out(size, '\0');
  for (char& c : out) c = static_cast<char>(rng());
  return out;
}

void WriteRaw(const std::string& path, const std::string& data) {
  auto file = OpenWritableFile(path);
  file->Append(data);
  file->Close();
}

}  // namespace imgpipe::testing
