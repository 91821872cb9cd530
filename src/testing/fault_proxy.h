// A fault-injecting HTTP/1.1 proxy for tests and benchmarks (issue 21): it sits between a
// client (HttpByteSource, an S3 client) and a real server (nginx, s3rver) on 127.0.0.1,
// forwards requests and responses byte for byte over kept-alive connections (one upstream
// connection per client connection), and on demand delays every request (a far region)
// or applies one-shot faults to the next matching requests: a dropped connection, 503
// SlowDown with Retry-After, a body cut short, a stalled body.
//
// It frames messages as HTTP/1.1 does: a request is its head plus a Content-Length or
// chunked body (answering "Expect: 100-continue" itself); a response is its head plus a
// Content-Length body, chunks forwarded verbatim, no body (HEAD, 1xx, 204, 304) or, without
// either header, the bytes until the server closes. Body bytes a fault counts are the bytes
// after the head as sent (chunk sizes included). One thread serves each client connection.
// The constructor throws Error when it cannot listen; an unreachable upstream is a 502 to
// the client, never an exception.
//
// libcurl sends a request again by itself when a kept-alive connection closes without an
// answer, so a dropped kept-alive connection is no retry in HttpByteSource::retries(); a
// dropped new connection is (fault_proxy_test.cc, DroppedConnectionIsRetried).
#pragma once

#include <sys/socket.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace imgpipe {

class FaultProxy {
 public:
  // One fault, applied once to the next request that matches it.
  struct Fault {
    enum class Kind {
      kDropConnection,      // close the client connection; the request is not forwarded
      kServiceUnavailable,  // 503 SlowDown (S3's XML error), Retry-After; kept alive
      kTruncateBody,        // the head, after_body_bytes of the body, then close
      kStallBody,           // the head, after_body_bytes of the body, stall_ms of nothing, close
    };
    static constexpr size_t kKinds = 4;

    Kind kind = Kind::kDropConnection;
    std::string path_contains;      // matches a request whose target contains this ("": any)
    std::string method;             // "": any, else "GET", "HEAD", "PUT", ...
    uint64_t after_body_bytes = 0;  // kTruncateBody, kStallBody: body bytes forwarded first
    int stall_ms = 0;               // kStallBody: then nothing for this long, then close
    int retry_after_seconds = 0;    // kServiceUnavailable: the Retry-After value
  };

  // Listens on 127.0.0.1 (a free port) and forwards to `upstream` ("HOST:PORT"). Throws
  // Error naming `upstream` when it is malformed, or the call that failed to listen.
  explicit FaultProxy(const std::string& upstream);
  // Stops listening, shuts every connection down (a stall or a delay ends at once) and
  // joins every thread.
  ~FaultProxy();
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  // The port it listens on.
  int port() const { return port_; }
  // "http://127.0.0.1:PORT/" + path.
  std::string Url(const std::string& path) const { return endpoint() + "/" + path; }
  // "http://127.0.0.1:PORT" (an S3 endpoint).
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // Delays every request received from now on by `ms` before it is forwarded (0: none).
  void SetLatencyMs(int ms);
  // Queues `fault`: the next request that matches it and no fault queued before it gets it.
  void AddFault(Fault fault);

  // Requests received (complete heads), faulted ones included.
  uint64_t requests() const { return requests_.load(); }
  // Client connections accepted.
  uint64_t connections() const { return connections_accepted_.load(); }
  // Faults applied so far, all kinds or one kind.
  uint64_t faults_applied() const;
  uint64_t faults_applied(Fault::Kind kind) const;
  // Faults queued and not applied yet.
  size_t pending_faults() const;

 private:
  class Stream;
  struct Connection;
  struct Exchange;

  // Accepts connections until the destructor shuts the listener down; joins the threads
  // of the connections that ended.
  void AcceptLoop();
  // Serves one client connection until either side closes, a fault ends it or the proxy
  // stops; then closes its sockets and marks it done.
  void Serve(Connection* connection);
  // Serves the next request on `client` (a fault, or forwarded over `upstream`, opened
  // when null or closed); false when the client connection must close.
  bool ServeRequest(Connection* connection, Stream& client, std::unique_ptr<Stream>& upstream);
  // Sends the request of `exchange` (its body read from `client`) upstream and reads the
  // response's head into it; false when the upstream cannot be reached or does not answer.
  bool SendUpstream(Connection* connection, Stream& client, std::unique_ptr<Stream>& upstream,
                    Exchange& exchange);
  // Relays the response of `exchange` from `upstream` to `client`, cut short or stalled
  // as its fault says; false when the connection must close.
  bool RelayResponse(Stream& client, Stream& upstream, Exchange& exchange);
  // A new connection to the upstream, its socket in `connection`; null when it fails.
  std::unique_ptr<Stream> ConnectUpstream(Connection* connection);
  // Closes `connection`'s upstream socket, if any, and resets `upstream`.
  void DropUpstream(Connection* connection, std::unique_ptr<Stream>& upstream);
  // Closes `*fd` (a connection's socket) under mu_ and sets it to -1.
  void CloseSocket(int* fd);
  // Removes, counts and returns the first queued fault matching `method` and `target`.
  std::optional<Fault> TakeFault(const std::string& method, const std::string& target);
  // Waits `ms` or until the proxy stops; false when it stops.
  bool Sleep(int ms);
  // Joins the threads of the connections that ended and forgets them.
  void ReapLocked();

  const std::string upstream_;  // "HOST:PORT", for messages
  sockaddr_storage upstream_address_{};
  socklen_t upstream_address_length_ = 0;
  int listen_fd_ = -1;
  int port_ = 0;
  std::thread accept_thread_;

  std::atomic<int> latency_ms_{0};
  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> connections_accepted_{0};
  std::array<std::atomic<uint64_t>, Fault::kKinds> applied_{};  // by Kind

  mutable std::mutex mu_;
  std::condition_variable stop_cv_;                     // notified when stopping_ is set
  bool stopping_ = false;                               // guarded by mu_
  std::deque<Fault> faults_;                            // guarded by mu_
  std::list<std::unique_ptr<Connection>> connections_;  // guarded by mu_
};

}  // namespace imgpipe
