// An object behind HTTP(S) read as a ByteSource: its size and ETag from a HEAD, then
// ranged GETs ("Range: bytes=A-B" with "If-Match: ETAG") through an HttpClient, whose
// rules retry faults (http_client.h). Besides them:
//
//   a body cut short resumes from its next byte (up to max_attempts pieces);
//   a changed ETag, a 412 or a Content-Range with another total size is a DataError (the
//   object changed while it was read; never mixed data); a server that ignores Range, or
//   answers with a Content-Range that does not parse or starts elsewhere, is an HttpError.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "io/byte_source.h"
#include "io/http_client.h"

namespace imgpipe {

class HttpByteSource : public ByteSource {
 public:
  // How the size and ETag are learnt: by a HEAD, or (for a source read front to back) by a
  // ranged GET of its first read_ahead_bytes(), held until a read has taken them. The
  // latter saves a round trip, and the first reads (compression detection, the first
  // piece) cost none.
  enum class Open { kHead, kFirstPiece };

  // Opens `url` through `client` as `open` says; `name` (default: the URL) names it in
  // errors (an s3:// URL for the https:// one requested). Throws HttpError as above.
  HttpByteSource(std::string url, std::shared_ptr<const HttpClient> client, std::string name = "",
                 Open open = Open::kHead);
  // The same with a client of its own.
  explicit HttpByteSource(std::string url, HttpOptions options = {});

  uint64_t size() const override { return size_; }
  // Ranged GETs (retried as above) until n bytes or the end. Throws HttpError or DataError.
  size_t Read(uint64_t offset, char* out, size_t n) const override;
  const std::string& name() const override { return name_; }
  // Read front to back in ranged GETs of 8 MiB, 2 to 4 ahead (TensorFlow's S3 reads went
  // from ~200 to ~2,600 images/s with large parallel ranges; each GET costs a round trip).
  size_t read_ahead_bytes() const override { return kPieceBytes; }
  static constexpr size_t kPieceBytes = kPieceBufferBytes;
  // The first piece, while no read has taken all of it, when `range` is exactly it.
  bool TakeHeldPiece(ByteRange range, PieceBuffer* out) const override;

  const std::string& etag() const { return etag_; }
  // Retries so far, of every request of the client (this source's and others').
  uint64_t retries() const { return client_->retries(); }

 private:
  // Sets size_ and etag_ from a HEAD.
  void Head();
  // Sets size_, etag_ and first_piece_ from a GET of the first `bytes` (a HEAD when the
  // object is empty).
  void GetFirstPiece(size_t bytes);
  // The Content-Range of `r`, a 206 answer to bytes first-last. Throws HttpError when it
  // does not parse or starts elsewhere.
  ContentRange RangeOf(const HttpResponse& r, uint64_t first, uint64_t last) const;
  // Copies what first_piece_ holds of [offset, offset + n) to `out` (0 when it holds none
  // of it), and drops the piece once a read has reached its end.
  size_t ReadFirstPiece(uint64_t offset, char* out, size_t n) const;

  const std::string url_;
  const std::string name_;
  const std::shared_ptr<const HttpClient> client_;
  uint64_t size_ = 0;
  std::string etag_;
  mutable std::mutex first_mu_;
  mutable PieceBuffer first_piece_;  // guarded by first_mu_; bytes [0, size) until read
};

}  // namespace imgpipe
