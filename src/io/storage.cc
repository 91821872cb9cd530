#include "io/storage.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "io/aws_config.h"
#include "io/http_byte_source.h"
#include "io/s3_client.h"
#include "io/shard_cache.h"
#include "util/error.h"
#include "util/file.h"
#include "util/thread_pool.h"

namespace imgpipe {
namespace {

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

bool IsHttp(std::string_view path) { return StartsWith(path, "http://") || StartsWith(path, "https://"); }

// The retry settings of the process's clients: HttpOptions' defaults, or the variables
// of storage.h.
HttpOptions HttpOptionsFromEnvironment() {
  HttpOptions o;
  auto set = [](const char* name, int* value, int min) {
    const char* text = std::getenv(name);
    if (text == nullptr || *text == '\0') return;
    char* end = nullptr;
    const long v = std::strtol(text, &end, 10);
    if (*end != '\0' || v < min || v > 1000000) {
      throw InvalidArgument(std::string(name) + " must be a whole number >= " + std::to_string(min) + ", not '" + text + "'");
    }
    *value = static_cast<int>(v);
  };
  set("IMGPIPE_HTTP_MAX_ATTEMPTS", &o.max_attempts, 1);
  set("IMGPIPE_HTTP_BASE_DELAY_MS", &o.base_delay_ms, 0);
  set("IMGPIPE_HTTP_STALL_SECONDS", &o.low_speed_seconds, 1);
  return o;
}

// The settings gs:// URLs are read with (see storage.h), from the environment.
S3ClientOptions GcsOptions() {
  auto env = [](const char* name) -> std::string {
    const char* value = std::getenv(name);
    return value == nullptr ? "" : value;
  };
  S3ClientOptions o;
  o.settings.region = "auto";
  o.settings.endpoint_url = env("GCS_ENDPOINT_URL").empty() ? "https://storage.googleapis.com" : env("GCS_ENDPOINT_URL");
  o.settings.path_style = true;
  o.bearer_token = env("GOOGLE_OAUTH_ACCESS_TOKEN");
  o.settings.credentials.access_key_id = env("GCS_HMAC_ACCESS_KEY_ID");
  o.settings.credentials.secret_access_key = env("GCS_HMAC_SECRET_ACCESS_KEY");
  if (o.settings.credentials.access_key_id.empty() != o.settings.credentials.secret_access_key.empty()) {
    throw InvalidArgument("set both GCS_HMAC_ACCESS_KEY_ID and GCS_HMAC_SECRET_ACCESS_KEY, or neither");
  }
  o.settings.anonymous = o.bearer_token.empty() && o.settings.credentials.access_key_id.empty();
  o.settings.source = !o.bearer_token.empty() ? "GOOGLE_OAUTH_ACCESS_TOKEN"
                      : o.settings.anonymous  ? "anonymous"
                                              : "GCS_HMAC_ACCESS_KEY_ID";
  return o;
}

std::mutex clients_mu;
std::map<std::string, std::shared_ptr<const S3Client>> object_stores;  // guarded by clients_mu
std::shared_ptr<const HttpClient> web_client;                          // guarded by clients_mu
std::shared_ptr<ShardCache> storage_cache;                             // guarded by clients_mu

// The process's cache of fetched objects; null when none is configured.
std::shared_ptr<ShardCache> StorageCache() {
  std::lock_guard<std::mutex> lock(clients_mu);
  return storage_cache;
}

// The process's client for `scheme` ("s3" or "gs"), made at first use.
std::shared_ptr<const S3Client> ObjectStore(const std::string& scheme) {
  std::lock_guard<std::mutex> lock(clients_mu);
  std::shared_ptr<const S3Client>& client = object_stores[scheme];
  if (!client) {
    S3ClientOptions options;
    if (scheme == "gs") {
      options = GcsOptions();
    } else {
      options.settings = ResolveAwsSettings();
    }
    options.http = HttpOptionsFromEnvironment();
    client = std::make_shared<const S3Client>(std::move(options));
  }
  return client;
}

// The process's client for http(s) URLs.
std::shared_ptr<const HttpClient> WebClient() {
  std::lock_guard<std::mutex> lock(clients_mu);
  if (!web_client) web_client = std::make_shared<const HttpClient>(HttpOptionsFromEnvironment());
  return web_client;
}

// `call()`, its HttpError said again with `url` (the s3:// or gs:// URL the user gave) in
// front of the request's.
template <typename Call>
auto NamingUrl(const std::string& url, Call call) -> decltype(call()) {
  try {
    return call();
  } catch (const HttpError& e) {
    throw HttpError(url, e.status(), e.what());
  }
}

// Throws InvalidArgument when `path` is an http(s) URL: those are read-only.
void RefuseHttpWrite(const std::string& path) {
  if (IsHttp(path)) throw InvalidArgument(path + ": http(s) URLs are read-only; write to a folder or s3:// / gs://");
}

// `url` with one trailing '/' (a folder's URL or prefix).
std::string AsFolder(std::string url) {
  if (url.empty() || url.back() != '/') url += '/';
  return url;
}

}  // namespace

void ResetStorageClients() {
  std::lock_guard<std::mutex> lock(clients_mu);
  object_stores.clear();
  web_client.reset();
}

void ConfigureStorageCache(const std::string& dir, uint64_t max_bytes) {
  std::lock_guard<std::mutex> lock(clients_mu);
  if (dir.empty()) {
    storage_cache.reset();
  } else if (!storage_cache || storage_cache->dir() != dir ||
             (max_bytes != 0 && storage_cache->max_bytes() != max_bytes)) {
    storage_cache = std::make_shared<ShardCache>(dir, max_bytes);
  }
}

ShardCacheCounters StorageCacheCounters() {
  const std::shared_ptr<ShardCache> cache = StorageCache();
  return cache ? cache->counters() : ShardCacheCounters{};
}

uint64_t StorageRetries() { return StorageTraffic().retries; }

HttpTraffic StorageTraffic() {
  std::lock_guard<std::mutex> lock(clients_mu);
  HttpTraffic traffic = web_client ? web_client->traffic() : HttpTraffic{};
  for (const auto& [scheme, client] : object_stores) {
    if (client) traffic += client->http().traffic();
  }
  return traffic;
}

bool IsUrl(std::string_view path) {
  return StartsWith(path, "s3://") || StartsWith(path, "gs://") || IsHttp(path);
}

void ForEachStoragePath(const std::vector<std::string>& paths, const std::function<void(size_t)>& fn) {
  constexpr size_t kMaxAtOnce = 16;
  const bool network = std::any_of(paths.begin(), paths.end(), [](const std::string& p) { return IsUrl(p); });
  if (!network || paths.size() < 2) {
    for (size_t i = 0; i < paths.size(); ++i) fn(i);
    return;
  }
  ThreadPool pool(static_cast<int>(std::min(kMaxAtOnce, paths.size())));
  ParallelFor(pool, paths.size(), fn);
}

// `path` (a URL) opened from the network, as `pattern` says.
std::unique_ptr<ByteSource> OpenUncached(const std::string& path, ReadPattern pattern) {
  const auto open = pattern == ReadPattern::kFrontToBack ? HttpByteSource::Open::kFirstPiece : HttpByteSource::Open::kHead;
  if (IsHttp(path)) return std::make_unique<HttpByteSource>(path, WebClient(), "", open);
  const ObjectUrl o = ParseObjectUrl(path);
  return NamingUrl(path, [&] { return ObjectStore(o.scheme)->Open(o.bucket, o.key, path, open); });
}

std::unique_ptr<ByteSource> OpenByteSource(const std::string& path, ReadPattern pattern) {
  if (!IsUrl(path)) return OpenLocalByteSource(path);
  const std::shared_ptr<ShardCache> cache = StorageCache();
  if (!cache) return OpenUncached(path, pattern);
  // A copy of the current version, else the network; read front to back, a copy is kept.
  auto head = [&path] {
    const std::unique_ptr<ByteSource> source = OpenUncached(path, ReadPattern::kRandom);
    const auto* http = dynamic_cast<const HttpByteSource*>(source.get());
    return ObjectVersion{source->size(), http != nullptr ? http->etag() : ""};
  };
  if (std::unique_ptr<ByteSource> copy = cache->OpenCopy(path, head)) return copy;
  std::unique_ptr<ByteSource> source = OpenUncached(path, pattern);
  const auto* http = dynamic_cast<const HttpByteSource*>(source.get());
  if (pattern != ReadPattern::kFrontToBack || http == nullptr) return source;
  const ObjectVersion version{source->size(), http->etag()};
  return cache->Filling(path, version, std::move(source));
}

uint64_t ReadAheadBytes(const std::string& path) {
  return IsUrl(path) ? uint64_t{kMaxPiecesHeld} * HttpByteSource::kPieceBytes : 0;
}

std::unique_ptr<SequentialFile> OpenSequentialStorage(const std::string& path) {
  return IsUrl(path) ? ReadFrontToBack(OpenByteSource(path, ReadPattern::kFrontToBack)) : OpenSequentialFile(path);
}

bool StorageExists(const std::string& path) {
  if (!IsUrl(path)) return PathExists(path);
  if (IsHttp(path)) return WebClient()->Exists(path);
  const ObjectUrl o = ParseObjectUrl(path);
  return NamingUrl(path, [&] { return ObjectStore(o.scheme)->Exists(o.bucket, o.key); });
}

bool IsStorageFolder(const std::string& path) {
  if (!IsUrl(path)) return IsDirectory(path);
  if (path.back() == '/') return true;
  if (IsHttp(path)) return StorageExists(AsFolder(path) + "dataset.json");
  const ObjectUrl o = ParseObjectUrl(path);
  if (o.key.empty()) return true;
  return NamingUrl(path, [&] { return !ObjectStore(o.scheme)->List(o.bucket, AsFolder(o.key), "/").empty(); });
}

uint64_t StorageSize(const std::string& path) {
  return IsUrl(path) ? OpenUncached(path, ReadPattern::kRandom)->size() : FileSize(path);
}

std::string ReadStorageFile(const std::string& path) {
  if (!IsUrl(path)) return ReadFile(path);
  if (IsHttp(path)) {
    HttpRequest get;
    get.url = path;
    return WebClient()->Perform(get).body;
  }
  const ObjectUrl o = ParseObjectUrl(path);
  return NamingUrl(path, [&] { return ObjectStore(o.scheme)->Get(o.bucket, o.key); });
}

void WriteStorageFile(const std::string& path, std::string_view data) {
  if (!IsUrl(path)) return WriteFileAtomic(path, data);
  RefuseHttpWrite(path);
  const ObjectUrl o = ParseObjectUrl(path);
  NamingUrl(path, [&] { ObjectStore(o.scheme)->Put(o.bucket, o.key, data); });
}

std::vector<std::string> ListStorageFolder(const std::string& dir) {
  if (!IsUrl(dir)) return ListDirectory(dir);
  std::vector<std::string> names;
  if (IsHttp(dir)) {
    // 1. An http(s) folder: the shards its dataset.json lists, and the files beside them.
    const std::string listing = AsFolder(dir) + "dataset.json";
    std::string text;
    try {
      text = ReadStorageFile(listing);
    } catch (const HttpError& e) {
      if (e.status() != 404) throw;
      throw HttpError(dir, 404, "an http(s) folder is listed by the dataset.json that imgpipe convert "
                                "writes in it, and " + listing + " is not found; name the shards "
                                "instead, with a brace pattern such as " + AsFolder(dir) +
                                "train-{00000..00009}-of-00010.tfrecord");
    }
    const nlohmann::json info = nlohmann::json::parse(text, nullptr, false);
    if (info.is_discarded() || !info.contains("shards") || !info["shards"].is_array()) {
      throw DataError(listing, 0, "not a dataset.json of imgpipe convert (no \"shards\" list)");
    }
    names = {"dataset.json", "labels.txt"};
    for (const nlohmann::json& shard : info["shards"]) {
      if (!shard.is_object() || !shard.contains("file") || !shard["file"].is_string()) {
        throw DataError(listing, 0, "a \"shards\" entry without a \"file\" name");
      }
      const std::string file = shard["file"].get<std::string>();
      if (file.empty() || file.find('/') != std::string::npos || file[0] == '.') {
        throw DataError(listing, 0, "shard name '" + file + "' is not a plain file name");
      }
      names.push_back(file);
      names.push_back(file + ".idx");
    }
  } else {
    // 2. An object store: the keys directly under the prefix.
    for (StorageEntry& entry : ListStorageFolderSizes(dir)) names.push_back(std::move(entry.name));
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::vector<std::string> ExpandBraces(const std::string& pattern) {
  // 1. The pattern as literal parts and groups of choices, braces checked.
  std::vector<std::vector<std::string>> parts;  // a literal is a group of one
  for (size_t at = 0; at < pattern.size();) {
    const size_t open = pattern.find_first_of("{}", at);
    if (open != std::string::npos && pattern[open] == '}') throw InvalidArgument(pattern + ": '}' without '{'");
    parts.push_back({pattern.substr(at, open - at)});
    if (open == std::string::npos) break;
    const size_t close = pattern.find_first_of("{}", open + 1);
    if (close == std::string::npos || pattern[close] == '{') {
      throw InvalidArgument(pattern + ": '{' without '}' (braces do not nest)");
    }
    const std::string body = pattern.substr(open + 1, close - open - 1);
    std::vector<std::string> choices;
    const size_t dots = body.find("..");
    if (dots != std::string::npos) {
      // A numeric range: each number written as wide as the first bound.
      const std::string first = body.substr(0, dots), last = body.substr(dots + 2);
      auto digits = [](const std::string& t) { return !t.empty() && t.find_first_not_of("0123456789") == std::string::npos; };
      if (!digits(first) || !digits(last) || first.size() > 9 || last.size() > 9) {
        throw InvalidArgument(pattern + ": a brace range is {FIRST..LAST} of decimal numbers");
      }
      const long a = std::stol(first), b = std::stol(last);
      if (b < a || b - a >= 1000000) {
        throw InvalidArgument(pattern + ": the range {" + body + "} is empty or over 1,000,000 names");
      }
      for (long i = a; i <= b; ++i) {
        std::string n = std::to_string(i);
        if (n.size() < first.size()) n.insert(0, first.size() - n.size(), '0');
        choices.push_back(n);
      }
    } else {
      for (size_t from = 0;;) {  // a list of words
        const size_t comma = body.find(',', from);
        choices.push_back(body.substr(from, comma - from));
        if (comma == std::string::npos) break;
        from = comma + 1;
      }
    }
    parts.push_back(std::move(choices));
    at = close + 1;
  }
  // 2. The count before any name is made; then the names, the first group varying slowest.
  uint64_t count = 1;
  for (const auto& choices : parts) {
    count *= choices.size();
    if (count > 1000000) throw InvalidArgument(pattern + ": expands to over 1,000,000 names");
  }
  std::vector<std::string> names = {""};
  for (const auto& choices : parts) {
    std::vector<std::string> longer;
    longer.reserve(names.size() * choices.size());
    for (const std::string& name : names) {
      for (const std::string& choice : choices) longer.push_back(name + choice);
    }
    names = std::move(longer);
  }
  return names;
}

std::vector<StorageEntry> ListStorageFolderSizes(const std::string& dir) {
  std::vector<StorageEntry> entries;
  if (!IsUrl(dir)) {
    if (!IsDirectory(dir)) return entries;
    for (const std::string& name : ListDirectory(dir)) {
      struct stat st;
      if (::stat(JoinPath(dir, name).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      entries.push_back({name, static_cast<uint64_t>(st.st_size)});
    }
    return entries;
  }
  if (IsHttp(dir)) throw InvalidArgument(dir + ": an http(s) folder is not listed with sizes");
  const ObjectUrl o = ParseObjectUrl(dir);
  const std::string prefix = o.key.empty() ? "" : AsFolder(o.key);
  const auto objects = NamingUrl(dir, [&] { return ObjectStore(o.scheme)->List(o.bucket, prefix, "/"); });
  for (const S3Object& object : objects) {
    const std::string name = object.key.substr(prefix.size());
    if (!name.empty() && name.find('/') == std::string::npos) entries.push_back({name, object.size});
  }
  std::sort(entries.begin(), entries.end(),
            [](const StorageEntry& a, const StorageEntry& b) { return a.name < b.name; });
  return entries;
}

void UploadStorageFile(const std::string& local, const std::string& path) {
  RefuseHttpWrite(path);
  // 1. The file, mapped read-only (an empty one is not mapped).
  const int fd = ::open(local.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError(local, "open", errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    throw IoError(local, "fstat", error);
  }
  const size_t size = static_cast<size_t>(st.st_size);
  void* map = size == 0 ? nullptr : ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_error = errno;
  ::close(fd);
  if (map == MAP_FAILED) throw IoError(local, "mmap", map_error);
  struct Unmap {
    void* map;
    size_t size;
    ~Unmap() {
      if (map != nullptr) ::munmap(map, size);
    }
  } unmap{map, size};
  if (map != nullptr) ::madvise(map, size, MADV_SEQUENTIAL);
  // 2. Its bytes, written whole.
  WriteStorageFile(path, std::string_view(static_cast<const char*>(map), size));
}

void DeleteStorageFile(const std::string& path) {
  if (!IsUrl(path)) return RemoveFile(path);
  RefuseHttpWrite(path);
  const ObjectUrl o = ParseObjectUrl(path);
  NamingUrl(path, [&] { ObjectStore(o.scheme)->Delete(o.bucket, o.key); });
}

}  // namespace imgpipe
