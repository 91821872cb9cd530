// Whole-file GZIP and ZLIB compression for TFRecord files (zlib).
#pragma once

#include <memory>
#include <string>

#include "util/error.h"
#include "io/byte_source.h"
#include "util/file.h"

namespace imgpipe {

enum class Compression { kNone, kGzip, kZlib };

// "none"/"" -> kNone, "gzip"/"GZIP" -> kGzip, "zlib"/"ZLIB" -> kZlib; throws Error otherwise.
Compression ParseCompression(const std::string& name);
// "none", "gzip" or "zlib".
const char* CompressionName(Compression compression);

// Guesses a file's compression from its first bytes (gzip magic 1f 8b; a valid zlib
// header whose stream inflates; otherwise none). Throws IoError when unreadable.
Compression DetectCompression(const std::string& path);
// The same for the bytes of `source`.
Compression DetectCompression(const ByteSource& source);

// What a decompressing file's Read throws at a corrupt or truncated stream: a DataError
// naming the path and the compressed offset reached. The call's buffer holds the
// bytes_read() good bytes inflated before the error.
class CompressedStreamError : public DataError {
 public:
  CompressedStreamError(std::string path, uint64_t compressed_offset, std::string message,
                        size_t bytes_read)
      : DataError(std::move(path), compressed_offset, std::move(message)),
        bytes_read_(bytes_read) {}
  size_t bytes_read() const { return bytes_read_; }

 private:
  size_t bytes_read_;
};

// Opens `path` for sequential reading of its uncompressed bytes. A corrupt or
// truncated compressed stream throws CompressedStreamError (a DataError naming the path
// and the compressed offset reached).
std::unique_ptr<SequentialFile> OpenDecompressedFile(const std::string& path,
                                                     Compression compression);
// The same over `file` (read front to back; named by its path()).
std::unique_ptr<SequentialFile> WrapDecompressingFile(std::unique_ptr<SequentialFile> file,
                                                      Compression compression);

// Returns a file whose appended bytes reach `sink` compressed (kNone: unchanged).
// Its Close() ends the compressed stream and flushes `sink` but leaves `sink` open
// for its owner to sync, close or commit. `sink` must outlive the result.
std::unique_ptr<WritableFile> WrapCompressingFile(WritableFile& sink, Compression compression);

}  // namespace imgpipe
