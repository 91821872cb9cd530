// Whole-file GZIP and ZLIB compression for TFRecord files (zlib).
#pragma once

#include <memory>
#include <string>

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

// Opens `path` for sequential reading of its uncompressed bytes. A corrupt or
// truncated compressed stream throws DataError naming the path and the compressed
// offset reached.
std::unique_ptr<SequentialFile> OpenDecompressedFile(const std::string& path,
                                                     Compression compression);

// Returns a file whose appended bytes reach `sink` compressed (kNone: unchanged).
// Its Close() ends the compressed stream and flushes `sink` but leaves `sink` open
// for its owner to sync, close or commit. `sink` must outlive the result.
std::unique_ptr<WritableFile> WrapCompressingFile(WritableFile& sink, Compression compression);

}  // namespace imgpipe
