#include "io/http_byte_source.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace imgpipe {

HttpByteSource::HttpByteSource(std::string url, std::shared_ptr<const HttpClient> client, std::string name,
                               Open open)
    : url_(std::move(url)), name_(name.empty() ? url_ : std::move(name)), client_(std::move(client)) {
  if (open == Open::kFirstPiece) {
    GetFirstPiece(read_ahead_bytes());
  } else {
    Head();
  }
}

void HttpByteSource::Head() {
  HttpRequest head;
  head.method = "HEAD";
  head.url = url_;
  const HttpResponse r = client_->Perform(head);
  if (r.status != 200) throw HttpError(url_, r.status, "HEAD answered HTTP " + std::to_string(r.status));
  if (r.content_length < 0) throw HttpError(url_, r.status, "the HEAD response has no Content-Length");
  etag_ = r.etag;
  size_ = static_cast<uint64_t>(r.content_length);
}

void HttpByteSource::GetFirstPiece(size_t bytes) {
  PieceBuffer piece(bytes);
  HttpRequest get;
  get.url = url_;
  get.headers.push_back("Range: bytes=0-" + std::to_string(bytes - 1));
  get.out = piece.data();
  get.capacity = bytes;
  HttpResponse r;
  try {
    r = client_->Perform(get);
  } catch (const HttpError& e) {
    if (e.status() != 416) throw;
    Head();  // an empty object has no byte 0
    return;
  }
  etag_ = r.etag;
  if (r.status == 206) {
    const ContentRange range = RangeOf(r, 0, bytes - 1);
    if (!range.total) {
      throw HttpError(url_, 206, "got Content-Range '" + r.content_range + "' without the object's size");
    }
    size_ = *range.total;
  } else {
    size_ = r.body_bytes;  // 200: the whole object, within `bytes` (more is an HttpError)
  }
  if (r.cut_short) client_->CountRetry();  // what came is kept; the rest is read again later
  piece.resize(r.body_bytes);
  first_piece_ = std::move(piece);
}

ContentRange HttpByteSource::RangeOf(const HttpResponse& r, uint64_t first, uint64_t last) const {
  const std::optional<ContentRange> range = ParseContentRange(r.content_range);
  if (!range || range->first != first) {
    throw HttpError(url_, 206, "asked for bytes " + std::to_string(first) + "-" + std::to_string(last) +
                                   ", got Content-Range '" + r.content_range + "'");
  }
  return *range;
}

size_t HttpByteSource::ReadFirstPiece(uint64_t offset, char* out, size_t n) const {
  std::lock_guard<std::mutex> lock(first_mu_);
  if (offset >= first_piece_.size()) return 0;
  const size_t take = static_cast<size_t>(std::min<uint64_t>(n, first_piece_.size() - offset));
  std::memcpy(out, first_piece_.data() + offset, take);
  if (offset + take == first_piece_.size()) first_piece_.reset();  // read through: back to the pool
  return take;
}

bool HttpByteSource::TakeHeldPiece(ByteRange range, PieceBuffer* out) const {
  std::lock_guard<std::mutex> lock(first_mu_);
  if (range.offset != 0 || range.size == 0 || range.size != first_piece_.size()) return false;
  *out = std::move(first_piece_);
  return true;
}

HttpByteSource::HttpByteSource(std::string url, HttpOptions options)
    : HttpByteSource(std::move(url), std::make_shared<const HttpClient>(std::move(options))) {}

size_t HttpByteSource::Read(uint64_t offset, char* out, size_t n) const {
  if (offset >= size_ || n == 0) return 0;
  n = static_cast<size_t>(std::min<uint64_t>(n, size_ - offset));
  size_t done = ReadFirstPiece(offset, out, n);
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
    if (r.status == 206) {
      const ContentRange range = RangeOf(r, first, last);
      if (range.total && *range.total != size_) {
        throw DataError(name_, first, "the object changed while it was read (" + std::to_string(size_) +
                                          " bytes when opened, now " + std::to_string(*range.total) + ")");
      }
    }
    done += r.body_bytes;
  }
  return n;
}

}  // namespace imgpipe
