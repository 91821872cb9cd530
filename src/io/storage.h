// Paths and URLs as one set of files: what the layers above io/ call instead of util/file.h
// when a path may name network storage. A path is one of
//
//   a local path       /data/shards/train-00000-of-00008.tfrecord
//   s3://BUCKET/KEY    S3 or an S3-compatible store: AWS's credential chain, AWS_REGION,
//                      AWS_ENDPOINT_URL (aws_config.h)
//   gs://BUCKET/KEY    Google Cloud Storage through its XML API: a bearer token from
//                      GOOGLE_OAUTH_ACCESS_TOKEN, else HMAC keys GCS_HMAC_ACCESS_KEY_ID +
//                      GCS_HMAC_SECRET_ACCESS_KEY (signed as S3), else anonymous; the
//                      endpoint GCS_ENDPOINT_URL, else https://storage.googleapis.com
//   http(s)://HOST/PATH  any server that honours Range; a "folder" is listed by the
//                      dataset.json that imgpipe convert writes there.
//
// "Folders" of object stores are key prefixes ending in '/'. Clients (and their kept-alive
// connections) are made once per process and scheme, from the environment at first use;
// their retries (http_client.h) follow IMGPIPE_HTTP_MAX_ATTEMPTS (tries per request,
// default 8), IMGPIPE_HTTP_BASE_DELAY_MS (first backoff, 100) and
// IMGPIPE_HTTP_STALL_SECONDS (a body under 1 KiB/s this long is stalled, 20).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "io/byte_source.h"
#include "io/http_client.h"
#include "io/shard_cache.h"

namespace imgpipe {

// Forgets the clients made so far: the next use reads the environment again (tests and
// programs that change AWS_* or GCS_* variables). Sources already open keep theirs.
void ResetStorageClients();

// Keeps the objects read front to back from URLs as local copies in `dir` (shard_cache.h),
// at most `max_bytes` of them (0: 90% of the space free there), for the epochs and runs
// after the first; "" turns the cache off. Process-wide, like the clients: the same
// folder and size again keep the cache as it is. Throws IoError when `dir` cannot be made.
void ConfigureStorageCache(const std::string& dir, uint64_t max_bytes = 0);
// What the cache has done so far (zeros when there is none).
ShardCacheCounters StorageCacheCounters();

// Retries so far by the process's storage clients (all schemes): how many faults the
// reads and writes rode over.
uint64_t StorageRetries();
// Requests, connections, bytes and retries so far of the process's storage clients (all
// schemes; since the last ResetStorageClients).
HttpTraffic StorageTraffic();

// Whether `path` is a URL (s3://, gs://, http://, https://), not a local path.
bool IsUrl(std::string_view path);

// How a source will be read: at any offsets, or front to back (a URL's source then gets
// its first piece as it opens, instead of a HEAD: one round trip fewer per shard).
enum class ReadPattern { kRandom, kFrontToBack };

// Runs fn(i) for each i in [0, paths.size()) and returns when all have: up to 16 at once
// when some path is a URL (each call then mostly waits for round trips), else one after
// another. Rethrows the first exception (by index) after every call has ended.
void ForEachStoragePath(const std::vector<std::string>& paths, const std::function<void(size_t)>& fn);

// `path` opened for reading. Throws IoError (local), HttpError (404: not found, 403: access
// denied, with what to check), InvalidArgument for a malformed URL.
std::unique_ptr<ByteSource> OpenByteSource(const std::string& path, ReadPattern pattern = ReadPattern::kRandom);

// The most bytes a source of `path` read front to back holds in memory ahead of its
// reader (ReadFrontToBack's pieces): for a URL, 5 pieces of 8 MiB; 0 for a local path.
uint64_t ReadAheadBytes(const std::string& path);

// `path` read front to back: a local file as OpenSequentialFile opens it, a URL through
// its byte source (read ahead in pieces, byte_source.h). Throws as OpenByteSource.
std::unique_ptr<SequentialFile> OpenSequentialStorage(const std::string& path);

// Whether the file or object exists. Throws HttpError for answers other than 200 and 404.
bool StorageExists(const std::string& path);
// Whether `path` is a folder: a local directory; a URL ending in '/'; a bucket; a prefix
// with objects under PREFIX/; an HTTP URL with a dataset.json under it.
bool IsStorageFolder(const std::string& path);
// The size in bytes. Throws as OpenByteSource.
uint64_t StorageSize(const std::string& path);
// The whole file or object. Throws as OpenByteSource.
std::string ReadStorageFile(const std::string& path);
// Writes `data` to `path` whole: locally through a temporary file and a rename, to an
// object store by a PUT (multipart when large) so the object appears only when complete.
// Throws IoError, HttpError; InvalidArgument for http(s) URLs (read-only).
void WriteStorageFile(const std::string& path, std::string_view data);

// The names of the files directly in folder `dir`, sorted bytewise (no sub-folders): a
// directory's entries; the objects under an s3:// or gs:// prefix (one page after another);
// for an http(s) folder, the shards that its dataset.json lists with their .idx files and
// labels.txt, dataset.json. Throws IoError, HttpError, DataError (a dataset.json that does
// not parse).
std::vector<std::string> ListStorageFolder(const std::string& dir);

// `pattern` with each brace range "{00000..00127}" (WebDataset's convention: the width of
// the first bound kept) and list "{a,b}" expanded, in order. Throws InvalidArgument for an
// unbalanced or nested brace, or a pattern of over 1,000,000 names (counted before any is
// made).
std::vector<std::string> ExpandBraces(const std::string& pattern);

// A file of a folder and its size in bytes.
struct StorageEntry {
  std::string name;
  uint64_t size = 0;
};

// The files directly in folder `dir` with their sizes, sorted bytewise by name (no
// sub-folders): a directory's regular files (an entry removed while it is listed is left
// out); the objects under an s3:// or gs:// prefix, from the LIST requests that
// ListStorageFolder makes. A missing directory or an empty prefix lists as empty. Throws
// IoError, HttpError; InvalidArgument for http(s) URLs (their listing has no sizes).
std::vector<StorageEntry> ListStorageFolderSizes(const std::string& dir);

// Copies the local file `local` to `path` whole, as WriteStorageFile writes `data`:
// locally through a temporary file and a rename; to an object store by a PUT (multipart
// when large), so the object appears only when complete. The file is mapped, not read
// into memory: a 256 MB shard costs page cache, not a copy on the heap. Throws IoError
// (naming `local` or `path`), HttpError; InvalidArgument for http(s) URLs.
void UploadStorageFile(const std::string& local, const std::string& path);

// Removes the file or object; none there is no error. Throws IoError, HttpError;
// InvalidArgument for http(s) URLs.
void DeleteStorageFile(const std::string& path);

}  // namespace imgpipe
