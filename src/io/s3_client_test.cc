#include "io/s3_client.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "io/aws_sigv4.h"
#include "io/io_test_util.h"
#include "testing/s3_test_server.h"
#include "io/storage.h"
#include "record/tfrecord_reader.h"
#include "util/error.h"

namespace imgpipe {
namespace {

// One s3rver for the suite (Node.js takes about a second to start).
class S3ClientTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = new S3TestServer({"shards", "other"}, ScratchDir("s3rver")); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  // A client of s3rver with its keys (or `secret`), path-style, small pages and parts.
  static S3ClientOptions Options(const std::string& secret = "S3RVER") {
    S3ClientOptions o;
    o.settings.credentials = {"S3RVER", secret, ""};
    o.settings.region = "us-east-1";
    o.settings.endpoint_url = server_->endpoint();
    o.settings.path_style = true;
    o.http.base_delay_ms = 1;
    o.list_page_size = 2;
    o.multipart_threshold = 6u << 20;
    o.part_size = 5u << 20;
    return o;
  }
  static S3TestServer* server_;
};
S3TestServer* S3ClientTest::server_ = nullptr;

// Objects written by PUT and by a multipart upload read back whole and by ranges; the
// listing goes page by page (2 keys a page) and with "/" leaves the sub-folder out.
TEST_F(S3ClientTest, PutListGetAndMultipart) {
  const S3Client s3(Options());
  std::vector<std::string> keys;
  for (int i = 0; i < 5; ++i) {
    keys.push_back("list/obj-" + std::to_string(i) + " & name.bin");  // encoded in paths and XML
    s3.Put("shards", keys.back(), Pattern(1000 + i, i));
  }
  s3.Put("shards", "list/sub/inner.bin", "x");
  std::vector<std::string> listed;
  for (const S3Object& o : s3.List("shards", "list/", "/")) {
    listed.push_back(o.key);
    EXPECT_EQ(o.size, 1000 + (o.key[9] - '0'));
  }
  EXPECT_EQ(listed, keys);
  EXPECT_EQ(s3.List("shards", "list/").size(), 6u);
  EXPECT_EQ(s3.Get("shards", keys[3]), Pattern(1003, 3));
  EXPECT_TRUE(s3.Exists("shards", keys[0]));
  EXPECT_FALSE(s3.Exists("shards", "list/missing"));

  const std::string big = Pattern((12u << 20) + 12345, 7);  // 3 parts
  s3.Put("shards", "big.bin", big);
  EXPECT_EQ(s3.Get("shards", "big.bin"), big);
  const auto source = s3.Open("shards", "big.bin", "s3://shards/big.bin");
  EXPECT_EQ(source->size(), big.size());
  EXPECT_EQ(source->name(), "s3://shards/big.bin");
  EXPECT_EQ(ReadRange(*source, 5u << 20, 100000), big.substr(5u << 20, 100000));
  EXPECT_EQ(s3.http().retries(), 0u);
}

// A server of one response that keeps the head of the request it answered.
class CaptureServer {
 public:
  CaptureServer() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (bind(fd_, reinterpret_cast<sockaddr*>(&address), length) != 0 || listen(fd_, 1) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      throw Error("capture server: cannot listen");
    }
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] {
      const int client = accept(fd_, nullptr, nullptr);
      char buffer[4096];
      while (head_.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = recv(client, buffer, sizeof buffer, 0);
        if (n <= 0) break;
        head_.append(buffer, static_cast<size_t>(n));
      }
      const std::string answer = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc";
      send(client, answer.data(), answer.size(), MSG_NOSIGNAL);
      close(client);
    });
  }
  ~CaptureServer() {
    if (thread_.joinable()) thread_.join();
    close(fd_);
  }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // The request head received (after the response was sent).
  std::string Head() {
    thread_.join();
    return head_;
  }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::string head_;
};

// The value of header `name` (lower-case) in the request head `head`.
std::string HeaderOf(const std::string& head, const std::string& name) {
  std::istringstream lines(head);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::string lower = line.substr(0, line.find(':'));
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == name) return line.substr(line.find(':') + 2);
  }
  return "";
}

// The signature a request carries on the wire is the one SignSigV4 computes again from
// what was captured: method, path (decoded once), query, host, x-amz-date and the payload
// hash, with the keys; and the secret is nowhere in the request.
TEST(S3SignatureTest, CapturedRequestsCarryTheSignatureRecomputedFromThem) {
  CaptureServer server;
  S3ClientOptions o;
  o.settings.credentials = {"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "token/+="};
  o.settings.region = "eu-west-3";
  o.settings.endpoint_url = server.endpoint();
  o.settings.path_style = true;
  const S3Client s3(o);
  EXPECT_EQ(s3.Get("bucket", "dir/a b+c~.tfrecord"), "abc");
  const std::string head = server.Head();
  EXPECT_EQ(head.rfind("GET /bucket/dir/a%20b%2Bc~.tfrecord HTTP/1.1\r\n", 0), 0u) << head;
  EXPECT_EQ(head.find("wJalrXUtnFEMI"), std::string::npos);
  SigV4Request r;
  r.method = "GET";
  r.host = HeaderOf(head, "host");
  r.path = "/bucket/dir/a b+c~.tfrecord";
  r.payload_sha256 = HeaderOf(head, "x-amz-content-sha256");
  EXPECT_EQ(r.payload_sha256, Sha256Hex(""));
  const SigV4Signature want = SignSigV4(r, o.settings.credentials, {"eu-west-3", "s3"},
                                        HeaderOf(head, "x-amz-date"));
  EXPECT_EQ(HeaderOf(head, "authorization"), want.authorization);
  EXPECT_EQ(HeaderOf(head, "x-amz-security-token"), "token/+=");
  EXPECT_NE(want.authorization.find("Credential=AKIDEXAMPLE/"), std::string::npos);
}

// s3:// and gs:// URLs through the storage functions, configured by the environment as a
// user would: TensorFlow's MNIST shard read from either gives the local records.
TEST_F(S3ClientTest, StorageReadsS3AndGsUrls) {
  server_->PointStorageHere();
  const std::string local = TestDataPath("tfrecord/tfx/mnist.tfrecord");
  WriteStorageFile("s3://shards/mnist/train.tfrecord", ReadFile(local));
  EXPECT_TRUE(StorageExists("gs://shards/mnist/train.tfrecord"));
  EXPECT_FALSE(StorageExists("s3://shards/mnist/none.tfrecord"));
  EXPECT_TRUE(IsStorageFolder("s3://shards/mnist"));
  EXPECT_FALSE(IsStorageFolder("s3://shards/mnist/train.tfrecord"));
  EXPECT_EQ(ListStorageFolder("gs://shards/mnist/"), std::vector<std::string>{"train.tfrecord"});
  EXPECT_EQ(StorageSize("s3://shards/mnist/train.tfrecord"), FileSize(local));
  std::vector<std::string> want;
  TfRecordReader local_reader(local);
  for (std::string r; local_reader.Next(&r);) want.push_back(r);
  for (const char* url : {"s3://shards/mnist/train.tfrecord", "gs://shards/mnist/train.tfrecord"}) {
    SCOPED_TRACE(url);
    std::vector<std::string> got;
    TfRecordReader reader(url);
    for (std::string r; reader.Next(&r);) got.push_back(r);
    EXPECT_EQ(got, want);
    EXPECT_EQ(reader.path(), url);
  }
  try {
    OpenByteSource("s3://no-such-bucket/x.tfrecord");
    ADD_FAILURE() << "no error";
  } catch (const HttpError& e) {
    EXPECT_EQ(e.status(), 404);
    EXPECT_NE(std::string(e.what()).find("check the URL"), std::string::npos) << e.what();
  }
  ResetStorageClients();
}

TEST(ListObjectsV2Test, ParsesPagesAndDecodesKeys) {
  const S3ListPage page = ParseListObjectsV2(
      "<?xml version=\"1.0\"?><ListBucketResult><Name>b</Name><IsTruncated>true</IsTruncated>"
      "<Contents><Key>a&amp;b &lt;1&gt;&#233;.tfrecord</Key><Size>12</Size><ETag>&quot;e1&quot;</ETag></Contents>"
      "<Contents><Key>c</Key><Size>0</Size></Contents>"
      "<CommonPrefixes><Prefix>sub/</Prefix></CommonPrefixes>"
      "<NextContinuationToken>tok+/=</NextContinuationToken></ListBucketResult>",
      "http://x/b");
  ASSERT_EQ(page.objects.size(), 2u);
  EXPECT_EQ(page.objects[0].key, "a&b <1>\xC3\xA9.tfrecord");
  EXPECT_EQ(page.objects[0].size, 12u);
  EXPECT_EQ(page.objects[0].etag, "\"e1\"");
  EXPECT_EQ(page.objects[1].key, "c");
  EXPECT_EQ(page.common_prefixes, std::vector<std::string>{"sub/"});
  EXPECT_TRUE(page.truncated);
  EXPECT_EQ(page.next_token, "tok+/=");
}

TEST(ListObjectsV2Test, MalformedResponsesAreDataErrors) {
  const char* bad[] = {
      "<Error><Code>AccessDenied</Code></Error>",
      "<ListBucketResult><Contents><Size>1</Size></Contents></ListBucketResult>",
      "<ListBucketResult><Contents><Key>k</Key><Size>-1</Size></Contents></ListBucketResult>",
      "<ListBucketResult><Contents><Key>k</Key><Size>12x</Size></Contents></ListBucketResult>",
      "<ListBucketResult><Contents><Key>k</Key><Size> -5</Size></Contents></ListBucketResult>",
      "<ListBucketResult><Contents><Key>k</Key><Size>99999999999999999999</Size></Contents></ListBucketResult>",
      "<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>",
  };
  for (const char* xml : bad) {
    SCOPED_TRACE(xml);
    try {
      ParseListObjectsV2(xml, "http://x/b?list-type=2");
      ADD_FAILURE() << "parsed";
    } catch (const DataError& e) {
      EXPECT_EQ(e.path(), "http://x/b?list-type=2");
    }
  }
}

TEST(ObjectUrlTest, SplitsBucketAndKey) {
  const ObjectUrl o = ParseObjectUrl("s3://bucket/a/b c.tfrecord");
  EXPECT_EQ(o.scheme, "s3");
  EXPECT_EQ(o.bucket, "bucket");
  EXPECT_EQ(o.key, "a/b c.tfrecord");
  EXPECT_EQ(ParseObjectUrl("gs://b").key, "");
  EXPECT_THROW(ParseObjectUrl("s3:///key"), InvalidArgument);
  EXPECT_THROW(ParseObjectUrl("ftp://b/k"), InvalidArgument);
}

TEST(ExpandBracesTest, RangesKeepTheirWidthListsTheirOrder) {
  EXPECT_EQ(ExpandBraces("https://h/train-{00000..00002}-of-00003.tfrecord"),
            (std::vector<std::string>{"https://h/train-00000-of-00003.tfrecord",
                                      "https://h/train-00001-of-00003.tfrecord",
                                      "https://h/train-00002-of-00003.tfrecord"}));
  EXPECT_EQ(ExpandBraces("{b,a}-{8..10}"),
            (std::vector<std::string>{"b-8", "b-9", "b-10", "a-8", "a-9", "a-10"}));
  EXPECT_EQ(ExpandBraces("plain"), std::vector<std::string>{"plain"});
  EXPECT_THROW(ExpandBraces("a{1..2"), InvalidArgument);
  EXPECT_THROW(ExpandBraces("a}"), InvalidArgument);
  EXPECT_THROW(ExpandBraces("}{}"), InvalidArgument);    // found by s3_response_fuzzer
  EXPECT_THROW(ExpandBraces("{a{b}"), InvalidArgument);  // braces do not nest
  EXPECT_THROW(ExpandBraces("{0..999}{0..999}{0..999}"), InvalidArgument);  // counted first
  EXPECT_THROW(ExpandBraces("{5..1}"), InvalidArgument);
  EXPECT_THROW(ExpandBraces("{0..9999999}"), InvalidArgument);
  EXPECT_THROW(ExpandBraces("{a..b}"), InvalidArgument);
}

}  // namespace
}  // namespace imgpipe
