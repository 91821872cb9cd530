#include "record/index.h"

#include "io/storage.h"
#include "record/crc32c.h"
#include "record/tfrecord_format.h"
#include "record/tfrecord_reader.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe {
namespace {

// Parses the decimal digits at the front of `text` (at least one, no sign, no overflow)
// and removes them; nullopt otherwise.
std::optional<uint64_t> ConsumeNumber(std::string_view* text) {
  size_t i = 0;
  uint64_t value = 0;
  while (i < text->size() && (*text)[i] >= '0' && (*text)[i] <= '9') {
    uint64_t digit = static_cast<uint64_t>((*text)[i] - '0');
    if (value > (UINT64_MAX - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
    ++i;
  }
  if (i == 0) return std::nullopt;
  text->remove_prefix(i);
  return value;
}

}  // namespace

std::string IndexPathFor(const std::string& tfrecord_path) { return tfrecord_path + ".idx"; }

std::string FormatIndex(const std::vector<IndexEntry>& entries) {
  std::string text;
  for (const IndexEntry& e : entries) {
    text += std::to_string(e.offset);
    text += ' ';
    text += std::to_string(e.size);
    text += '\n';
  }
  return text;
}

std::vector<IndexEntry> ParseIndex(std::string_view text, const std::string& path) {
  std::vector<IndexEntry> entries;
  uint64_t line_offset = 0;
  uint64_t expected_offset = 0;
  while (line_offset < text.size()) {
    // 1. One line, "OFFSET SIZE\n".
    size_t newline = text.find('\n', line_offset);
    if (newline == std::string_view::npos) {
      throw DataError(path, line_offset, "index line does not end with a newline");
    }
    std::string_view line = text.substr(line_offset, newline - line_offset);
    std::optional<uint64_t> offset = ConsumeNumber(&line);
    bool space = !line.empty() && line.front() == ' ';
    if (space) line.remove_prefix(1);
    std::optional<uint64_t> size = space ? ConsumeNumber(&line) : std::nullopt;
    if (!offset || !size || !line.empty()) {
      throw DataError(
          path, line_offset,
          "malformed index line (expected \"OFFSET SIZE\"): \"" +
              std::string(text.substr(line_offset, std::min<size_t>(newline - line_offset, 80))) +
              "\"");
    }
    // 2. The entry must frame a record and follow the previous one.
    if (*size < tfrecord::kHeaderSize + tfrecord::kFooterSize) {
      throw DataError(path, line_offset,
                      "index entry size " + std::to_string(*size) + " is smaller than a record's " +
                          std::to_string(tfrecord::kHeaderSize + tfrecord::kFooterSize) +
                          " framing bytes");
    }
    if (*offset != expected_offset) {
      throw DataError(path, line_offset,
                      "index entry offset " + std::to_string(*offset) +
                          " is not contiguous (expected " + std::to_string(expected_offset) + ")");
    }
    if (*size > UINT64_MAX - *offset) {
      throw DataError(path, line_offset, "index entry extends past the largest file offset");
    }
    entries.push_back({*offset, *size});
    expected_offset = *offset + *size;
    line_offset = newline + 1;
  }
  return entries;
}

std::vector<IndexEntry> ReadIndexFile(const std::string& path) {
  return ParseIndex(ReadStorageFile(path), path);
}

uint32_t WriteIndexFile(const std::string& path, const std::vector<IndexEntry>& entries) {
  const std::string text = FormatIndex(entries);
  WriteFileAtomic(path, text);
  return crc32c::Value(text.data(), text.size());
}

std::vector<IndexEntry> BuildIndex(const std::string& tfrecord_path) {
  TfRecordReaderOptions options;
  options.compression = Compression::kNone;
  options.verify_data_crc = false;
  TfRecordReader reader(tfrecord_path, options);
  std::vector<IndexEntry> entries;
  std::string record;
  while (reader.Next(&record)) {
    entries.push_back(
        {reader.record_offset(), tfrecord::kHeaderSize + record.size() + tfrecord::kFooterSize});
  }
  return entries;
}

int64_t CountRecords(const std::string& tfrecord_path, ErrorPolicy policy) {
  const std::string index = IndexPathFor(tfrecord_path);
  if (StorageExists(index)) return static_cast<int64_t>(ReadIndexFile(index).size());
  TfRecordReaderOptions options;
  options.policy = policy;
  TfRecordReader reader(tfrecord_path, options);
  std::string record;
  int64_t n = 0;
  while (reader.Next(&record)) ++n;
  return n;
}

}  // namespace imgpipe
