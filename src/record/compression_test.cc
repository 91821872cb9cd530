#include "record/compression.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

#include "record/record_test_util.h"
#include "record/tfrecord_format.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe {
namespace {

using ::testing::HasSubstr;
using testing::RandomBytes;
using testing::TempDir;
using testing::WriteRaw;

// Compresses with zlib's own one-shot API (not our wrapper): gzip or zlib framing.
std::string ZlibCompress(const std::string& data, bool gzip) {
  z_stream stream{};
  EXPECT_EQ(deflateInit2(&stream, 6, Z_DEFLATED, gzip ? 31 : 15, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&stream, data.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

std::string ReadAllDecompressed(const std::string& path, Compression compression,
                                size_t chunk = 1000) {
  auto file = OpenDecompressedFile(path, compression);
  std::string out;
  std::string buffer(chunk, '\0');
  while (true) {
    size_t n = file->Read(buffer.data(), buffer.size());
    out.append(buffer.data(), n);
    if (n < buffer.size()) break;
  }
  return out;
}

// Compresses `data` through WrapCompressingFile into `path`, in pieces of varied size.
void WriteCompressed(const std::string& path, const std::string& data, Compression compression) {
  auto sink = OpenWritableFile(path);
  auto file = WrapCompressingFile(*sink, compression);
  size_t pos = 0;
  for (size_t piece = 1; pos < data.size(); piece = piece * 3 + 1) {
    size_t n = std::min(piece, data.size() - pos);
    file->Append(std::string_view(data).substr(pos, n));
    pos += n;
  }
  file->Close();
  sink->Close();
}

TEST(CompressionTest, ParsesNames) {
  EXPECT_EQ(ParseCompression(""), Compression::kNone);
  EXPECT_EQ(ParseCompression("none"), Compression::kNone);
  EXPECT_EQ(ParseCompression("gzip"), Compression::kGzip);
  EXPECT_EQ(ParseCompression("GZIP"), Compression::kGzip);
  EXPECT_EQ(ParseCompression("zlib"), Compression::kZlib);
  EXPECT_EQ(ParseCompression("ZLIB"), Compression::kZlib);
  EXPECT_THROW(ParseCompression("lz4"), Error);
  for (Compression c : {Compression::kNone, Compression::kGzip, Compression::kZlib}) {
    EXPECT_EQ(ParseCompression(CompressionName(c)), c);
  }
}

TEST(CompressionTest, RoundTripsThroughOurWriterAndZlib) {
  TempDir dir;
  std::string data = RandomBytes(300000, 1) + std::string(700000, 'a');
  for (Compression c : {Compression::kNone, Compression::kGzip, Compression::kZlib}) {
    SCOPED_TRACE(CompressionName(c));
    std::string path = dir.File(std::string("data.") + CompressionName(c));
    WriteCompressed(path, data, c);
    EXPECT_EQ(ReadAllDecompressed(path, c), data);
    EXPECT_EQ(ReadAllDecompressed(path, c, 1 << 20), data);
    EXPECT_EQ(DetectCompression(path), c);
    if (c != Compression::kNone) {
      EXPECT_LT(FileSize(path), data.size());
    }
    // zlib's own decoder agrees.
    if (c != Compression::kNone) {
      std::string compressed = ReadFile(path);
      std::string out(data.size(), '\0');
      z_stream stream{};
      ASSERT_EQ(inflateInit2(&stream, c == Compression::kGzip ? 31 : 15), Z_OK);
      stream.next_in = reinterpret_cast<Bytef*>(compressed.data());
      stream.avail_in = static_cast<uInt>(compressed.size());
      stream.next_out = reinterpret_cast<Bytef*>(out.data());
      stream.avail_out = static_cast<uInt>(out.size());
      EXPECT_EQ(inflate(&stream, Z_FINISH), Z_STREAM_END);
      inflateEnd(&stream);
      EXPECT_EQ(out, data);
    }
  }
}

TEST(CompressionTest, ReadsStreamsZlibWrote) {
  TempDir dir;
  std::string data = RandomBytes(5000, 2) + std::string(5000, 'b');
  WriteRaw(dir.File("a.gz"), ZlibCompress(data, true));
  WriteRaw(dir.File("a.z"), ZlibCompress(data, false));
  EXPECT_EQ(ReadAllDecompressed(dir.File("a.gz"), Compression::kGzip), data);
  EXPECT_EQ(ReadAllDecompressed(dir.File("a.z"), Compression::kZlib), data);
  EXPECT_EQ(DetectCompression(dir.File("a.gz")), Compression::kGzip);
  EXPECT_EQ(DetectCompression(dir.File("a.z")), Compression::kZlib);
}

TEST(CompressionTest, ReadsConcatenatedGzipMembers) {
  TempDir dir;
  std::string a = RandomBytes(3000, 3);
  std::string b = std::string(4000, 'x');
  WriteRaw(dir.File("two.gz"), ZlibCompress(a, true) + ZlibCompress(b, true));
  EXPECT_EQ(ReadAllDecompressed(dir.File("two.gz"), Compression::kGzip), a + b);
}

TEST(CompressionTest, RejectsBytesAfterZlibStream) {
  TempDir dir;
  WriteRaw(dir.File("a.z"), ZlibCompress("hello", false) + "junk");
  try {
    ReadAllDecompressed(dir.File("a.z"), Compression::kZlib);
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_EQ(e.path(), dir.File("a.z"));
    EXPECT_THAT(e.reason(), HasSubstr("after the end of the zlib stream"));
  }
}

TEST(CompressionTest, TruncatedStreamThrowsDataErrorNamingPath) {
  TempDir dir;
  std::string data = RandomBytes(200000, 4);
  for (bool gzip : {true, false}) {
    std::string compressed = ZlibCompress(data, gzip);
    for (size_t cut : {size_t{1}, size_t{10}, compressed.size() / 2, compressed.size() - 1}) {
      SCOPED_TRACE(std::string(gzip ? "gzip" : "zlib") + " cut " + std::to_string(cut));
      std::string path = dir.File("cut");
      WriteRaw(path, compressed.substr(0, cut));
      try {
        ReadAllDecompressed(path, gzip ? Compression::kGzip : Compression::kZlib);
        FAIL() << "no error";
      } catch (const DataError& e) {
        EXPECT_EQ(e.path(), path);
        EXPECT_THAT(e.what(), HasSubstr(path));
        EXPECT_THAT(e.reason(), HasSubstr("truncated"));
        EXPECT_EQ(e.offset(), cut);
      }
    }
  }
}

TEST(CompressionTest, ErrorSaysHowManyGoodBytesCameFirst) {
  TempDir dir;
  std::string data = RandomBytes(200000, 5);
  std::string compressed = ZlibCompress(data, true);
  WriteRaw(dir.File("cut.gz"), compressed.substr(0, compressed.size() - 100));
  auto file = OpenDecompressedFile(dir.File("cut.gz"), Compression::kGzip);
  std::string out(data.size(), '\0');
  try {
    file->Read(out.data(), out.size());
    FAIL() << "no error";
  } catch (const CompressedStreamError& e) {
    EXPECT_GT(e.bytes_read(), 0u);
    EXPECT_LT(e.bytes_read(), data.size());
    EXPECT_EQ(out.substr(0, e.bytes_read()), data.substr(0, e.bytes_read()));
  }
  // The file stays failed.
  EXPECT_THROW(file->Read(out.data(), out.size()), CompressedStreamError);
}

TEST(CompressionTest, CorruptStreamThrowsDataError) {
  TempDir dir;
  std::string compressed = ZlibCompress(std::string(100000, 'q') + RandomBytes(1000, 6), true);
  compressed[compressed.size() / 2] ^= 0x55;
  compressed[compressed.size() - 3] ^= 0x55;  // the gzip trailer's length
  WriteRaw(dir.File("bad.gz"), compressed);
  try {
    ReadAllDecompressed(dir.File("bad.gz"), Compression::kGzip);
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_EQ(e.path(), dir.File("bad.gz"));
    EXPECT_THAT(e.reason(), HasSubstr("corrupt gzip stream"));
  }
}

TEST(CompressionTest, EmptyFileIsEmpty) {
  TempDir dir;
  WriteRaw(dir.File("empty"), "");
  EXPECT_EQ(DetectCompression(dir.File("empty")), Compression::kNone);
  for (Compression c : {Compression::kNone, Compression::kGzip, Compression::kZlib}) {
    EXPECT_EQ(ReadAllDecompressed(dir.File("empty"), c), "");
  }
}

TEST(CompressionTest, DetectPrefersAValidRecordHeader) {
  TempDir dir;
  // Record lengths whose first bytes are the gzip magic (0x8b1f) or a zlib header (0x0178).
  for (uint64_t length : {uint64_t{0x088b1f}, uint64_t{0x0178}}) {
    std::string record(12 + length + 4, 'r');
    tfrecord::EncodeHeader(length, record.data());
    WriteRaw(dir.File("rec"), record);
    EXPECT_EQ(DetectCompression(dir.File("rec")), Compression::kNone) << length;
  }
  WriteRaw(dir.File("text"), "plain text, no magic");
  EXPECT_EQ(DetectCompression(dir.File("text")), Compression::kNone);
  // A zlib-looking header whose data does not inflate.
  WriteRaw(dir.File("fake"), std::string("\x78\x01", 2) + std::string(20, '\xff'));
  EXPECT_EQ(DetectCompression(dir.File("fake")), Compression::kNone);
}

TEST(CompressionTest, DetectAndOpenThrowIoErrorNamingPath) {
  TempDir dir;
  for (const std::string& path : {dir.path(), dir.File("missing")}) {
    try {
      DetectCompression(path);
      FAIL() << "no error for " << path;
    } catch (const IoError& e) {
      EXPECT_THAT(e.what(), HasSubstr(path));
    }
    EXPECT_THROW(OpenDecompressedFile(path, Compression::kGzip), IoError);
  }
}

TEST(CompressionTest, CloseLeavesTheSinkOpen) {
  TempDir dir;
  for (Compression c : {Compression::kNone, Compression::kGzip, Compression::kZlib}) {
    SCOPED_TRACE(CompressionName(c));
    std::string path = dir.File("sink");
    auto sink = OpenWritableFile(path);
    auto file = WrapCompressingFile(*sink, c);
    EXPECT_EQ(file->path(), path);
    file->Append("hello");
    file->Flush();
    file->Append(" world");
    file->Close();
    // The stream is complete on disk before the sink closes, and the sink still works.
    EXPECT_EQ(ReadAllDecompressed(path, c), "hello world");
    sink->Append("");
    sink->Close();
    if (c != Compression::kNone) {
      EXPECT_THROW(file->Append("more"), Error);
    }
  }
}

}  // namespace
}  // namespace imgpipe
