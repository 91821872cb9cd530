// An object behind HTTP(S) read as a ByteSource: its size and ETag from a HEAD, then
// ranged GETs ("Range: bytes=A-B" with "If-Match: ETAG"), over libcurl with kept-alive
// connections, retried on faults:
//
//   retried, with exponential backoff and full jitter (Retry-After honoured), up to
//   max_attempts: connection errors, resets, time-outs, stalled bodies (fewer than
//   low_speed_bytes per second for low_speed_seconds), HTTP 429 and 5xx; a body cut
//   short resumes from its next byte.
//   not retried: 403, 404, 416 (HttpError saying what to check), 412 and a changed ETag
//   (DataError: the object changed while it was read; never mixed data), a server that
//   ignores Range.
#ifndef IMGPIPE_IO_HTTP_BYTE_SOURCE_H_
#define IMGPIPE_IO_HTTP_BYTE_SOURCE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "io/byte_source.h"
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

class HttpByteSource : public ByteSource {
 public:
  // HEADs `url` for its size and ETag. Throws HttpError as above.
  HttpByteSource(std::string url, HttpOptions options = {});
  ~HttpByteSource() override;

  uint64_t size() const override { return size_; }
  // One ranged GET (retried as above). Throws HttpError or DataError.
  size_t Read(uint64_t offset, char* out, size_t n) const override;
  const std::string& name() const override { return url_; }

  const std::string& etag() const { return etag_; }
  // Retries so far (all requests of this source).
  uint64_t retries() const { return retries_.load(); }

 private:
  struct Response;
  class HandlePool;
  // Performs one request (HEAD when `out` is null) with retries; fills `response`.
  void Perform(const std::string& range, char* out, size_t capacity, Response* response) const;

  const std::string url_;
  const HttpOptions options_;
  std::unique_ptr<HandlePool> handles_;
  uint64_t size_ = 0;
  std::string etag_;
  mutable std::atomic<uint64_t> retries_{0};
};

}  // namespace imgpipe

#endif  // IMGPIPE_IO_HTTP_BYTE_SOURCE_H_
