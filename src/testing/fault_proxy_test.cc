#include "testing/fault_proxy.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "io/http_byte_source.h"
#include "io/io_test_util.h"
#include "testing/nginx_test_server.h"
#include "util/error.h"
#include "util/file.h"
#include "util/subprocess.h"

namespace imgpipe {
namespace {

using Kind = FaultProxy::Fault::Kind;
using Clock = std::chrono::steady_clock;

int64_t MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

// "127.0.0.1:PORT" of `server`.
std::string HostPort(const NginxTestServer& server) { return "127.0.0.1:" + std::to_string(server.port()); }

// Retries after 10-20 ms instead of 100-200 ms.
HttpOptions QuickRetries() {
  HttpOptions options;
  options.base_delay_ms = 10;
  return options;
}

// A folder named after `name` holding blob.bin, `bytes`.
std::string RootWithBlob(const std::string& name, const std::string& bytes) {
  const std::string root = ScratchDir(name + "_root");
  WriteFileAtomic(root + "/blob.bin", bytes, false);
  return root;
}

// A 300,000-byte file, blob.bin, served by nginx with a proxy in front of it.
struct ProxiedFile {
  explicit ProxiedFile(const std::string& name)
      : bytes(Pattern(300000, 7)),
        server(RootWithBlob(name, bytes), ScratchDir(name + "_nginx")),
        proxy(HostPort(server)) {}

  // Requests nginx logged, waited for (NginxTestServer::Served).
  size_t served(size_t expected) const { return server.Served(expected); }

  const std::string bytes;
  NginxTestServer server;
  FaultProxy proxy;
};

// A socket connected to 127.0.0.1:`port` that gives up reading after 5 s.
int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval timeout{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    throw IoError("127.0.0.1:" + std::to_string(port), "connect", errno);
  }
  return fd;
}

void Send(int fd, const std::string& bytes) {
  ASSERT_EQ(send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
}

// Up to `n` bytes from `fd`, fewer when it closes or is silent for 5 s.
std::string Receive(int fd, size_t n) {
  std::string out;
  char chunk[65536];
  while (out.size() < n) {
    const ssize_t got = recv(fd, chunk, std::min(sizeof chunk, n - out.size()), 0);
    if (got <= 0) break;
    out.append(chunk, static_cast<size_t>(got));
  }
  return out;
}

// An HTTP/1.1 server for framing tests: answers the requests it reads (head plus
// Content-Length body) with `responses`, in order, and keeps them; an empty response
// closes the connection instead and accepts the next.
class ScriptedUpstream {
 public:
  explicit ScriptedUpstream(std::vector<std::string> responses) : responses_(std::move(responses)) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    sockaddr* any = reinterpret_cast<sockaddr*>(&address);
    if (bind(listen_fd_, any, length) != 0 || listen(listen_fd_, 4) != 0 ||
        getsockname(listen_fd_, any, &length) != 0) {
      throw IoError("127.0.0.1:0", "listen", errno);
    }
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { Run(); });
  }
  ~ScriptedUpstream() {
    shutdown(listen_fd_, SHUT_RDWR);
    thread_.join();
    close(listen_fd_);
  }

  std::string HostPort() const { return "127.0.0.1:" + std::to_string(port_); }
  // The requests received, each head and body as sent.
  std::vector<std::string> requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  // The connections accepted.
  int connections() const {
    std::lock_guard<std::mutex> lock(mu_);
    return connections_;
  }

 private:
  void Run() {
    for (size_t next = 0; next < responses_.size(); ++next) {
      const int fd = accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      {
        std::lock_guard<std::mutex> lock(mu_);
        ++connections_;
      }
      std::string buffer;
      while (next < responses_.size() && !responses_[next].empty() &&
             Answer(fd, buffer, responses_[next])) {
        ++next;
      }
      close(fd);
    }
  }

  // Reads a request from `fd` (`buffer`: bytes read before), keeps it and sends `response`;
  // false when the connection ends first.
  bool Answer(int fd, std::string& buffer, const std::string& response) {
    size_t end;
    while ((end = buffer.find("\r\n\r\n")) == std::string::npos) {
      const std::string more = Receive(fd, 1);
      if (more.empty()) return false;
      buffer += more;
    }
    const size_t at = buffer.find("Content-Length: ");
    const size_t size = end + 4 + (at < end ? std::stoul(buffer.substr(at + 16)) : 0);
    buffer += Receive(fd, size - std::min(buffer.size(), size));
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(buffer.substr(0, size));
    }
    buffer.erase(0, size);
    const ssize_t sent = send(fd, response.data(), response.size(), MSG_NOSIGNAL);
    return sent == static_cast<ssize_t>(response.size());
  }

  std::vector<std::string> responses_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mu_;
  std::vector<std::string> requests_;  // guarded by mu_
  int connections_ = 0;                // guarded by mu_
};

// Ranges read through the proxy equal the file's, from several threads at once, over
// kept-alive connections: every request reaches nginx once, and a fault for other
// requests (PUT) stays queued.
TEST(FaultProxyTest, ForwardsRangesOverKeptAliveConnections) {
  ProxiedFile file("proxy_plain");
  file.proxy.AddFault({Kind::kDropConnection, "", "PUT"});
  HttpByteSource source(file.proxy.Url("blob.bin"), QuickRetries());
  EXPECT_EQ(source.size(), file.bytes.size());
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        const uint64_t offset = (t * 7919 + i * 10007) % file.bytes.size();
        wrong[t] += ReadRange(source, offset, 20000) != file.bytes.substr(offset, 20000);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong, std::vector<int>(4, 0));
  EXPECT_EQ(source.retries(), 0u);
  EXPECT_EQ(file.proxy.requests(), 101u);  // the HEAD and 100 GETs
  EXPECT_EQ(file.served(101), 101u);
  EXPECT_GE(file.proxy.connections(), 1u);
  EXPECT_LE(file.proxy.connections(), 4u);  // one per thread at most: kept alive
  EXPECT_EQ(file.proxy.faults_applied(), 0u);
  EXPECT_EQ(file.proxy.pending_faults(), 1u);
}

// A new connection dropped without an answer is one retry. libcurl itself sends a request
// again when a kept-alive connection closes without an answer (not counted as a retry), so
// a GET dropped twice is one retry. Dropped requests never reach nginx.
TEST(FaultProxyTest, DroppedConnectionIsRetried) {
  ProxiedFile file("proxy_drop");
  file.proxy.AddFault({Kind::kDropConnection, "blob.bin", "HEAD"});
  HttpByteSource source(file.proxy.Url("blob.bin"), QuickRetries());
  EXPECT_EQ(source.size(), file.bytes.size());
  EXPECT_EQ(source.retries(), 1u);
  EXPECT_EQ(ReadRange(source, 5, 100000), file.bytes.substr(5, 100000));
  EXPECT_EQ(source.retries(), 1u);
  file.proxy.AddFault({Kind::kDropConnection, "blob.bin", "GET"});
  file.proxy.AddFault({Kind::kDropConnection, "blob.bin", "GET"});
  EXPECT_EQ(ReadRange(source, 7, 1000), file.bytes.substr(7, 1000));
  EXPECT_EQ(source.retries(), 2u);
  EXPECT_EQ(file.proxy.faults_applied(Kind::kDropConnection), 3u);
  EXPECT_EQ(file.proxy.faults_applied(), 3u);
  EXPECT_EQ(file.proxy.pending_faults(), 0u);
  EXPECT_EQ(file.proxy.requests(), 6u);
  EXPECT_EQ(file.served(3), 3u);
  EXPECT_EQ(file.proxy.connections(), 4u);  // a new one after each drop
}

// 503 SlowDown with Retry-After: 1 is one retry, a second later, on the same connection.
TEST(FaultProxyTest, SlowDownIsRetriedAfterRetryAfter) {
  ProxiedFile file("proxy_503");
  file.proxy.AddFault({.kind = Kind::kServiceUnavailable, .path_contains = "blob.bin",
                       .method = "GET", .retry_after_seconds = 1});
  HttpByteSource source(file.proxy.Url("blob.bin"), QuickRetries());
  const Clock::time_point start = Clock::now();
  EXPECT_EQ(ReadRange(source, 1000, 50000), file.bytes.substr(1000, 50000));
  EXPECT_GE(MillisecondsSince(start), 990);
  EXPECT_EQ(source.retries(), 1u);
  EXPECT_EQ(file.proxy.faults_applied(Kind::kServiceUnavailable), 1u);
  EXPECT_EQ(file.proxy.requests(), 3u);
  EXPECT_EQ(file.served(2), 2u);
  EXPECT_EQ(file.proxy.connections(), 1u);
}

// A body cut after 1000 bytes is resumed from its 1001st: the bytes are the file's and
// nginx served the rest once more.
TEST(FaultProxyTest, TruncatedBodyIsResumed) {
  ProxiedFile file("proxy_truncate");
  file.proxy.AddFault({.kind = Kind::kTruncateBody, .path_contains = "blob.bin",
                       .method = "GET", .after_body_bytes = 1000});
  HttpByteSource source(file.proxy.Url("blob.bin"), QuickRetries());
  EXPECT_EQ(ReadRange(source, 0, 300000), file.bytes);
  EXPECT_EQ(source.retries(), 1u);
  EXPECT_EQ(file.proxy.faults_applied(Kind::kTruncateBody), 1u);
  EXPECT_EQ(file.proxy.requests(), 3u);
  EXPECT_EQ(file.served(3), 3u);
  EXPECT_EQ(file.proxy.connections(), 2u);  // the cut closed the first
}

// A body that stalls after 1000 bytes is given up after low_speed_seconds and resumed;
// the proxy's destructor ends the stall at once.
TEST(FaultProxyTest, StalledBodyIsRetriedAndStopsWithTheProxy) {
  auto file = std::make_unique<ProxiedFile>("proxy_stall");
  file->proxy.AddFault({.kind = Kind::kStallBody, .path_contains = "blob.bin", .method = "GET",
                        .after_body_bytes = 1000, .stall_ms = 10000});
  HttpOptions options = QuickRetries();
  options.low_speed_bytes = 1024;
  options.low_speed_seconds = 1;
  HttpByteSource source(file->proxy.Url("blob.bin"), options);
  const Clock::time_point start = Clock::now();
  EXPECT_EQ(ReadRange(source, 0, 300000), file->bytes);
  const int64_t elapsed = MillisecondsSince(start);
  EXPECT_GE(elapsed, 900);
  EXPECT_LT(elapsed, 5000);  // the client gave up, long before the stall ended
  EXPECT_EQ(source.retries(), 1u);
  EXPECT_EQ(file->proxy.faults_applied(Kind::kStallBody), 1u);
  EXPECT_EQ(file->served(3), 3u);
  const Clock::time_point stop = Clock::now();
  file.reset();  // the stalled connection's thread is still waiting
  EXPECT_LT(MillisecondsSince(stop), 1000);
}

// A latency of 50 ms makes 10 sequential reads take at least half a second.
TEST(FaultProxyTest, LatencyDelaysEveryRequest) {
  ProxiedFile file("proxy_latency");
  HttpByteSource source(file.proxy.Url("blob.bin"), QuickRetries());
  file.proxy.SetLatencyMs(50);
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(ReadRange(source, i * 100, 100), file.bytes.substr(i * 100, 100));
  }
  EXPECT_GE(MillisecondsSince(start), 500);
  EXPECT_LT(MillisecondsSince(start), 3000);
  file.proxy.SetLatencyMs(0);
  const Clock::time_point again = Clock::now();
  EXPECT_EQ(ReadRange(source, 0, 100), file.bytes.substr(0, 100));
  EXPECT_LT(MillisecondsSince(again), 50);
  EXPECT_EQ(file.proxy.requests(), 12u);
}

// On one client connection and one upstream connection: a PUT's body (after the proxy's
// own 100 Continue) reaches the upstream intact without the Expect header; a chunked
// response and its trailer come back verbatim; a HEAD's response ends at its head although
// it names a length; a 204 has no body.
TEST(FaultProxyTest, FramesBodiesChunksAndHeads) {
  const std::string upload = Pattern(100000, 3);
  const std::string chunked_head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string chunks =
      "5\r\nhello\r\n1a;name=x\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nX-Sum: 1\r\n\r\n";
  const std::string head_response =
      "HTTP/1.1 200 OK\r\nContent-Length: 12345\r\nETag: \"e\"\r\n\r\n";
  const std::string no_content = "HTTP/1.1 204 No Content\r\n\r\n";
  ScriptedUpstream upstream({"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
                             chunked_head + chunks, head_response, no_content});
  FaultProxy proxy(upstream.HostPort());
  const int fd = Connect(proxy.port());
  const std::string put_head = "PUT /bucket/key HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                               "Content-Length: 100000\r\n\r\n";
  Send(fd, put_head);
  const std::string go_on = "HTTP/1.1 100 Continue\r\n\r\n";
  EXPECT_EQ(Receive(fd, go_on.size()), go_on);
  Send(fd, upload);
  EXPECT_EQ(Receive(fd, 40), "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
  Send(fd, "GET /chunked HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(Receive(fd, chunked_head.size() + chunks.size()), chunked_head + chunks);
  Send(fd, "HEAD /object HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(Receive(fd, head_response.size()), head_response);
  Send(fd, "DELETE /object HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(Receive(fd, no_content.size()), no_content);
  close(fd);
  const std::vector<std::string> requests = upstream.requests();
  ASSERT_EQ(requests.size(), 4u);
  EXPECT_EQ(requests[0],
            "PUT /bucket/key HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" + upload);
  EXPECT_EQ(requests[1], "GET /chunked HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(requests[3], "DELETE /object HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(proxy.requests(), 4u);
  EXPECT_EQ(proxy.connections(), 1u);
}

// A kept-alive upstream connection that the upstream closed between two requests is
// replaced; the client's connection stays.
TEST(FaultProxyTest, ReconnectsWhenTheUpstreamClosed) {
  const std::string a = "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na";
  const std::string b = "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb";
  ScriptedUpstream upstream({a, "", b});
  FaultProxy proxy(upstream.HostPort());
  const int fd = Connect(proxy.port());
  Send(fd, "GET /a HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(Receive(fd, a.size()), a);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the upstream closes
  Send(fd, "GET /b HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(Receive(fd, b.size()), b);
  close(fd);
  EXPECT_EQ(upstream.requests().size(), 2u);
  EXPECT_EQ(upstream.connections(), 2);
  EXPECT_EQ(proxy.connections(), 1u);
}

// A 503 fault answers S3's SlowDown itself, after reading the request's body, and keeps
// the connection: the next request goes upstream.
TEST(FaultProxyTest, SlowDownIsS3sErrorOnAKeptConnection) {
  ScriptedUpstream upstream({"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"});
  FaultProxy proxy(upstream.HostPort());
  proxy.AddFault({.kind = Kind::kServiceUnavailable, .path_contains = "key", .method = "PUT",
                  .retry_after_seconds = 3});
  const int fd = Connect(proxy.port());
  Send(fd, "PUT /bucket/key HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello");
  const std::string body =
      "<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>";
  const std::string expected =
      "HTTP/1.1 503 Slow Down\r\nRetry-After: 3\r\nContent-Type: application/xml\r\n"
      "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  EXPECT_EQ(Receive(fd, expected.size()), expected);
  Send(fd, "PUT /bucket/key HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nagain");
  EXPECT_EQ(Receive(fd, 38), "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  close(fd);
  ASSERT_EQ(upstream.requests().size(), 1u);
  EXPECT_EQ(upstream.requests()[0],
            "PUT /bucket/key HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nagain");
  EXPECT_EQ(proxy.faults_applied(), 1u);
}

// An upstream nobody listens on is a 502 and a closed connection; a malformed upstream is
// an Error naming it.
TEST(FaultProxyTest, UnreachableUpstreamIsBadGateway) {
  FaultProxy proxy("127.0.0.1:" + std::to_string(FreeLoopbackPort()));
  const int fd = Connect(proxy.port());
  Send(fd, "GET /x HTTP/1.1\r\nHost: x\r\n\r\n");
  const std::string response = Receive(fd, 100000);  // until the proxy closes
  close(fd);
  EXPECT_EQ(response.rfind("HTTP/1.1 502 Bad Gateway\r\n", 0), 0u) << response;
  EXPECT_NE(response.find("Connection: close\r\n"), std::string::npos) << response;
  try {
    FaultProxy bad("localhost");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'localhost' is not HOST:PORT"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace imgpipe
