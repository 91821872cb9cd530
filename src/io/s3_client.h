// S3's REST API, the part imgpipe needs, for AWS and every store that speaks it (MinIO,
// Ceph, s3rver, GCS's XML API): HEAD and ranged GET of objects, ListObjectsV2 with
// pagination, PUT, and multipart uploads above a size. Requests are signed with SigV4
// (aws_sigv4.h) from the credentials the chain resolved (aws_config.h), or go unsigned
// (anonymous), or carry a bearer token (GCS); faults are retried by HttpClient's rules.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "io/aws_config.h"
#include "io/byte_source.h"
#include "io/http_byte_source.h"
#include "io/http_client.h"

namespace imgpipe {

// "s3://BUCKET/KEY" (or "gs://..."): the scheme, the bucket and the key ("" for the
// bucket's root).
struct ObjectUrl {
  std::string scheme, bucket, key;
};
// Throws InvalidArgument for a URL not of that form (no bucket, another scheme).
ObjectUrl ParseObjectUrl(const std::string& url);

// An object of a listing.
struct S3Object {
  std::string key;
  uint64_t size = 0;
  std::string etag;
};

// One page of a ListObjectsV2 response.
struct S3ListPage {
  std::vector<S3Object> objects;
  std::vector<std::string> common_prefixes;
  bool truncated = false;
  std::string next_token;  // NextContinuationToken, when truncated
};

// Parses a ListObjectsV2 response body (XML entities in keys decoded). Throws DataError
// naming `url` and the offset for a body that is not a ListBucketResult, an object without
// Key or with a Size that is not a number, or a truncated page without a token.
S3ListPage ParseListObjectsV2(std::string_view xml, const std::string& url);

struct S3ClientOptions {
  AwsSettings settings;         // credentials, region, endpoint, addressing
  std::string bearer_token;     // sent as "Authorization: Bearer" instead of signing
  HttpOptions http;
  uint64_t multipart_threshold = 64ull << 20;  // Put uses multipart above this size ...
  uint64_t part_size = 16ull << 20;            // ... in parts of this size (>= 5 MiB)
  int list_page_size = 1000;                   // ListObjectsV2's max-keys
};

class S3Client {
 public:
  explicit S3Client(S3ClientOptions options);

  // The object's HTTP(S) URL (path-style or virtual-hosted, as the settings say), the
  // key's segments percent-encoded; `query` ("a=b&c=d", already encoded) appended.
  std::string HttpUrl(const std::string& bucket, const std::string& key,
                      const std::string& query = "") const;

  // The object as a ByteSource named `name` (its s3:// URL) in errors, opened as `open`
  // says (http_byte_source.h). Throws HttpError (404: no such object; 403: the credentials).
  std::unique_ptr<ByteSource> Open(const std::string& bucket, const std::string& key, const std::string& name,
                                   HttpByteSource::Open open = HttpByteSource::Open::kHead) const;
  // Every object under `prefix` (all pages), sorted by key; with `delimiter` "/", only the
  // ones directly under it. Throws HttpError, DataError.
  std::vector<S3Object> List(const std::string& bucket, const std::string& prefix,
                             const std::string& delimiter = "") const;
  // Whether the object exists (HEAD: 200 or 404; other statuses throw HttpError).
  bool Exists(const std::string& bucket, const std::string& key) const;
  // Removes the object; none there is no error. Throws HttpError.
  void Delete(const std::string& bucket, const std::string& key) const;
  // The whole object. Throws HttpError.
  std::string Get(const std::string& bucket, const std::string& key) const;
  // Writes the object: one PUT up to multipart_threshold, else a multipart upload (aborted
  // on failure), so the object appears only when complete. Throws HttpError, DataError.
  void Put(const std::string& bucket, const std::string& key, std::string_view data) const;

  const HttpClient& http() const { return *client_; }
  std::shared_ptr<const HttpClient> shared_http() const { return client_; }

 private:
  void PutMultipart(const std::string& bucket, const std::string& key, std::string_view data) const;

  const S3ClientOptions options_;
  std::shared_ptr<const HttpClient> client_;
};

}  // namespace imgpipe
