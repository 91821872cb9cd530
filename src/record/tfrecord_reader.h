// Reads TFRecord files (tfrecord_format.h), uncompressed, GZIP or ZLIB.
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/byte_source.h"
#include "record/compression.h"
#include "util/error_policy.h"
#include "util/file.h"

namespace imgpipe {

struct TfRecordReaderOptions {
  // kNone/kGzip/kZlib, or detect from the file's first bytes when unset.
  std::optional<Compression> compression;
  // kFail: a corrupt or truncated record throws DataError(path, offset).
  // kSkip: it is counted in stats(), logged (the first few per file), and reading goes
  // on: a bad data CRC skips that record; a bad length CRC resynchronises by scanning
  // forward for the next valid record header; a truncated tail ends the file.
  ErrorPolicy policy = ErrorPolicy::kFail;
  // Check the data CRC of each record (the length CRC is always checked).
  bool verify_data_crc = true;
  // A URL's source is read ahead in pieces (io/byte_source.h): at most this many in
  // flight when given (a pipeline's autotuner moves it), else up to four.
  const PiecesAheadLimit* read_ahead_limit = nullptr;
};

// One corrupt stretch met while reading under kSkip.
struct CorruptRecord {
  uint64_t offset = 0;  // uncompressed byte offset where the bad record starts
  std::string reason;   // e.g. "data CRC mismatch", "truncated record"
};

struct TfRecordReaderStats {
  uint64_t records = 0;       // good records returned
  uint64_t data_bytes = 0;    // their data bytes
  uint64_t corrupt = 0;       // corrupt or truncated stretches skipped
  uint64_t crc_errors = 0;    // of those, CRC mismatches
  uint64_t skipped_bytes = 0; // bytes passed over while skipping
  std::vector<CorruptRecord> errors;  // every one of them, in file order
};

class TfRecordReader {
 public:
  // Reads the file or object at `path` (a local path or a URL: io/storage.h).
  explicit TfRecordReader(std::string path, TfRecordReaderOptions options = {});
  // Reads the bytes of `source` (named by its name() in errors and path()).
  explicit TfRecordReader(std::unique_ptr<ByteSource> source, TfRecordReaderOptions options = {});
  ~TfRecordReader();

  // Reads the next record's data into *record. Returns false at the end of the file.
  bool Next(std::string* record);

  // Offset (uncompressed) of the record Next returned last.
  uint64_t record_offset() const { return record_offset_; }
  // CRC32C (unmasked) of the data of the record Next returned last, when its data CRC
  // was checked (verify_data_crc); nullopt otherwise. Lets a caller that needs the CRC
  // (a pipeline saving the record by reference) skip computing it again.
  std::optional<uint32_t> record_crc() const { return record_crc_; }
  const TfRecordReaderStats& stats() const { return stats_; }
  Compression compression() const { return compression_; }
  const std::string& path() const { return path_; }

 private:
  class Impl;
  // `source` when path is a URL, else null (the local file is read as a SequentialFile).
  TfRecordReader(std::unique_ptr<ByteSource> source, const std::string& path,
                 const TfRecordReaderOptions& options);
  // The reader of `source` read front to back, its buffer sized by the source's size.
  static std::unique_ptr<Impl> ImplFor(std::unique_ptr<ByteSource> source, Compression compression,
                                       const TfRecordReaderOptions& options, TfRecordReaderStats* stats);
  std::string path_;
  Compression compression_;
  uint64_t record_offset_ = 0;
  std::optional<uint32_t> record_crc_;
  TfRecordReaderStats stats_;
  std::unique_ptr<Impl> impl_;
};

// An uncompressed TFRecord file open once and read at known offsets (from an index file
// or a saved position), both CRCs checked. Reads go through a read-ahead window of
// `window_bytes`, so reading forward record by record costs one pread per window.
class TfRecordRandomReader {
 public:
  // `path` is a local path or a URL (io/storage.h). Throws IoError when it cannot be
  // opened or is a directory, HttpError for a URL that cannot.
  explicit TfRecordRandomReader(std::string path, size_t window_bytes = 1 << 20);
  // Reads the bytes of `source` (named by its name() in errors and path()).
  explicit TfRecordRandomReader(std::unique_ptr<ByteSource> source, size_t window_bytes = 1 << 20);

  uint64_t size() const { return source_->size(); }
  const std::string& path() const { return source_->name(); }

  // The data of the record whose length field starts at `offset`; *end (when given)
  // receives the offset just past the record, *data_crc (when given) the data's CRC32C
  // (unmasked), checked. Throws DataError(path, offset) when the record is corrupt or
  // truncated.
  std::string ReadAt(uint64_t offset, uint64_t* end = nullptr, uint32_t* data_crc = nullptr);

 private:
  // Copies bytes [offset, offset + n) to `out`, from the window when it holds them;
  // throws DataError when the file ends first (it shrank since opening).
  void Read(uint64_t offset, char* out, size_t n);

  std::unique_ptr<ByteSource> source_;
  const size_t window_bytes_;
  std::string window_;
  uint64_t window_offset_ = 0;
  size_t window_size_ = 0;
};

// Reads one record at a known offset of an uncompressed file (from an index file),
// checking both CRCs; *data_crc (when given) receives the data's CRC32C. Throws
// DataError on corruption.
std::string ReadTfRecordAt(const std::string& path, uint64_t offset, uint32_t* data_crc = nullptr);

// Where a record is: its file (a path or URL), the offset of its length field, and the
// size of its data as last seen (for planning reads; the record read decides).
struct RecordLocation {
  std::string path;
  uint64_t offset = 0;
  uint64_t data_size = 0;
};

// A record read by ReadTfRecordsAt: its data and data CRC32C, or the DataError that
// reading it threw.
struct RecordAt {
  std::string data;
  uint32_t data_crc = 0;
  std::exception_ptr error;
};

// The records at `locations`, in their order, each read and checked as ReadTfRecordAt
// does. Each file is opened once; a URL's records are fetched in ranged reads of up to
// 8 MiB that span neighbours (at most 1 MiB apart, cut at record boundaries), several at
// once, instead of a round trip per record. Throws IoError or HttpError when a file
// cannot be opened.
std::vector<RecordAt> ReadTfRecordsAt(const std::vector<RecordLocation>& locations);

}  // namespace imgpipe
