#include "record/compression.h"

#include <zlib.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "io/storage.h"
#include "record/tfrecord_format.h"
#include "util/error.h"

namespace imgpipe {
namespace {

constexpr size_t kCompressedBufferSize = 256 << 10;
// Bytes DetectCompression reads to decide.
constexpr size_t kDetectBytes = 4096;

// zlib's windowBits: 15 for a zlib stream, 15 + 16 for a gzip stream.
int WindowBits(Compression compression) { return compression == Compression::kGzip ? 15 + 16 : 15; }

std::string ZlibMessage(const z_stream& stream, int code) {
  if (stream.msg != nullptr) return stream.msg;
  return "zlib error " + std::to_string(code);
}

// Inflates a whole-file gzip stream (also concatenated gzip members) or zlib stream.
class InflatingFile : public SequentialFile {
 public:
  InflatingFile(std::unique_ptr<SequentialFile> source, Compression compression)
      : source_(std::move(source)), compression_(compression), input_(kCompressedBufferSize) {
    if (inflateInit2(&stream_, WindowBits(compression_)) != Z_OK) {
      throw Error(source_->path() + ": cannot initialise zlib");
    }
  }
  ~InflatingFile() override { inflateEnd(&stream_); }

  size_t Read(char* buffer, size_t n) override {
    if (failed_) throw *failed_;
    size_t done = 0;
    try {
      while (done < n) {
        // zlib counts in uInt: inflate very large reads in pieces.
        size_t piece = std::min<size_t>(n - done, size_t{1} << 30);
        stream_.next_out = reinterpret_cast<Bytef*>(buffer + done);
        stream_.avail_out = static_cast<uInt>(piece);
        InflateUntilFullOrEnd();
        done += piece - stream_.avail_out;
        if (stream_.avail_out > 0) break;
      }
    } catch (const DataError& e) {
      // Say how many good bytes this call produced; later calls fail the same way.
      size_t produced = static_cast<size_t>(reinterpret_cast<char*>(stream_.next_out) - buffer);
      failed_ = CompressedStreamError(e.path(), e.offset().value_or(0), e.reason(), 0);
      throw CompressedStreamError(e.path(), e.offset().value_or(0), e.reason(), produced);
    }
    return done;
  }
  const std::string& path() const override { return source_->path(); }

 private:
  // Inflates into stream_.next_out until avail_out is 0 or the stream ends.
  void InflateUntilFullOrEnd() {
    while (stream_.avail_out > 0) {
      // 1. Refill the input.
      if (stream_.avail_in == 0 && !source_end_) {
        size_t got = source_->Read(reinterpret_cast<char*>(input_.data()), input_.size());
        source_end_ = got < input_.size();
        stream_.next_in = input_.data();
        stream_.avail_in = static_cast<uInt>(got);
        compressed_read_ += got;
      }
      if (stream_.avail_in == 0) {
        // 2. No more input: a clean end, an empty file, or a truncated stream.
        if (member_ended_ || compressed_read_ == 0) return;
        Fail("truncated " + std::string(CompressionName(compression_)) + " stream");
      }
      // 3. A gzip member ended and input follows: the next member starts.
      if (member_ended_) {
        if (compression_ != Compression::kGzip) {
          Fail("unexpected bytes after the end of the zlib stream");
        }
        inflated_before_ += stream_.total_out;
        inflateReset(&stream_);
        member_ended_ = false;
      }
      int code = inflate(&stream_, Z_NO_FLUSH);
      if (code == Z_STREAM_END) {
        member_ended_ = true;
      } else if (code != Z_OK && code != Z_BUF_ERROR) {
        Fail("corrupt " + std::string(CompressionName(compression_)) + " stream (" +
             ZlibMessage(stream_, code) + ")");
      }
    }
  }

  [[noreturn]] void Fail(const std::string& what) {
    uint64_t compressed_offset = compressed_read_ - stream_.avail_in;
    throw DataError(source_->path(), compressed_offset,
                    what + " at compressed offset " + std::to_string(compressed_offset) +
                        ", after " + std::to_string(stream_.total_out + inflated_before_) +
                        " uncompressed bytes");
  }

  std::unique_ptr<SequentialFile> source_;
  Compression compression_;
  std::vector<Bytef> input_;
  z_stream stream_{};
  bool source_end_ = false;
  bool member_ended_ = false;
  uint64_t compressed_read_ = 0;
  uint64_t inflated_before_ = 0;
  std::optional<CompressedStreamError> failed_;  // set once the stream is found bad
};

// Appends to a sink it does not own; Close flushes the sink and leaves it open.
class PassThroughFile : public WritableFile {
 public:
  explicit PassThroughFile(WritableFile& sink) : sink_(sink) {}
  void Append(std::string_view data) override { sink_.Append(data); }
  void Flush() override { sink_.Flush(); }
  void Sync() override { sink_.Sync(); }
  void Close() override { sink_.Flush(); }
  const std::string& path() const override { return sink_.path(); }

 private:
  WritableFile& sink_;
};

// Deflates appended bytes into a sink it does not own.
class DeflatingFile : public WritableFile {
 public:
  DeflatingFile(WritableFile& sink, Compression compression)
      : sink_(sink), output_(kCompressedBufferSize) {
    if (deflateInit2(&stream_, Z_DEFAULT_COMPRESSION, Z_DEFLATED, WindowBits(compression), 8,
                     Z_DEFAULT_STRATEGY) != Z_OK) {
      throw Error(sink_.path() + ": cannot initialise zlib");
    }
  }
  ~DeflatingFile() override { deflateEnd(&stream_); }

  void Append(std::string_view data) override {
    CheckOpen();
    while (!data.empty()) {
      // zlib counts in uInt; feed very large appends in pieces.
      size_t piece = std::min<size_t>(data.size(), 1u << 30);
      Deflate(data.substr(0, piece), Z_NO_FLUSH);
      data.remove_prefix(piece);
    }
  }
  // Pushes everything appended so far into the sink (a zlib sync flush) and flushes it.
  void Flush() override {
    CheckOpen();
    Deflate({}, Z_SYNC_FLUSH);
    sink_.Flush();
  }
  void Sync() override {
    Flush();
    sink_.Sync();
  }
  void Close() override {
    if (closed_) return;
    Deflate({}, Z_FINISH);
    closed_ = true;
    sink_.Flush();
  }
  const std::string& path() const override { return sink_.path(); }

 private:
  void CheckOpen() const {
    if (closed_) throw Error(sink_.path() + ": write after the compressed stream was closed");
  }

  void Deflate(std::string_view data, int flush) {
    stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    stream_.avail_in = static_cast<uInt>(data.size());
    while (true) {
      stream_.next_out = output_.data();
      stream_.avail_out = static_cast<uInt>(output_.size());
      int code = deflate(&stream_, flush);
      if (code == Z_STREAM_ERROR) throw Error(sink_.path() + ": zlib deflate failed");
      size_t produced = output_.size() - stream_.avail_out;
      if (produced > 0) {
        sink_.Append(std::string_view(reinterpret_cast<const char*>(output_.data()), produced));
      }
      // Done when zlib had room to spare (so it has nothing more to emit) and took all
      // the input; Z_FINISH is done at Z_STREAM_END.
      if (flush == Z_FINISH ? code == Z_STREAM_END
                            : stream_.avail_out > 0 && stream_.avail_in == 0) {
        return;
      }
    }
  }

  WritableFile& sink_;
  std::vector<Bytef> output_;
  z_stream stream_{};
  bool closed_ = false;
};

// Whether `head` (the first bytes of a file) inflates as a zlib stream without error.
bool InflatesAsZlib(const std::string& head) {
  z_stream stream{};
  if (inflateInit2(&stream, 15) != Z_OK) return false;
  std::vector<Bytef> out(64 << 10);
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(head.data()));
  stream.avail_in = static_cast<uInt>(head.size());
  int code = Z_OK;
  while (code == Z_OK && stream.avail_in > 0) {
    stream.next_out = out.data();
    stream.avail_out = static_cast<uInt>(out.size());
    code = inflate(&stream, Z_NO_FLUSH);
  }
  inflateEnd(&stream);
  return code == Z_OK || code == Z_STREAM_END || code == Z_BUF_ERROR;
}


// The compression the first bytes of a file say (DetectCompression's rules).
Compression CompressionOfHead(const std::string& head) {
  // 1. A valid TFRecord header wins: a record length can begin with either magic.
  if (head.size() >= tfrecord::kHeaderSize && tfrecord::DecodeHeader(head.data())) {
    return Compression::kNone;
  }
  // 2. Gzip magic and the deflate method.
  if (head.size() >= 3 && static_cast<unsigned char>(head[0]) == 0x1f &&
      static_cast<unsigned char>(head[1]) == 0x8b && head[2] == 8) {
    return Compression::kGzip;
  }
  // 3. A zlib header (deflate, window <= 32K, check bits) whose data inflates.
  if (head.size() >= 2) {
    unsigned cmf = static_cast<unsigned char>(head[0]);
    unsigned flg = static_cast<unsigned char>(head[1]);
    if ((cmf & 0x0f) == 8 && (cmf >> 4) <= 7 && (cmf * 256 + flg) % 31 == 0 &&
        InflatesAsZlib(head)) {
      return Compression::kZlib;
    }
  }
  return Compression::kNone;
}

}  // namespace

Compression ParseCompression(const std::string& name) {
  if (name.empty() || name == "none" || name == "NONE") return Compression::kNone;
  if (name == "gzip" || name == "GZIP") return Compression::kGzip;
  if (name == "zlib" || name == "ZLIB") return Compression::kZlib;
  throw Error("unknown compression '" + name + "' (expected none, gzip or zlib)");
}

const char* CompressionName(Compression compression) {
  switch (compression) {
    case Compression::kNone: return "none";
    case Compression::kGzip: return "gzip";
    case Compression::kZlib: return "zlib";
  }
  return "?";
}

Compression DetectCompression(const std::string& path) {
  if (IsUrl(path)) return DetectCompression(*OpenByteSource(path));
  auto file = OpenSequentialFile(path);
  std::string head(kDetectBytes, '\0');
  head.resize(file->Read(head.data(), head.size()));
  return CompressionOfHead(head);
}

Compression DetectCompression(const ByteSource& source) {
  std::string head(kDetectBytes, '\0');
  head.resize(source.Read(0, head.data(), head.size()));
  return CompressionOfHead(head);
}


std::unique_ptr<SequentialFile> OpenDecompressedFile(const std::string& path,
                                                     Compression compression) {
  return WrapDecompressingFile(OpenSequentialFile(path), compression);
}

std::unique_ptr<SequentialFile> WrapDecompressingFile(std::unique_ptr<SequentialFile> file,
                                                      Compression compression) {
  if (compression == Compression::kNone) return file;
  return std::make_unique<InflatingFile>(std::move(file), compression);
}

std::unique_ptr<WritableFile> WrapCompressingFile(WritableFile& sink, Compression compression) {
  if (compression == Compression::kNone) return std::make_unique<PassThroughFile>(sink);
  return std::make_unique<DeflatingFile>(sink, compression);
}

}  // namespace imgpipe
