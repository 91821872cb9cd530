#include "io/http_byte_source.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cctype>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>

namespace imgpipe {
namespace {

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// `line` (a response header line) names `header` (lower-case); *value gets the trimmed rest.
bool HeaderIs(const std::string& line, const char* header, std::string* value) {
  const size_t n = std::strlen(header);
  if (line.size() <= n || line[n] != ':') return false;
  for (size_t i = 0; i < n; ++i) {
    if (std::tolower(static_cast<unsigned char>(line[i])) != header[i]) return false;
  }
  const size_t begin = line.find_first_not_of(" \t", n + 1);
  const size_t end = line.find_last_not_of(" \t\r\n");
  *value = begin == std::string::npos || end < begin ? "" : line.substr(begin, end - begin + 1);
  return true;
}

// What a status that is not retried means for the user.
std::string StatusAdvice(int status) {
  switch (status) {
    case 401:
    case 403: return "access denied: check the credentials, the bucket's policy and the endpoint";
    case 404: return "not found: check the URL (bucket, prefix, object name) and the endpoint";
    case 416: return "range not satisfiable: the object is shorter than it was when opened";
    default: return "HTTP " + std::to_string(status);
  }
}

// Backoff before retry `attempt` (0-based): full jitter, or Retry-After when longer.
std::chrono::milliseconds Backoff(const HttpOptions& o, int attempt, int retry_after_seconds) {
  thread_local std::mt19937_64 random(std::random_device{}());
  const double cap = std::min<double>(o.max_delay_ms, o.base_delay_ms * std::pow(2.0, attempt));
  const double jitter = std::uniform_real_distribution<double>(0, std::max(cap, 1.0))(random);
  const double after = std::min(retry_after_seconds, 60) * 1000.0;
  return std::chrono::milliseconds(static_cast<int64_t>(std::max(jitter, after)));
}

}  // namespace

HttpError::HttpError(const std::string& url, int status, const std::string& message)
    : Error(url + ": " + message), status_(status) {}

// One response: status, the headers that matter and the body bytes written.
struct HttpByteSource::Response {
  int status = 0;
  std::string etag, content_range, error;
  int retry_after = 0;
  void* handle = nullptr;  // the CURL* performing it
  char* out = nullptr;
  size_t capacity = 0;
  size_t body = 0;
  bool overflow = false;
};

// Easy handles kept between requests, so their connections stay alive.
class HttpByteSource::HandlePool {
 public:
  ~HandlePool() {
    for (CURL* h : free_) curl_easy_cleanup(h);
  }
  CURL* Acquire() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!free_.empty()) {
        CURL* h = free_.back();
        free_.pop_back();
        return h;
      }
    }
    CURL* h = curl_easy_init();
    if (h == nullptr) throw Error("libcurl: curl_easy_init failed");
    return h;
  }
  void Release(CURL* h) {
    curl_easy_reset(h);  // keeps the connection cache
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(h);
  }

 private:
  std::mutex mu_;
  std::vector<CURL*> free_;  // guarded by mu_
};

HttpByteSource::HttpByteSource(std::string url, HttpOptions options)
    : url_(std::move(url)), options_(std::move(options)), handles_(std::make_unique<HandlePool>()) {
  GlobalInit();
  Response r;
  Perform("", nullptr, 0, &r);
  if (r.status != 200) throw HttpError(url_, r.status, "HEAD answered " + StatusAdvice(r.status));
  etag_ = r.etag;
  size_ = r.body;  // Perform puts the HEAD's Content-Length here
}

HttpByteSource::~HttpByteSource() = default;

void HttpByteSource::Perform(const std::string& range, char* out, size_t capacity,
                             Response* response) const {
  const bool head = out == nullptr;
  for (int attempt = 0;; ++attempt) {
    Response r;
    r.out = out;
    r.capacity = capacity;
    CURL* h = handles_->Acquire();
    r.handle = h;
    curl_slist* headers = nullptr;
    for (const std::string& header : options_.headers) headers = curl_slist_append(headers, header.c_str());
    if (!range.empty()) {
      headers = curl_slist_append(headers, ("Range: bytes=" + range).c_str());
      if (!etag_.empty()) headers = curl_slist_append(headers, ("If-Match: " + etag_).c_str());
    }
    curl_easy_setopt(h, CURLOPT_URL, url_.c_str());
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(h, CURLOPT_NOBODY, head ? 1L : 0L);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout_ms));
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, static_cast<long>(options_.low_speed_bytes));
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, static_cast<long>(options_.low_speed_seconds));
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    char error[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &r);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, +[](char* data, size_t, size_t n, void* user) -> size_t {
      auto* r = static_cast<Response*>(user);
      const std::string line(data, n);
      std::string value;
      if (line.rfind("HTTP/", 0) == 0) {  // a new response (after a redirect or 100)
        r->etag.clear();
        r->content_range.clear();
        r->retry_after = 0;
      } else if (HeaderIs(line, "etag", &value)) {
        r->etag = value;
      } else if (HeaderIs(line, "content-range", &value)) {
        r->content_range = value;
      } else if (HeaderIs(line, "retry-after", &value)) {
        r->retry_after = std::atoi(value.c_str());
      }
      return n;
    });
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &r);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, +[](char* data, size_t, size_t n, void* user) -> size_t {
      auto* r = static_cast<Response*>(user);
      long status = 0;
      curl_easy_getinfo(static_cast<CURL*>(r->handle), CURLINFO_RESPONSE_CODE, &status);
      if (status < 200 || status >= 300) return n;  // an error page: dropped
      if (r->body + n > r->capacity) {
        r->overflow = true;
        return 0;  // more than asked: abort
      }
      std::memcpy(r->out + r->body, data, n);
      r->body += n;
      return n;
    });
    const CURLcode rc = curl_easy_perform(h);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_off_t length = -1;
    if (head) curl_easy_getinfo(h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
    handles_->Release(h);
    curl_slist_free_all(headers);
    r.status = static_cast<int>(status);
    if (r.overflow) {
      throw HttpError(url_, r.status, "the server sent more than the " + std::to_string(capacity) +
                                          " bytes asked for (does it honour Range requests?)");
    }
    // 1. Done, or a body cut short that the caller resumes from its next byte.
    if (rc == CURLE_OK && r.status >= 200 && r.status < 300) {
      if (head) {
        if (length < 0) throw HttpError(url_, r.status, "the HEAD response has no Content-Length");
        r.body = static_cast<size_t>(length);
      }
      *response = std::move(r);
      return;
    }
    if (rc != CURLE_OK && r.status == 206 && r.body > 0) {
      *response = std::move(r);
      return;
    }
    // 2. Faults that are not retried.
    if (r.status == 412) {
      throw DataError(url_, std::nullopt, "the object changed while it was read (its ETag is no longer " + etag_ + ")");
    }
    const bool retryable = rc != CURLE_OK ? (rc != CURLE_URL_MALFORMAT && rc != CURLE_UNSUPPORTED_PROTOCOL)
                                          : (r.status == 429 || r.status >= 500);
    const std::string what = rc != CURLE_OK ? std::string(*error ? error : curl_easy_strerror(rc))
                                            : StatusAdvice(r.status);
    if (!retryable) throw HttpError(url_, r.status, what);
    // 3. The others, after a backoff, until the attempts run out.
    if (attempt + 1 >= options_.max_attempts) {
      throw HttpError(url_, r.status, "gave up after " + std::to_string(attempt + 1) + " attempts; the last: " + what);
    }
    ++retries_;
    std::this_thread::sleep_for(Backoff(options_, attempt, r.retry_after));
  }
}

size_t HttpByteSource::Read(uint64_t offset, char* out, size_t n) const {
  if (offset >= size_ || n == 0) return 0;
  n = static_cast<size_t>(std::min<uint64_t>(n, size_ - offset));
  size_t done = 0;
  for (int pieces = 0; done < n; ++pieces) {
    if (pieces >= options_.max_attempts) {
      throw HttpError(url_, 206, "gave up resuming a body cut short " + std::to_string(pieces) + " times");
    }
    if (pieces > 0) ++retries_;  // resuming a body cut short
    const uint64_t first = offset + done, last = offset + n - 1;
    Response r;
    Perform(std::to_string(first) + "-" + std::to_string(last), out + done, n - done, &r);
    if (!r.etag.empty() && !etag_.empty() && r.etag != etag_) {
      throw DataError(url_, first, "the object changed while it was read (ETag " + etag_ + ", now " + r.etag + ")");
    }
    if (r.status == 200 && !(first == 0 && r.body == size_)) {
      throw HttpError(url_, 200, "the server ignores Range requests (answered 200 to bytes=" +
                                     std::to_string(first) + "-" + std::to_string(last) + ")");
    }
    if (r.status == 206 && r.content_range.rfind("bytes " + std::to_string(first) + "-", 0) != 0) {
      throw HttpError(url_, 206, "asked for bytes " + std::to_string(first) + "-" + std::to_string(last) +
                                     ", got Content-Range '" + r.content_range + "'");
    }
    done += r.body;
  }
  return n;
}

}  // namespace imgpipe
