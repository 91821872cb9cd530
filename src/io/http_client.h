// HTTP(S) requests over libcurl, with the retry rules every network read and write of
// imgpipe follows:
//
//   retried, with exponential backoff and full jitter (Retry-After honoured), up to
//   max_attempts: connection errors, resets, time-outs, stalled bodies (fewer than
//   low_speed_bytes per second for low_speed_seconds), HTTP 429 and 5xx.
//   not retried: 4xx (HttpError saying what to check; the server's own error code and
//   message when its body is an S3-style XML error), 412 (DataError: the object changed).
//
// Easy handles (and so their kept-alive connections) are pooled by the client and shared
// by the threads that call it. A signer, when set, adds the headers of each attempt (a
// SigV4 signature carries the time it was made, so every retry is signed anew).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace imgpipe {

// An HTTP request that failed for good: the URL, the status (0: no response) and what to
// check.
class HttpError : public Error {
 public:
  HttpError(const std::string& url, int status, const std::string& message);
  int status() const { return status_; }

 private:
  int status_;
};

struct HttpOptions {
  int max_attempts = 8;          // tries per request, the first included
  int base_delay_ms = 100;       // backoff before retry k: uniform in [0, min(max, base * 2^k))
  int max_delay_ms = 10000;
  int connect_timeout_ms = 10000;
  int low_speed_bytes = 1024;    // a body slower than this ...
  int low_speed_seconds = 20;    // ... for this long is stalled
  // Headers sent with every request ("Name: value"), e.g. a bearer token.
  std::vector<std::string> headers;
};

// What a client has sent and received so far: every attempt, retries included.
struct HttpTraffic {
  uint64_t requests = 0;        // attempts made
  uint64_t connections = 0;     // new connections opened (the rest reused a kept-alive one)
  uint64_t bytes_received = 0;  // body bytes
  uint64_t bytes_sent = 0;      // body bytes (uploads)
  uint64_t retries = 0;

  HttpTraffic& operator+=(const HttpTraffic& o) {
    requests += o.requests;
    connections += o.connections;
    bytes_received += o.bytes_received;
    bytes_sent += o.bytes_sent;
    retries += o.retries;
    return *this;
  }
};

struct HttpRequest {
  std::string method = "GET";  // GET, HEAD, PUT, POST, DELETE
  std::string url;
  std::vector<std::string> headers;  // "Name: value", besides the options' and the signer's
  std::string_view body;             // sent with PUT and POST (must outlive Perform)
  // Where a 2xx body goes: `out` (at most `capacity` bytes; more is an error) or, when
  // out is null, HttpResponse::body.
  char* out = nullptr;
  size_t capacity = 0;
};

struct HttpResponse {
  int status = 0;
  std::string etag, content_range;
  int64_t content_length = -1;  // of a HEAD's (or any) response, -1 when not sent
  std::string body;             // a 2xx body when HttpRequest::out is null
  size_t body_bytes = 0;        // body bytes received
  bool cut_short = false;       // a 206 body broken off after body_bytes (resume from there)
};

// A 206 response's "Content-Range: bytes FIRST-LAST/TOTAL" (TOTAL "*": unknown).
struct ContentRange {
  uint64_t first = 0;
  uint64_t last = 0;              // inclusive
  std::optional<uint64_t> total;  // the whole object's size, when sent
};

// `value` (a Content-Range header's value, surrounding blanks allowed) parsed; nullopt
// unless it is "bytes FIRST-LAST/TOTAL" or "bytes FIRST-LAST/*" with decimal numbers that
// fit 64 bits, FIRST <= LAST and LAST < TOTAL. Never throws.
std::optional<ContentRange> ParseContentRange(std::string_view value);

// What a failed response says, from S3's XML error body ("<Code>NoSuchBucket</Code>" and
// its <Message>): "NoSuchBucket: The specified bucket does not exist", or "" when the body
// is not one. Never throws.
std::string DescribeXmlError(std::string_view body);

// "Name: value" headers to add to one attempt of `request` (whose body's SHA-256 is
// `payload_sha256`). Throws Error when it cannot sign.
using HttpSigner = std::function<std::vector<std::string>(const HttpRequest& request,
                                                          const std::string& payload_sha256)>;

class HttpClient {
 public:
  explicit HttpClient(HttpOptions options = {}, HttpSigner signer = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Performs `request`, retried as above. Returns a 2xx response, or a 206 cut short
  // (cut_short, its bytes so far in out) for the caller to resume. Throws HttpError, or
  // DataError for 412.
  HttpResponse Perform(const HttpRequest& request) const;
  // Whether `url` is there: a HEAD answered 2xx (true) or 404 (false). Other answers
  // throw as Perform does.
  bool Exists(const std::string& url) const;

  // Retries so far, of every request (Perform's and the ones callers count themselves).
  uint64_t retries() const { return retries_.load(); }
  void CountRetry() const { ++retries_; }
  // Requests, connections, bytes and retries so far.
  HttpTraffic traffic() const;
  const HttpOptions& options() const { return options_; }

 private:
  class HandlePool;
  const HttpOptions options_;
  const HttpSigner signer_;
  std::unique_ptr<HandlePool> handles_;
  mutable std::atomic<uint64_t> retries_{0};
  mutable std::atomic<uint64_t> requests_{0};
  mutable std::atomic<uint64_t> connections_{0};
  mutable std::atomic<uint64_t> bytes_received_{0};
  mutable std::atomic<uint64_t> bytes_sent_{0};
};

}  // namespace imgpipe
