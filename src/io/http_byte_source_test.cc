#include "io/http_byte_source.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include "io/io_test_util.h"
#include "testing/nginx_test_server.h"
#include "record/tfrecord_reader.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe {
namespace {

// Ranges over HTTP equal the file's, at the start, inside, across the end and past it,
// from several threads at once.
TEST(HttpByteSourceTest, RangesEqualTheFile) {
  const std::string root = ScratchDir("http_root");
  const std::string bytes = Pattern(300000, 1);
  WriteFileAtomic(root + "/blob.bin", bytes, false);
  NginxTestServer server(root, ScratchDir("http_server"));
  HttpByteSource source(server.Url("blob.bin"));
  EXPECT_EQ(source.size(), bytes.size());
  EXPECT_FALSE(source.etag().empty());
  EXPECT_EQ(source.name(), server.Url("blob.bin"));
  EXPECT_EQ(ReadRange(source, 0, 1), bytes.substr(0, 1));
  EXPECT_EQ(ReadRange(source, 12345, 100000), bytes.substr(12345, 100000));
  EXPECT_EQ(ReadRange(source, 299990, 100), bytes.substr(299990));
  EXPECT_EQ(ReadRange(source, 300000, 10), "");
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        const uint64_t offset = (t * 7919 + i * 10007) % bytes.size();
        wrong[t] += ReadRange(source, offset, 5000) != bytes.substr(offset, 5000);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong, std::vector<int>(4, 0));
  EXPECT_EQ(source.retries(), 0u);
}

// TensorFlow's shards read over HTTP give the records the local files give: the gzip
// penguins sequentially, MNIST at random through the record offsets.
TEST(HttpByteSourceTest, TfRecordsOverHttpAreTheLocalOnes) {
  NginxTestServer server(TestDataPath("tfrecord"), ScratchDir("http_tfrecord"));
  for (const char* name : {"tfx/penguin-train-00000-of-00001.gz", "tfx/mnist.tfrecord"}) {
    SCOPED_TRACE(name);
    std::vector<std::string> local, remote;
    std::vector<uint64_t> offsets;
    TfRecordReader local_reader(TestDataPath(std::string("tfrecord/") + name));
    for (std::string r; local_reader.Next(&r);) {
      local.push_back(r);
      offsets.push_back(local_reader.record_offset());
    }
    TfRecordReader remote_reader(std::make_unique<HttpByteSource>(server.Url(name)));
    for (std::string r; remote_reader.Next(&r);) remote.push_back(r);
    EXPECT_EQ(remote, local);
    ASSERT_FALSE(local.empty());
    if (remote_reader.compression() == Compression::kNone) {
      TfRecordRandomReader random(std::make_unique<HttpByteSource>(server.Url(name)), 4096);
      for (size_t i : {local.size() - 1, size_t{0}, local.size() / 2}) {
        EXPECT_EQ(random.ReadAt(offsets[i]), local[i]);
      }
    }
  }
}

// 404 is not retried and says what to check; 503 is retried (with Retry-After) until the
// attempts run out, each attempt a request the server saw.
TEST(HttpByteSourceTest, NotFoundFailsAtOnceUnavailableIsRetried) {
  const std::string root = ScratchDir("http_faults");
  NginxTestServer server(root, ScratchDir("http_faults_server"));
  try {
    HttpByteSource missing(server.Url("no-such-shard.tfrecord"));
    ADD_FAILURE() << "no error";
  } catch (const HttpError& e) {
    EXPECT_EQ(e.status(), 404);
    EXPECT_NE(std::string(e.what()).find(server.Url("no-such-shard.tfrecord")), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("not found"), std::string::npos) << e.what();
  }
  HttpOptions quick;
  quick.max_attempts = 3;
  quick.base_delay_ms = 1;
  try {
    HttpByteSource unavailable(server.Url("fail503/shard.tfrecord"), quick);
    ADD_FAILURE() << "no error";
  } catch (const HttpError& e) {
    EXPECT_EQ(e.status(), 503);
    EXPECT_NE(std::string(e.what()).find("gave up after 3 attempts"), std::string::npos) << e.what();
  }
  EXPECT_EQ(server.Served(4), 4u);  // the log is written after each response
  const std::string log = server.AccessLog();
  size_t requests_404 = 0, requests_503 = 0;
  for (size_t at = 0; (at = log.find("no-such-shard", at)) != std::string::npos; ++at) ++requests_404;
  for (size_t at = 0; (at = log.find("fail503", at)) != std::string::npos; ++at) ++requests_503;
  EXPECT_EQ(requests_404, 1u);
  EXPECT_EQ(requests_503, 3u);
}

// An object replaced after it was opened is an error naming the URL (If-Match fails), never
// bytes of the new one.
TEST(HttpByteSourceTest, ChangedObjectIsADataError) {
  const std::string root = ScratchDir("http_changed");
  const std::string path = root + "/shard.bin";
  WriteFileAtomic(path, Pattern(50000, 2), false);
  NginxTestServer server(root, ScratchDir("http_changed_server"));
  HttpByteSource source(server.Url("shard.bin"));
  EXPECT_EQ(ReadRange(source, 100, 10), Pattern(50000, 2).substr(100, 10));
  WriteFileAtomic(path, Pattern(50000, 3), false);
  timeval later[2] = {{time(nullptr) + 60, 0}, {time(nullptr) + 60, 0}};
  ASSERT_EQ(utimes(path.c_str(), later), 0);  // a new ETag even within the same second
  try {
    ReadRange(source, 100, 10);
    ADD_FAILURE() << "read the new object";
  } catch (const DataError& e) {
    EXPECT_EQ(e.path(), server.Url("shard.bin"));
    EXPECT_NE(std::string(e.what()).find("changed"), std::string::npos) << e.what();
  }
}

// Opened by a GET of its first piece (no HEAD), a source reads that piece from memory
// and later ranges from the server again; an empty object opens too (nginx answers 416
// to bytes=0-..., and a HEAD follows).
TEST(HttpByteSourceTest, FirstPieceOpenSavesTheHeadAndTheFirstRead) {
  const std::string root = ScratchDir("http_first_piece");
  const std::string bytes = Pattern(300000, 4);
  WriteFileAtomic(root + "/blob.bin", bytes, false);
  WriteFileAtomic(root + "/empty.bin", "", false);
  NginxTestServer server(root, ScratchDir("http_first_piece_server"));
  const auto client = std::make_shared<const HttpClient>();
  HttpByteSource source(server.Url("blob.bin"), client, "", HttpByteSource::Open::kFirstPiece);
  EXPECT_EQ(source.size(), bytes.size());
  EXPECT_FALSE(source.etag().empty());
  EXPECT_EQ(ReadRange(source, 0, 4), bytes.substr(0, 4));
  EXPECT_EQ(ReadRange(source, 4, bytes.size()), bytes.substr(4));  // the rest of the piece: freed
  EXPECT_EQ(server.Served(1), 1u);
  EXPECT_EQ(server.AccessLog().find("HEAD"), std::string::npos) << server.AccessLog();
  EXPECT_EQ(ReadRange(source, 10, 20), bytes.substr(10, 20));  // from the server again
  EXPECT_EQ(server.Served(2), 2u);
  HttpByteSource empty(server.Url("empty.bin"), client, "", HttpByteSource::Open::kFirstPiece);
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_EQ(ReadRange(empty, 0, 10), "");
  EXPECT_EQ(client->retries(), 0u);
  EXPECT_THROW(HttpByteSource(server.Url("missing.bin"), client, "", HttpByteSource::Open::kFirstPiece),
               HttpError);
}

// The first piece is handed over whole, once, to a reader that asks for exactly its
// range; afterwards its bytes come from the server again. Read front to back, a source
// opened so costs one GET per piece, the first one its opening.
TEST(HttpByteSourceTest, FirstPieceIsHandedOverToItsReader) {
  const std::string root = ScratchDir("http_hand_over");
  const std::string bytes = Pattern(HttpByteSource::kPieceBytes + 5000, 7);
  WriteFileAtomic(root + "/blob.bin", bytes, false);
  NginxTestServer server(root, ScratchDir("http_hand_over_server"));
  const auto client = std::make_shared<const HttpClient>();
  {
    HttpByteSource source(server.Url("blob.bin"), client, "", HttpByteSource::Open::kFirstPiece);
    PieceBuffer piece;
    EXPECT_FALSE(source.TakeHeldPiece({0, 1000}, &piece));  // not the whole piece
    EXPECT_FALSE(source.TakeHeldPiece({1, HttpByteSource::kPieceBytes}, &piece));
    EXPECT_EQ(piece.capacity(), 0u);
    ASSERT_TRUE(source.TakeHeldPiece({0, HttpByteSource::kPieceBytes}, &piece));
    EXPECT_EQ(piece.view(), std::string_view(bytes).substr(0, HttpByteSource::kPieceBytes));
    EXPECT_FALSE(source.TakeHeldPiece({0, HttpByteSource::kPieceBytes}, &piece));  // once
    EXPECT_EQ(server.Served(1), 1u);
    EXPECT_EQ(ReadRange(source, 0, 10), bytes.substr(0, 10));  // from the server again
    EXPECT_EQ(server.Served(2), 2u);
  }
  auto source = std::make_unique<HttpByteSource>(server.Url("blob.bin"), client, "",
                                                 HttpByteSource::Open::kFirstPiece);
  const auto file = ReadFrontToBack(std::move(source));
  std::string got(bytes.size() + 1, '\0');
  size_t n = 0;
  while (size_t r = file->Read(got.data() + n, got.size() - n)) n += r;
  got.resize(n);
  EXPECT_EQ(got, bytes);
  EXPECT_EQ(server.Served(4), 4u);  // the opening GET and one for the rest
  EXPECT_EQ(client->retries(), 0u);
}

TEST(ContentRangeTest, ParsesWhatServersSendAndNothingElse) {
  const std::optional<ContentRange> r = ParseContentRange(" bytes 0-99/1000 ");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->first, 0u);
  EXPECT_EQ(r->last, 99u);
  EXPECT_EQ(r->total, 1000u);
  const std::optional<ContentRange> unknown = ParseContentRange("bytes 5-5/*");
  ASSERT_TRUE(unknown);
  EXPECT_FALSE(unknown->total);
  EXPECT_TRUE(ParseContentRange("bytes 0-18446744073709551614/18446744073709551615"));
  for (const char* bad : {"", "bytes", "bytes */1000", "bytes 5-4/10", "bytes 0-10/10", "bytes 0-9/10x",
                          "bytes -1-9/10", "bytes 0-9", "items 0-9/10", "bytes 0 -9/10", "bytes 0-9/",
                          "bytes 0-18446744073709551616/18446744073709551617", "bytes 0x1-9/10"}) {
    EXPECT_FALSE(ParseContentRange(bad)) << bad;
  }
}

}  // namespace
}  // namespace imgpipe
