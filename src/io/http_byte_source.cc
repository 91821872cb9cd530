#include "io/http_byte_source.h"

#include <algorithm>
#include <utility>

namespace imgpipe {

HttpByteSource::HttpByteSource(std::string url, std::shared_ptr<const HttpClient> client,
                               std::string name)
    : url_(std::move(url)), name_(name.empty() ? url_ : std::move(name)), client_(std::move(client)) {
  HttpRequest head;
  head.method = "HEAD";
  head.url = url_;
  const HttpResponse r = client_->Perform(head);
  if (r.status != 200) throw HttpError(url_, r.status, "HEAD answered HTTP " + std::to_string(r.status));
  if (r.content_length < 0) throw HttpError(url_, r.status, "the HEAD response has no Content-Length");
  etag_ = r.etag;
  size_ = static_cast<uint64_t>(r.content_length);
}

HttpByteSource::HttpByteSource(std::string url, HttpOptions options)
    : HttpByteSource(std::move(url), std::make_shared<const HttpClient>(std::move(options))) {}

size_t HttpByteSource::Read(uint64_t offset, char* out, size_t n) const {
  if (offset >= size_ || n == 0) return 0;
  n = static_cast<size_t>(std::min<uint64_t>(n, size_ - offset));
  size_t done = 0;
  for (int pieces = 0; done < n; ++pieces) {
    if (pieces >= client_->options().max_attempts) {
      throw HttpError(url_, 206, "gave up resuming a body cut short " + std::to_string(pieces) + " times");
    }
    if (pieces > 0) client_->CountRetry();  // resuming a body cut short
    const uint64_t first = offset + done, last = offset + n - 1;
    HttpRequest get;
    get.url = url_;
    get.headers.push_back("Range: bytes=" + std::to_string(first) + "-" + std::to_string(last));
    if (!etag_.empty()) get.headers.push_back("If-Match: " + etag_);
    get.out = out + done;
    get.capacity = n - done;
    const HttpResponse r = client_->Perform(get);
    if (!r.etag.empty() && !etag_.empty() && r.etag != etag_) {
      throw DataError(name_, first, "the object changed while it was read (ETag " + etag_ + ", now " + r.etag + ")");
    }
    if (r.status == 200 && !(first == 0 && r.body_bytes == size_)) {
      throw HttpError(url_, 200, "the server ignores Range requests (answered 200 to bytes=" +
                                     std::to_string(first) + "-" + std::to_string(last) + ")");
    }
    if (r.status == 206 && r.content_range.rfind("bytes " + std::to_string(first) + "-", 0) != 0) {
      throw HttpError(url_, 206, "asked for bytes " + std::to_string(first) + "-" + std::to_string(last) +
                                     ", got Content-Range '" + r.content_range + "'");
    }
    done += r.body_bytes;
  }
  return n;
}

}  // namespace imgpipe
