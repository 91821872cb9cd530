#include "io/http_client.h"


#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cctype>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>

#include "io/aws_sigv4.h"
#include "io/curl_library.h"
#include "io/xml_text.h"

namespace imgpipe {
namespace {

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

// One attempt's state, shared with libcurl's callbacks.
struct Attempt {
  const HttpRequest* request = nullptr;
  CURL* handle = nullptr;
  HttpResponse response;
  std::string error_body;  // of a non-2xx response, the first 4 KiB
  int retry_after = 0;
  size_t sent = 0;  // body bytes uploaded
  bool overflow = false;
};

size_t OnHeader(char* data, size_t, size_t n, void* user) {
  auto* a = static_cast<Attempt*>(user);
  const std::string line(data, n);
  std::string value;
  if (line.rfind("HTTP/", 0) == 0) {  // a new response (after a redirect or 100)
    a->response.etag.clear();
    a->response.content_range.clear();
    a->retry_after = 0;
  } else if (HeaderIs(line, "etag", &value)) {
    a->response.etag = value;
  } else if (HeaderIs(line, "content-range", &value)) {
    a->response.content_range = value;
  } else if (HeaderIs(line, "retry-after", &value)) {
    a->retry_after = std::atoi(value.c_str());
  }
  return n;
}

size_t OnBody(char* data, size_t, size_t n, void* user) {
  auto* a = static_cast<Attempt*>(user);
  long status = 0;
  Curl().easy_getinfo(a->handle, CURLINFO_RESPONSE_CODE, &status);
  if (status < 200 || status >= 300) {  // an error page: its start kept for the message
    a->error_body.append(data, std::min(n, 4096 - std::min<size_t>(4096, a->error_body.size())));
    return n;
  }
  HttpResponse& r = a->response;
  if (a->request->out == nullptr) {
    r.body.append(data, n);
  } else {
    if (r.body_bytes + n > a->request->capacity) {
      a->overflow = true;
      return 0;  // more than asked: abort
    }
    std::memcpy(a->request->out + r.body_bytes, data, n);
  }
  r.body_bytes += n;
  return n;
}

size_t OnUpload(char* buffer, size_t size, size_t count, void* user) {
  auto* a = static_cast<Attempt*>(user);
  const std::string_view body = a->request->body;
  const size_t n = std::min(size * count, body.size() - a->sent);
  std::memcpy(buffer, body.data() + a->sent, n);
  a->sent += n;
  return n;
}

// libcurl's options on `h` for one attempt of a->request: its URL and method, `headers`
// (the caller frees them after the transfer), `options`' timeouts, the callbacks that
// fill `a`, and `error` (CURL_ERROR_SIZE bytes) for libcurl's message.
void SetAttemptOptions(CURL* h, const HttpOptions& options, curl_slist* headers, Attempt* a,
                       char* error) {
  const HttpRequest& request = *a->request;
  const bool head = request.method == "HEAD";
  Curl().easy_setopt(h, CURLOPT_URL, request.url.c_str());
  Curl().easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  Curl().easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
  Curl().easy_setopt(h, CURLOPT_NOBODY, head ? 1L : 0L);
  if (request.method == "PUT" || request.method == "POST") {
    Curl().easy_setopt(h, CURLOPT_UPLOAD, 1L);
    Curl().easy_setopt(h, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    Curl().easy_setopt(h, CURLOPT_READDATA, a);
    Curl().easy_setopt(h, CURLOPT_READFUNCTION, &OnUpload);
  }
  if (!head && request.method != "GET" && request.method != "PUT") {
    Curl().easy_setopt(h, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }
  Curl().easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  Curl().easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options.connect_timeout_ms));
  Curl().easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, static_cast<long>(options.low_speed_bytes));
  Curl().easy_setopt(h, CURLOPT_LOW_SPEED_TIME, static_cast<long>(options.low_speed_seconds));
  Curl().easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  Curl().easy_setopt(h, CURLOPT_ERRORBUFFER, error);
  Curl().easy_setopt(h, CURLOPT_HEADERDATA, a);
  Curl().easy_setopt(h, CURLOPT_HEADERFUNCTION, &OnHeader);
  Curl().easy_setopt(h, CURLOPT_WRITEDATA, a);
  Curl().easy_setopt(h, CURLOPT_WRITEFUNCTION, &OnBody);
}

// What libcurl measured of the transfer just done on `h`.
struct TransferInfo {
  long status = 0;
  curl_off_t content_length = -1;
  long connects = 0;
  curl_off_t received = 0, sent = 0;
};
TransferInfo ReadTransferInfo(CURL* h) {
  TransferInfo t;
  Curl().easy_getinfo(h, CURLINFO_RESPONSE_CODE, &t.status);
  Curl().easy_getinfo(h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &t.content_length);
  Curl().easy_getinfo(h, CURLINFO_NUM_CONNECTS, &t.connects);
  Curl().easy_getinfo(h, CURLINFO_SIZE_DOWNLOAD_T, &t.received);
  Curl().easy_getinfo(h, CURLINFO_SIZE_UPLOAD_T, &t.sent);
  return t;
}

// One attempt's headers, for libcurl (the caller frees them): `fixed` (the client's),
// the request's, the ones `signer` (if any) signs for this attempt, and no
// 100-continue round trip for an upload.
curl_slist* AttemptHeaders(const HttpRequest& request, const std::vector<std::string>& fixed,
                           const HttpSigner& signer, const std::string& payload_sha256) {
  std::vector<std::string> all = fixed;
  all.insert(all.end(), request.headers.begin(), request.headers.end());
  if (signer) {
    const std::vector<std::string> signed_headers = signer(request, payload_sha256);
    all.insert(all.end(), signed_headers.begin(), signed_headers.end());
  }
  if (request.method == "PUT" || request.method == "POST") all.push_back("Expect:");
  curl_slist* headers = nullptr;
  for (const std::string& header : all) headers = Curl().slist_append(headers, header.c_str());
  return headers;
}

}  // namespace

HttpError::HttpError(const std::string& url, int status, const std::string& message)
    : Error(url + ": " + message), status_(status) {}

std::string DescribeXmlError(std::string_view body) {
  if (body.find("<Error>") == std::string_view::npos) return "";
  // The raw texts (not decoded): what the server wrote.
  auto first = [&](std::string_view tag) {
    const std::vector<XmlElement> found = XmlElements(body, tag);
    return found.empty() ? std::string_view() : found.front().text;
  };
  const std::string_view code = first("Code"), message = first("Message");
  if (code.empty()) return "";
  return std::string(code) + (message.empty() ? "" : ": " + std::string(message));
}

// Easy handles kept between requests, so their connections stay alive.
class HttpClient::HandlePool {
 public:
  ~HandlePool() {
    for (CURL* h : free_) Curl().easy_cleanup(h);
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
    CURL* h = Curl().easy_init();
    if (h == nullptr) throw Error("libcurl: curl_easy_init failed");
    return h;
  }
  void Release(CURL* h) {
    Curl().easy_reset(h);  // keeps the connection cache
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(h);
  }

 private:
  std::mutex mu_;
  std::vector<CURL*> free_;  // guarded by mu_
};

HttpClient::HttpClient(HttpOptions options, HttpSigner signer)
    : options_(std::move(options)), signer_(std::move(signer)), handles_(std::make_unique<HandlePool>()) {
  Curl();  // loads libcurl now: a client that cannot work fails where it is made
}

HttpClient::~HttpClient() = default;

namespace {

// Why an attempt failed, for the error: libcurl's message (`error`, else its code's
// text), or the status's advice and what an S3-style error body says.
std::string DescribeFailure(CURLcode rc, const char* error, int status, const std::string& error_body) {
  if (rc != CURLE_OK) return *error ? error : Curl().easy_strerror(rc);
  const std::string server_says = DescribeXmlError(error_body);
  return StatusAdvice(status) + (server_says.empty() ? "" : " (the server: " + server_says + ")");
}

}  // namespace

HttpResponse HttpClient::Perform(const HttpRequest& request) const {
  const std::string payload_sha256 = signer_ ? Sha256Hex(request.body) : "";
  for (int attempt = 0;; ++attempt) {
    // 1. One attempt, signed anew.
    Attempt a;
    a.request = &request;
    curl_slist* headers = AttemptHeaders(request, options_.headers, signer_, payload_sha256);
    CURL* h = handles_->Acquire();
    a.handle = h;
    char error[CURL_ERROR_SIZE] = "";
    SetAttemptOptions(h, options_, headers, &a, error);
    const CURLcode rc = Curl().easy_perform(h);
    const TransferInfo info = ReadTransferInfo(h);
    ++requests_;
    connections_ += static_cast<uint64_t>(std::max(0L, info.connects));
    bytes_received_ += static_cast<uint64_t>(std::max<curl_off_t>(0, info.received));
    bytes_sent_ += static_cast<uint64_t>(std::max<curl_off_t>(0, info.sent));
    handles_->Release(h);
    Curl().slist_free_all(headers);
    HttpResponse& r = a.response;
    r.status = static_cast<int>(info.status);
    r.content_length = info.content_length;
    if (a.overflow) {
      throw HttpError(request.url, r.status, "the server sent more than the " +
                                                 std::to_string(request.capacity) +
                                                 " bytes asked for (does it honour Range requests?)");
    }
    // 2. Done, or a body cut short that the caller resumes from its next byte.
    if (rc == CURLE_OK && r.status >= 200 && r.status < 300) return std::move(r);
    if (rc != CURLE_OK && r.status == 206 && r.body_bytes > 0 && request.out != nullptr) {
      r.cut_short = true;
      return std::move(r);
    }
    // 3. Faults that are not retried.
    if (r.status == 412) {
      throw DataError(request.url, std::nullopt, "the object changed while it was read (If-Match failed)");
    }
    const bool retryable = rc != CURLE_OK ? (rc != CURLE_URL_MALFORMAT && rc != CURLE_UNSUPPORTED_PROTOCOL)
                                          : (r.status == 429 || r.status >= 500);
    const std::string what = DescribeFailure(rc, error, r.status, a.error_body);
    if (!retryable) throw HttpError(request.url, r.status, request.method + " " + what);
    // 4. The others, after a backoff, until the attempts run out.
    if (attempt + 1 >= options_.max_attempts) {
      throw HttpError(request.url, r.status, request.method + " gave up after " + std::to_string(attempt + 1) +
                                                 " attempts; the last: " + what);
    }
    ++retries_;
    std::this_thread::sleep_for(Backoff(options_, attempt, a.retry_after));
  }
}

std::optional<ContentRange> ParseContentRange(std::string_view value) {
  auto blank = [](char c) { return c == ' ' || c == '\t'; };
  while (!value.empty() && blank(value.front())) value.remove_prefix(1);
  while (!value.empty() && blank(value.back())) value.remove_suffix(1);
  // A decimal number at the front of `value`, removed; nullopt when none or over 64 bits.
  auto number = [&value]() -> std::optional<uint64_t> {
    size_t digits = 0;
    uint64_t n = 0;
    while (digits < value.size() && value[digits] >= '0' && value[digits] <= '9') {
      const uint64_t digit = static_cast<uint64_t>(value[digits] - '0');
      if (n > (UINT64_MAX - digit) / 10) return std::nullopt;
      n = n * 10 + digit;
      ++digits;
    }
    if (digits == 0) return std::nullopt;
    value.remove_prefix(digits);
    return n;
  };
  auto take = [&value](char c) {
    if (value.empty() || value.front() != c) return false;
    value.remove_prefix(1);
    return true;
  };
  if (value.substr(0, 6) != "bytes ") return std::nullopt;
  value.remove_prefix(6);
  ContentRange range;
  const std::optional<uint64_t> first = number();
  if (!first || !take('-')) return std::nullopt;
  const std::optional<uint64_t> last = number();
  if (!last || !take('/') || *first > *last) return std::nullopt;
  range.first = *first;
  range.last = *last;
  if (value != "*") {
    range.total = number();
    if (!range.total || !value.empty() || range.last >= *range.total) return std::nullopt;
  }
  return range;
}

HttpTraffic HttpClient::traffic() const {
  HttpTraffic t;
  t.requests = requests_.load();
  t.connections = connections_.load();
  t.bytes_received = bytes_received_.load();
  t.bytes_sent = bytes_sent_.load();
  t.retries = retries_.load();
  return t;
}

bool HttpClient::Exists(const std::string& url) const {
  HttpRequest head;
  head.method = "HEAD";
  head.url = url;
  try {
    Perform(head);
    return true;
  } catch (const HttpError& e) {
    if (e.status() == 404) return false;
    throw;
  }
}

}  // namespace imgpipe
