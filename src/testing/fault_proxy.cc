#include "testing/fault_proxy.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <optional>
#include <utility>

#include "util/error.h"
#include "util/logging.h"

namespace imgpipe {
namespace {

constexpr size_t kMaxHeadBytes = 64 * 1024;  // a longer head or chunk line is malformed
constexpr uint64_t kUnlimited = std::numeric_limits<uint64_t>::max();
constexpr char kSlowDownBody[] =
    "<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>";

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Sends all of [data, data + n) on socket `fd` (no SIGPIPE); false when the peer is gone.
bool SendAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    const ssize_t sent = send(fd, data, n, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return false;
    data += sent;
    n -= static_cast<size_t>(sent);
  }
  return true;
}

bool SendAll(int fd, const std::string& bytes) { return SendAll(fd, bytes.data(), bytes.size()); }

void SetNoDelay(int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// Resolves "HOST:PORT" (HOST possibly in brackets) into `address`; returns its length.
// Throws Error naming `host_port` when it is malformed or does not resolve.
socklen_t ResolveHostPort(const std::string& host_port, sockaddr_storage* address) {
  const size_t colon = host_port.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == host_port.size()) {
    throw Error("fault proxy: the upstream '" + host_port + "' is not HOST:PORT");
  }
  std::string host = host_port.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(host.c_str(), host_port.c_str() + colon + 1, &hints, &found);
  if (rc != 0) {
    throw Error("fault proxy: cannot resolve the upstream '" + host_port +
                "': " + gai_strerror(rc));
  }
  std::memcpy(address, found->ai_addr, found->ai_addrlen);
  const socklen_t length = found->ai_addrlen;
  freeaddrinfo(found);
  return length;
}

// A socket listening on a free port of 127.0.0.1, the port in *port. Throws IoError
// naming the call that failed.
int ListenOnLoopback(int* port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw IoError("fault proxy on 127.0.0.1", "socket", errno);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  sockaddr* any = reinterpret_cast<sockaddr*>(&address);
  const char* failed = nullptr;
  if (bind(fd, any, length) != 0) {
    failed = "bind";
  } else if (listen(fd, SOMAXCONN) != 0) {
    failed = "listen";
  } else if (getsockname(fd, any, &length) != 0) {
    failed = "getsockname";
  }
  if (failed != nullptr) {
    const int error = errno;
    close(fd);
    throw IoError("fault proxy on 127.0.0.1", failed, error);
  }
  *port = ntohs(address.sin_port);
  return fd;
}

// A complete response the proxy makes itself, with a Content-Length.
std::string MadeResponse(const std::string& status_line, const std::string& headers,
                         const std::string& content_type, const std::string& body, bool close) {
  return "HTTP/1.1 " + status_line + "\r\n" + headers + "Content-Type: " + content_type +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" +
         (close ? "Connection: close\r\n" : "") + "\r\n" + body;
}

// What framing needs from a request or response head.
struct Head {
  std::string text;    // forwarded as is (a request's Expect header removed)
  std::string method;  // requests
  std::string target;  // requests
  int status = 0;      // responses
  bool chunked = false;
  std::optional<uint64_t> length;  // Content-Length
  bool close = false;              // Connection: close, or HTTP/1.0 without keep-alive
  bool expect_continue = false;    // requests: "Expect: 100-continue" (removed from text)

  bool HasBody() const { return chunked || length.value_or(0) > 0; }
};

// Parses `text` (a head, its blank line included) into `head`; false when malformed.
bool ParseHead(const std::string& text, bool request, Head* head) {
  // 1. The start line: "METHOD TARGET VERSION" or "VERSION STATUS REASON".
  const size_t line_end = text.find("\r\n");
  const std::string start = text.substr(0, line_end);
  const size_t space1 = start.find(' '), space2 = start.find(' ', space1 + 1);
  if (space1 == std::string::npos || (request && space2 == std::string::npos)) return false;
  std::string version;
  if (request) {
    head->method = start.substr(0, space1);
    head->target = start.substr(space1 + 1, space2 - space1 - 1);
    version = start.substr(space2 + 1);
  } else {
    version = start.substr(0, space1);
    head->status = std::atoi(start.substr(space1 + 1, 3).c_str());
    if (head->status < 100 || head->status > 999) return false;
  }
  if (version.rfind("HTTP/1.", 0) != 0) return false;
  bool keep_alive = version != "HTTP/1.0";
  head->text = start + "\r\n";
  // 2. The header lines: framing and connection headers; the rest only forwarded.
  for (size_t at = line_end + 2; at < text.size();) {
    const size_t end = text.find("\r\n", at);
    const std::string line = text.substr(at, end - at + 2);
    at = end + 2;
    const size_t colon = line.find(':');
    if (line == "\r\n") {
      head->text += line;  // the blank line that ends the head
      continue;
    }
    if (colon == std::string::npos) return false;
    const std::string name = Lower(line.substr(0, colon));
    const std::string value = Lower(line.substr(colon + 1));
    if (name == "content-length") {
      char* rest = nullptr;
      head->length = std::strtoull(value.c_str(), &rest, 10);
      if (rest == value.c_str()) return false;
    } else if (name == "transfer-encoding") {
      head->chunked = value.find("chunked") != std::string::npos;
    } else if (name == "connection") {
      if (value.find("close") != std::string::npos) head->close = true;
      if (value.find("keep-alive") != std::string::npos) keep_alive = true;
    } else if (request && name == "expect" && value.find("100-continue") != std::string::npos) {
      head->expect_continue = true;
      continue;  // the proxy answers it
    }
    head->text += line;
  }
  head->close = head->close || !keep_alive;
  return true;
}

// Where a body goes: a socket (or nowhere: -1), cut after `budget` bytes.
struct Sink {
  int fd = -1;
  uint64_t budget = kUnlimited;

  // Passes on [data, data + n) within the budget; false when the budget ran out (the rest
  // is dropped) or the socket is gone.
  bool Write(const char* data, size_t n) {
    const size_t allowed = static_cast<size_t>(std::min<uint64_t>(n, budget));
    if (fd >= 0 && allowed > 0 && !SendAll(fd, data, allowed)) return false;
    if (budget != kUnlimited) budget -= allowed;
    return allowed == n;
  }
  bool Write(const std::string& bytes) { return Write(bytes.data(), bytes.size()); }
};

}  // namespace

// A socket read through a buffer, with the framing of HTTP/1.1 messages.
class FaultProxy::Stream {
 public:
  explicit Stream(int fd) : fd_(fd) {}

  int fd() const { return fd_; }

  // A head up to its blank line (blank lines before it skipped); false on end of stream,
  // an error or a head over kMaxHeadBytes.
  bool ReadHead(std::string* head) {
    size_t end;
    for (;;) {
      while (buffer_.rfind("\r\n", 0) == 0) buffer_.erase(0, 2);
      if ((end = buffer_.find("\r\n\r\n")) != std::string::npos) break;
      if (buffer_.size() > kMaxHeadBytes || !Fill()) return false;
    }
    *head = buffer_.substr(0, end + 4);
    buffer_.erase(0, end + 4);
    return true;
  }

  // True when nothing was received, nor is waiting: the peer has not closed or spoken
  // out of turn, so a request can be sent.
  bool Idle() const {
    pollfd p{fd_, POLLIN, 0};
    return buffer_.empty() && poll(&p, 1, 0) == 0;
  }

  // Passes the next `n` bytes to `sink`; false when the stream ends first or `sink` stops.
  bool CopyBytes(uint64_t n, Sink& sink) {
    while (n > 0) {
      if (buffer_.empty() && !Fill()) return false;
      const size_t k = static_cast<size_t>(std::min<uint64_t>(n, buffer_.size()));
      if (!sink.Write(buffer_.data(), k)) return false;
      buffer_.erase(0, k);
      n -= k;
    }
    return true;
  }

  // Passes a chunked body to `sink` verbatim: chunks, the last chunk and the trailers.
  bool CopyChunked(Sink& sink) {
    std::string line;
    for (;;) {
      if (!ReadLine(&line) || !sink.Write(line)) return false;
      char* rest = nullptr;
      const uint64_t size = std::strtoull(line.c_str(), &rest, 16);
      if (rest == line.c_str()) return false;
      if (size == 0) break;
      if (!CopyBytes(size + 2, sink)) return false;  // the data and its CRLF
    }
    do {
      if (!ReadLine(&line) || !sink.Write(line)) return false;
    } while (line != "\r\n" && line != "\n");
    return true;
  }

  // Passes everything until the peer closes to `sink`.
  bool CopyToEnd(Sink& sink) {
    do {
      if (!sink.Write(buffer_)) return false;
      buffer_.clear();
    } while (Fill());
    return true;
  }

  // Passes the body `head` frames to `sink`; `until_close` when nothing frames it.
  bool CopyBody(const Head& head, bool until_close, Sink& sink) {
    if (head.chunked) return CopyChunked(sink);
    if (head.length) return CopyBytes(*head.length, sink);
    return !until_close || CopyToEnd(sink);
  }

 private:
  // Appends what the socket has (waiting for some); false on end of stream or an error.
  bool Fill() {
    char chunk[64 * 1024];
    for (;;) {
      const ssize_t n = recv(fd_, chunk, sizeof chunk, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      buffer_.append(chunk, static_cast<size_t>(n));
      return true;
    }
  }

  // A line with its line feed; false on end of stream or a line over kMaxHeadBytes.
  bool ReadLine(std::string* line) {
    size_t end;
    while ((end = buffer_.find('\n')) == std::string::npos) {
      if (buffer_.size() > kMaxHeadBytes || !Fill()) return false;
    }
    *line = buffer_.substr(0, end + 1);
    buffer_.erase(0, end + 1);
    return true;
  }

  const int fd_;
  std::string buffer_;  // received, not consumed
};

// A client connection: its sockets (closed under mu_, so that the destructor never shuts
// down a reused descriptor) and its thread.
struct FaultProxy::Connection {
  int client_fd = -1;    // written under mu_ by its thread only
  int upstream_fd = -1;  // written under mu_ by its thread only
  bool done = false;     // guarded by mu_
  std::thread thread;
};

// One request on its way: its head, its fault and the response's head.
struct FaultProxy::Exchange {
  Head request;
  std::optional<Fault> fault;
  Head response;
};

FaultProxy::FaultProxy(const std::string& upstream) : upstream_(upstream) {
  upstream_address_length_ = ResolveHostPort(upstream, &upstream_address_);
  listen_fd_ = ListenOnLoopback(&port_);
  accept_thread_ = std::thread(&FaultProxy::AcceptLoop, this);
}

FaultProxy::~FaultProxy() {
  std::list<std::unique_ptr<Connection>> connections;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    shutdown(listen_fd_, SHUT_RDWR);  // accept() returns
    for (const std::unique_ptr<Connection>& c : connections_) {
      if (c->client_fd >= 0) shutdown(c->client_fd, SHUT_RDWR);
      if (c->upstream_fd >= 0) shutdown(c->upstream_fd, SHUT_RDWR);
    }
  }
  stop_cv_.notify_all();
  accept_thread_.join();  // after it, no connection is added
  {
    std::lock_guard<std::mutex> lock(mu_);
    connections.swap(connections_);
  }
  for (const std::unique_ptr<Connection>& c : connections) c->thread.join();
  close(listen_fd_);
}

void FaultProxy::SetLatencyMs(int ms) { latency_ms_.store(std::max(ms, 0)); }

void FaultProxy::AddFault(Fault fault) {
  std::lock_guard<std::mutex> lock(mu_);
  faults_.push_back(std::move(fault));
}

uint64_t FaultProxy::faults_applied() const {
  uint64_t total = 0;
  for (const std::atomic<uint64_t>& n : applied_) total += n.load();
  return total;
}

uint64_t FaultProxy::faults_applied(Fault::Kind kind) const {
  return applied_[static_cast<size_t>(kind)].load();
}

size_t FaultProxy::pending_faults() const {
  std::lock_guard<std::mutex> lock(mu_);
  return faults_.size();
}

void FaultProxy::AcceptLoop() {
  for (;;) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    const int error = errno;
    std::unique_lock<std::mutex> lock(mu_);
    if (stopping_) {
      if (fd >= 0) close(fd);
      return;
    }
    ReapLocked();
    if (fd < 0) {
      if (error == EINTR || error == ECONNABORTED) continue;
      LogWarning("fault proxy: accept: " + std::string(std::strerror(error)));
      stop_cv_.wait_for(lock, std::chrono::milliseconds(50));  // out of descriptors: later
      continue;
    }
    SetNoDelay(fd);
    ++connections_accepted_;
    auto connection = std::make_unique<Connection>();
    connection->client_fd = fd;
    connection->thread = std::thread(&FaultProxy::Serve, this, connection.get());
    connections_.push_back(std::move(connection));
  }
}

void FaultProxy::ReapLocked() {
  for (auto it = connections_.begin(); it != connections_.end();) {
    if (!(*it)->done) {
      ++it;
      continue;
    }
    (*it)->thread.join();  // it has nothing left to do but return
    it = connections_.erase(it);
  }
}

void FaultProxy::Serve(Connection* connection) {
  try {
    Stream client(connection->client_fd);
    std::unique_ptr<Stream> upstream;
    while (ServeRequest(connection, client, upstream)) {
    }
  } catch (const std::exception& e) {
    LogWarning(std::string("fault proxy: a connection failed: ") + e.what());
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (connection->client_fd >= 0) close(connection->client_fd);
  if (connection->upstream_fd >= 0) close(connection->upstream_fd);
  connection->client_fd = connection->upstream_fd = -1;
  connection->done = true;
}

bool FaultProxy::ServeRequest(Connection* connection, Stream& client,
                              std::unique_ptr<Stream>& upstream) {
  // 1. The request's head, counted, and the delay of a far region.
  Exchange exchange;
  std::string text;
  if (!client.ReadHead(&text)) return false;
  if (!ParseHead(text, true, &exchange.request)) {
    SendAll(client.fd(), MadeResponse("400 Bad Request", "", "text/plain", "", true));
    return false;
  }
  ++requests_;
  if (!Sleep(latency_ms_.load())) return false;
  // 2. A dropped connection: nothing forwarded, nothing answered.
  const std::optional<Fault>& fault = exchange.fault =
      TakeFault(exchange.request.method, exchange.request.target);
  if (fault && fault->kind == Fault::Kind::kDropConnection) return false;
  if (exchange.request.expect_continue && !SendAll(client.fd(), "HTTP/1.1 100 Continue\r\n\r\n")) {
    return false;
  }
  // 3. 503 SlowDown after the request's body, which is dropped.
  if (fault && fault->kind == Fault::Kind::kServiceUnavailable) {
    Sink nowhere;
    if (!client.CopyBody(exchange.request, false, nowhere)) return false;
    const bool close = exchange.request.close;
    const std::string retry_after =
        "Retry-After: " + std::to_string(fault->retry_after_seconds) + "\r\n";
    return SendAll(client.fd(), MadeResponse("503 Slow Down", retry_after, "application/xml",
                                             kSlowDownBody, close)) &&
           !close;
  }
  // 4. The others go upstream; the response comes back, cut short as the fault asks.
  if (!SendUpstream(connection, client, upstream, exchange)) {
    const std::string body = "fault proxy: no response from the upstream " + upstream_ + "\n";
    SendAll(client.fd(), MadeResponse("502 Bad Gateway", "", "text/plain", body, true));
    return false;
  }
  return RelayResponse(client, *upstream, exchange);
}

bool FaultProxy::SendUpstream(Connection* connection, Stream& client,
                              std::unique_ptr<Stream>& upstream, Exchange& exchange) {
  const Head& request = exchange.request;
  for (int attempt = 0;; ++attempt) {
    // 1. The kept-alive connection when it is still open, else a new one.
    const bool reused = upstream != nullptr && upstream->Idle();
    if (!reused) {
      DropUpstream(connection, upstream);
      upstream = ConnectUpstream(connection);
      if (upstream == nullptr) return false;
    }
    // 2. The request (its head and its body), then the response's head.
    Sink to_upstream{upstream->fd()};
    const bool sent = SendAll(upstream->fd(), request.text) &&
                      client.CopyBody(request, false, to_upstream);
    std::string text;
    if (sent && upstream->ReadHead(&text)) return ParseHead(text, false, &exchange.response);
    // 3. A kept-alive connection the upstream closed just before gets the request again
    // (once, and only when it has no body to read again), as curl does.
    if (!reused || request.HasBody() || attempt > 0) return false;
  }
}

bool FaultProxy::RelayResponse(Stream& client, Stream& upstream, Exchange& exchange) {
  Head& response = exchange.response;
  // 1. Interim responses (1xx) pass through; then the final one's head, always whole.
  std::string text;
  while (response.status / 100 == 1 && response.status != 101) {
    if (!SendAll(client.fd(), response.text)) return false;
    response = Head();
    if (!upstream.ReadHead(&text) || !ParseHead(text, false, &response)) return false;
  }
  if (!SendAll(client.fd(), response.text)) return false;
  // 2. The body, within the fault's budget.
  const std::optional<Fault>& fault = exchange.fault;
  const bool no_body = exchange.request.method == "HEAD" || response.status / 100 == 1 ||
                       response.status == 204 || response.status == 304;
  const bool until_close = !no_body && !response.chunked && !response.length;
  Sink to_client{client.fd(), fault ? fault->after_body_bytes : kUnlimited};
  const bool copied = no_body || upstream.CopyBody(response, true, to_client);
  // 3. A truncated body closes both connections; a stalled one first sends nothing.
  if (fault) {
    if (fault->kind == Fault::Kind::kStallBody) Sleep(fault->stall_ms);
    return false;
  }
  return copied && !until_close && response.status != 101 && !response.close &&
         !exchange.request.close;
}

std::unique_ptr<FaultProxy::Stream> FaultProxy::ConnectUpstream(Connection* connection) {
  const int fd = socket(upstream_address_.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      close(fd);
      return nullptr;
    }
    connection->upstream_fd = fd;
  }
  const sockaddr* address = reinterpret_cast<const sockaddr*>(&upstream_address_);
  if (connect(fd, address, upstream_address_length_) != 0) {
    CloseSocket(&connection->upstream_fd);
    return nullptr;
  }
  SetNoDelay(fd);
  return std::make_unique<Stream>(fd);
}

void FaultProxy::DropUpstream(Connection* connection, std::unique_ptr<Stream>& upstream) {
  upstream.reset();
  CloseSocket(&connection->upstream_fd);
}

void FaultProxy::CloseSocket(int* fd) {
  std::lock_guard<std::mutex> lock(mu_);
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

std::optional<FaultProxy::Fault> FaultProxy::TakeFault(const std::string& method,
                                                       const std::string& target) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = faults_.begin(); it != faults_.end(); ++it) {
    if ((it->method.empty() || it->method == method) &&
        target.find(it->path_contains) != std::string::npos) {
      Fault fault = std::move(*it);
      faults_.erase(it);
      ++applied_[static_cast<size_t>(fault.kind)];
      return fault;
    }
  }
  return std::nullopt;
}

bool FaultProxy::Sleep(int ms) {
  std::unique_lock<std::mutex> lock(mu_);
  if (ms > 0) stop_cv_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return stopping_; });
  return !stopping_;
}

}  // namespace imgpipe
