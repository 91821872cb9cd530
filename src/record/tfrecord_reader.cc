#include "record/tfrecord_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <string_view>

#include "io/storage.h"
#include "record/tfrecord_format.h"
#include "util/error.h"
#include "util/logging.h"

namespace imgpipe {
namespace {

using tfrecord::kFooterSize;
using tfrecord::kHeaderSize;
using tfrecord::kMaxRecordLength;

// Read buffer; records up to this size (with framing) are returned straight from it.
constexpr size_t kBufferSize = 1 << 20;
// The smallest buffer, for a source smaller than kBufferSize.
constexpr size_t kMinBufferSize = 4 << 10;
// A large record's string grows by at least this much per read.
constexpr size_t kLargeRecordStep = 64 << 20;
// Corrupt stretches logged per file under kSkip; the rest are only counted.
constexpr uint64_t kMaxLoggedErrors = 5;

std::string TruncatedReason(uint64_t expected, uint64_t available) {
  return "truncated record (expected " + std::to_string(expected) + " bytes, file ends after " +
         std::to_string(available) + ")";
}

std::string LengthLimitReason(uint64_t length) {
  return "record length " + std::to_string(length) + " exceeds limit " +
         std::to_string(kMaxRecordLength);
}

}  // namespace

// The read buffer's size for a source of `size` bytes read as `compression` (size
// unknown: nullopt): kBufferSize, or less for a smaller uncompressed source, which can
// hold no larger record. A reader per small input (tests, fuzzing) then costs no 1 MiB
// allocation: under ASan each was an mmap, and the fuzzer ran about 130 inputs a second.
size_t BufferSizeFor(std::optional<uint64_t> size, Compression compression) {
  if (!size || compression != Compression::kNone) return kBufferSize;
  return static_cast<size_t>(std::clamp<uint64_t>(*size, kMinBufferSize, kBufferSize));
}

class TfRecordReader::Impl {
 public:
  // Reads `file`, of `size` bytes when known, as `compression`.
  Impl(std::unique_ptr<SequentialFile> file, std::optional<uint64_t> size, Compression compression,
       const TfRecordReaderOptions& options, TfRecordReaderStats* stats)
      : file_(WrapDecompressingFile(std::move(file), compression)),
        options_(options),
        stats_(stats),
        buffer_size_(BufferSizeFor(size, compression)),
        buffer_(new char[buffer_size_]) {}

  // Reads the next good record into *record, its offset into *offset and its checked
  // data CRC into *crc (nullopt when not checked).
  bool Next(std::string* record, uint64_t* offset, std::optional<uint32_t>* crc) {
    while (true) {
      // 1. The header.
      *offset = buffer_offset_ + pos_;
      size_t have = Ensure(kHeaderSize);
      if (have == 0) {
        if (stream_error_) Corrupt(*offset, TakeStreamError(), 0, false);
        return false;
      }
      if (have < kHeaderSize) return TruncatedTail(*offset, kHeaderSize, have);
      std::optional<uint64_t> length = tfrecord::DecodeHeader(buffer_.get() + pos_);
      if (!length || *length > kMaxRecordLength) {
        std::string reason = length ? LengthLimitReason(*length) : "length CRC mismatch";
        if (options_.policy == ErrorPolicy::kFail) throw DataError(file_->path(), *offset, reason);
        Corrupt(*offset, reason, Resynchronise(*offset), !length);
        continue;
      }
      // 2. The data and footer, from the buffer or (large records) straight from the file.
      uint64_t total = kHeaderSize + *length + kFooterSize;
      const char* footer;
      if (total <= buffer_size_) {
        have = Ensure(total);
        if (have < total) return TruncatedTail(*offset, total, have);
        const char* data = buffer_.get() + pos_ + kHeaderSize;
        footer = data + *length;
        pos_ += total;
        if (!CheckDataCrc(data, *length, footer, *offset, total)) continue;
        record->assign(data, *length);
      } else {
        if (!ReadLargeRecord(*length, record, *offset)) return false;
        footer = buffer_.get() + pos_;
        pos_ += kFooterSize;
        if (!CheckDataCrc(record->data(), *length, footer, *offset, total)) continue;
      }
      *crc = options_.verify_data_crc ? std::optional<uint32_t>(tfrecord::FooterCrc(footer))
                                      : std::nullopt;
      ++stats_->records;
      stats_->data_bytes += *length;
      return true;
    }
  }

 private:
  // Makes at least `want` (<= buffer_size_) bytes available at pos_ unless the file
  // ends first; returns the bytes available.
  size_t Ensure(size_t want) {
    size_t have = end_ - pos_;
    if (have >= want || eof_) return have;
    // 1. Move the unread bytes to the front.
    if (pos_ > 0) {
      std::memmove(buffer_.get(), buffer_.get() + pos_, have);
      buffer_offset_ += pos_;
      pos_ = 0;
      end_ = have;
    }
    // 2. Fill the rest.
    while (end_ - pos_ < want && !eof_)
      end_ += ReadSource(buffer_.get() + end_, buffer_size_ - end_);
    return end_ - pos_;
  }

  // Reads until `n` bytes or the end of the file; returns the bytes read.
  size_t ReadFully(char* out, size_t n) {
    size_t done = 0;
    while (done < n && !eof_) done += ReadSource(out + done, n - done);
    return done;
  }

  // file_->Read; sets eof_ at the end. Under kSkip a corrupt compressed stream ends the
  // file after the good bytes before it, and is reported with the record it cuts short.
  size_t ReadSource(char* out, size_t n) {
    try {
      size_t got = file_->Read(out, n);
      if (got < n) eof_ = true;
      return got;
    } catch (const CompressedStreamError& e) {
      if (options_.policy == ErrorPolicy::kFail) throw;
      stream_error_ = e.reason();
      eof_ = true;
      return e.bytes_read();
    }
  }

  std::string TakeStreamError() {
    std::string error = std::move(*stream_error_);
    stream_error_.reset();
    return error;
  }

  // Reads a record larger than the buffer into *record, then its footer into the
  // buffer at pos_. Returns false (under kSkip) when the file ends first.
  bool ReadLargeRecord(uint64_t length, std::string* record, uint64_t offset) {
    uint64_t total = kHeaderSize + length + kFooterSize;
    // 1. The part already in the buffer.
    size_t filled = std::min<size_t>(end_ - pos_ - kHeaderSize, length);
    record->assign(buffer_.get() + pos_ + kHeaderSize, filled);
    pos_ += kHeaderSize + filled;
    // 2. The rest, straight from the file (the buffer is empty then), growing the record
    // as bytes arrive so that a damaged length cannot allocate gigabytes up front.
    if (filled < length) {
      uint64_t from_file = 0;
      while (filled < length) {
        size_t target = std::min<size_t>(length, std::max(2 * filled, filled + kLargeRecordStep));
        record->resize(target);
        size_t got = ReadFully(record->data() + filled, target - filled);
        filled += got;
        from_file += got;
        if (filled < target) break;
      }
      buffer_offset_ += end_ + from_file;
      pos_ = end_ = 0;
      if (filled < length) return TruncatedTail(offset, total, kHeaderSize + filled);
    }
    // 3. The footer.
    size_t have = Ensure(kFooterSize);
    if (have < kFooterSize) return TruncatedTail(offset, total, kHeaderSize + length + have);
    return true;
  }

  // Under kFail throws on a data CRC mismatch; under kSkip counts it and returns false.
  bool CheckDataCrc(const char* data, uint64_t length, const char* footer, uint64_t offset,
                    uint64_t total) {
    if (!options_.verify_data_crc || tfrecord::FooterMatches(data, length, footer)) return true;
    if (options_.policy == ErrorPolicy::kFail) {
      throw DataError(file_->path(), offset, "data CRC mismatch");
    }
    Corrupt(offset, "data CRC mismatch", total, true);
    return false;
  }

  // The file ends inside the record at `offset`: throws under kFail; under kSkip counts
  // the partial record, passes over its `available` bytes and returns false (the end).
  bool TruncatedTail(uint64_t offset, uint64_t expected, uint64_t available) {
    std::string reason = TruncatedReason(expected, available);
    if (stream_error_) reason += " (" + TakeStreamError() + ")";
    if (options_.policy == ErrorPolicy::kFail) throw DataError(file_->path(), offset, reason);
    pos_ = end_;
    Corrupt(offset, reason, available, false);
    return false;
  }

  // Scans forward from the byte after `bad_offset` for the next header with a valid
  // length CRC and a length within the limit; leaves pos_ there (or at the end) and
  // returns the bytes passed over.
  uint64_t Resynchronise(uint64_t bad_offset) {
    ++pos_;
    while (true) {
      size_t have = Ensure(kHeaderSize);
      if (have < kHeaderSize) {
        pos_ = end_;
        break;
      }
      size_t last = end_ - kHeaderSize;
      for (; pos_ <= last; ++pos_) {
        std::optional<uint64_t> length = tfrecord::DecodeHeader(buffer_.get() + pos_);
        if (length && *length <= kMaxRecordLength) {
          return buffer_offset_ + pos_ - bad_offset;
        }
      }
    }
    return buffer_offset_ + pos_ - bad_offset;
  }

  // Counts and records one corrupt stretch; logs the first few.
  void Corrupt(uint64_t offset, std::string reason, uint64_t skipped_bytes, bool crc_error) {
    ++stats_->corrupt;
    if (crc_error) ++stats_->crc_errors;
    stats_->skipped_bytes += skipped_bytes;
    if (stats_->corrupt <= kMaxLoggedErrors) {
      LogWarning(file_->path() + ": offset " + std::to_string(offset) + ": " + reason +
                 "; skipped " + std::to_string(skipped_bytes) + " bytes");
      if (stats_->corrupt == kMaxLoggedErrors) {
        LogWarning(file_->path() + ": further corrupt records are counted, not logged");
      }
    }
    stats_->errors.push_back({offset, std::move(reason)});
  }

  std::unique_ptr<SequentialFile> file_;
  TfRecordReaderOptions options_;
  TfRecordReaderStats* stats_;
  const size_t buffer_size_;
  std::unique_ptr<char[]> buffer_;
  size_t pos_ = 0;                           // next unread byte in buffer_
  size_t end_ = 0;                           // end of the valid bytes in buffer_
  uint64_t buffer_offset_ = 0;               // uncompressed file offset of buffer_[0]
  bool eof_ = false;                         // the source has no more bytes
  std::optional<std::string> stream_error_;  // a corrupt compressed stream, not yet reported
};

TfRecordReader::TfRecordReader(std::string path, TfRecordReaderOptions options)
    : TfRecordReader(IsUrl(path) ? OpenByteSource(path, ReadPattern::kFrontToBack) : nullptr, path, options) {}

TfRecordReader::TfRecordReader(std::unique_ptr<ByteSource> source, const std::string& path,
                               const TfRecordReaderOptions& options)
    : path_(path),
      compression_(options.compression ? *options.compression
                   : source            ? DetectCompression(*source)
                                       : DetectCompression(path_)),
      impl_(source ? ImplFor(std::move(source), compression_, options, &stats_)
                   : std::make_unique<Impl>(OpenSequentialFile(path_), std::nullopt, compression_, options, &stats_)) {}

TfRecordReader::TfRecordReader(std::unique_ptr<ByteSource> source, TfRecordReaderOptions options)
    : path_(source->name()),
      compression_(options.compression ? *options.compression : DetectCompression(*source)),
      impl_(ImplFor(std::move(source), compression_, options, &stats_)) {}

std::unique_ptr<TfRecordReader::Impl> TfRecordReader::ImplFor(std::unique_ptr<ByteSource> source,
                                                              Compression compression,
                                                              const TfRecordReaderOptions& options,
                                                              TfRecordReaderStats* stats) {
  const uint64_t size = source->size();
  return std::make_unique<Impl>(ReadFrontToBack(std::move(source), options.read_ahead_limit), size, compression,
                                options, stats);
}

TfRecordReader::~TfRecordReader() = default;

bool TfRecordReader::Next(std::string* record) {
  uint64_t offset = 0;
  if (!impl_->Next(record, &offset, &record_crc_)) return false;
  record_offset_ = offset;
  return true;
}

TfRecordRandomReader::TfRecordRandomReader(std::string path, size_t window_bytes)
    : TfRecordRandomReader(OpenByteSource(path), window_bytes) {}

TfRecordRandomReader::TfRecordRandomReader(std::unique_ptr<ByteSource> source, size_t window_bytes)
    : source_(std::move(source)), window_bytes_(window_bytes) {
  if (window_bytes_ > 0) source_->AdviseSequential();
}

std::string TfRecordRandomReader::ReadAt(uint64_t offset, uint64_t* end, uint32_t* data_crc) {
  const std::string& path = source_->name();
  // 1. The header.
  uint64_t available = offset < source_->size() ? source_->size() - offset : 0;
  if (available < kHeaderSize) throw DataError(path, offset, TruncatedReason(kHeaderSize, available));
  char header[kHeaderSize];
  Read(offset, header, kHeaderSize);
  std::optional<uint64_t> length = tfrecord::DecodeHeader(header);
  if (!length) throw DataError(path, offset, "length CRC mismatch");
  if (*length > kMaxRecordLength) throw DataError(path, offset, LengthLimitReason(*length));
  // 2. The data and footer, checked against the file's size before allocating.
  uint64_t total = kHeaderSize + *length + kFooterSize;
  if (total > available) throw DataError(path, offset, TruncatedReason(total, available));
  std::string data(*length, '\0');
  Read(offset + kHeaderSize, data.data(), data.size());
  char footer[kFooterSize];
  Read(offset + kHeaderSize + *length, footer, kFooterSize);
  if (!tfrecord::FooterMatches(data.data(), data.size(), footer)) {
    throw DataError(path, offset, "data CRC mismatch");
  }
  if (end) *end = offset + total;
  if (data_crc) *data_crc = tfrecord::FooterCrc(footer);
  return data;
}

void TfRecordRandomReader::Read(uint64_t offset, char* out, size_t n) {
  if (offset >= window_offset_ && offset + n <= window_offset_ + window_size_) {
    std::memcpy(out, window_.data() + (offset - window_offset_), n);
    return;
  }
  auto shrank = [&](size_t got) {
    return DataError(source_->name(), offset,
                     "file ends after " + std::to_string(got) + " of " + std::to_string(n) + " bytes");
  };
  if (n >= window_bytes_ / 2) {  // large (or no window): straight into `out`
    size_t got = source_->Read(offset, out, n);
    if (got < n) throw shrank(got);
    return;
  }
  window_.resize(window_bytes_);
  window_offset_ = offset;
  window_size_ = source_->Read(offset, window_.data(), window_bytes_);
  if (window_size_ < n) throw shrank(window_size_);
  std::memcpy(out, window_.data(), n);
}

std::string ReadTfRecordAt(const std::string& path, uint64_t offset, uint32_t* data_crc) {
  return TfRecordRandomReader(path, /*window_bytes=*/0).ReadAt(offset, nullptr, data_crc);
}

std::vector<RecordAt> ReadTfRecordsAt(const std::vector<RecordLocation>& locations) {
  // Neighbours this far apart or closer share a ranged read of a URL.
  constexpr uint64_t kMaxGap = 1 << 20;
  std::vector<RecordAt> out(locations.size());
  // 1. The locations grouped by file, each group in offset order.
  std::map<std::string_view, std::vector<size_t>> by_file;
  for (size_t i = 0; i < locations.size(); ++i) by_file[locations[i].path].push_back(i);
  for (auto& [path, group] : by_file) {
    std::sort(group.begin(), group.end(),
              [&](size_t a, size_t b) { return locations[a].offset < locations[b].offset; });
    // 2. The file opened once; a URL's records fetched ahead in pieces along them.
    std::unique_ptr<ByteSource> source = OpenByteSource(std::string(path));
    if (const uint64_t piece_bytes = source->read_ahead_bytes(); piece_bytes > 0) {
      std::vector<ByteRange> extents;
      for (size_t i : group) {
        extents.push_back({locations[i].offset, kHeaderSize + locations[i].data_size + kFooterSize});
      }
      source = ReadRangesAhead(std::move(source), PiecesAlong(extents, piece_bytes, kMaxGap));
    }
    // 3. Each record, checked; a bad one keeps its error.
    TfRecordRandomReader reader(std::move(source), /*window_bytes=*/0);
    for (size_t i : group) {
      try {
        out[i].data = reader.ReadAt(locations[i].offset, nullptr, &out[i].data_crc);
      } catch (const DataError&) {
        out[i].error = std::current_exception();
      }
    }
  }
  return out;
}

}  // namespace imgpipe
