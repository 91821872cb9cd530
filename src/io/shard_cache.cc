#include "io/shard_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "io/aws_sigv4.h"
#include "util/error.h"
#include "util/file.h"
#include "util/logging.h"

namespace imgpipe {

// A source whose bytes, as they are read, are written at their offsets into a temporary
// file; when every byte has been read once, the file becomes the cache's copy.
class FillingByteSource : public ByteSource {
 public:
  FillingByteSource(std::shared_ptr<ShardCache> cache, std::string url, ObjectVersion version, std::unique_ptr<ByteSource> source,
                    std::string temporary)
      : cache_(std::move(cache)),
        url_(std::move(url)),
        version_(std::move(version)),
        source_(std::move(source)),
        temporary_(std::move(temporary)) {
    fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) Abandon("cannot create " + temporary_ + ": " + std::strerror(errno));
  }
  ~FillingByteSource() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (fd_ >= 0) {
        ::close(fd_);
        ::unlink(temporary_.c_str());
      }
    }
    cache_->FillEnded(url_);
  }

  uint64_t size() const override { return source_->size(); }
  size_t Read(uint64_t offset, char* out, size_t n) const override {
    const size_t got = source_->Read(offset, out, n);
    if (got > 0) Keep(offset, out, got);
    return got;
  }
  const std::string& name() const override { return source_->name(); }
  void AdviseSequential() const override { source_->AdviseSequential(); }
  size_t read_ahead_bytes() const override { return source_->read_ahead_bytes(); }
  // TakeHeldPiece stays false: every byte must pass through Read to be kept.

 private:
  // Writes [offset, offset + n) into the temporary file and notes it; stores the copy when
  // the noted ranges cover the object.
  void Keep(uint64_t offset, const char* bytes, size_t n) const {
    std::lock_guard<std::mutex> lock(mu_);
    if (fd_ < 0) return;
    for (size_t done = 0; done < n;) {
      const ssize_t w = ::pwrite(fd_, bytes + done, n - done, static_cast<off_t>(offset + done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return Abandon("cannot write " + temporary_ + ": " + std::strerror(errno));
      done += static_cast<size_t>(w);
    }
    // 1. Merge [offset, offset + n) into the ranges read (start -> end, disjoint).
    uint64_t start = offset, end = offset + n;
    auto it = read_.upper_bound(start);
    if (it != read_.begin() && std::prev(it)->second >= start) --it;
    while (it != read_.end() && it->first <= end) {
      start = std::min(start, it->first);
      end = std::max(end, it->second);
      it = read_.erase(it);
    }
    read_[start] = end;
    // 2. Every byte read: the temporary file is the copy.
    if (read_.size() == 1 && read_.begin()->first == 0 && read_.begin()->second >= source_->size()) {
      const int fd = std::exchange(fd_, -1);
      if (::close(fd) != 0) return (void)::unlink(temporary_.c_str());
      try {
        cache_->Store(url_, version_, temporary_);
      } catch (const Error& e) {
        ::unlink(temporary_.c_str());
        LogWarning("cache: " + url_ + " not kept: " + e.what());
      }
    }
  }

  // Stops keeping the bytes (the reads go on from the network), saying why once.
  void Abandon(const std::string& why) const {
    LogWarning("cache: " + url_ + " not kept: " + why);
    if (fd_ >= 0) {
      ::close(fd_);
      ::unlink(temporary_.c_str());
    }
    fd_ = -1;
  }

  const std::shared_ptr<ShardCache> cache_;
  const std::string url_;
  const ObjectVersion version_;
  const std::unique_ptr<ByteSource> source_;
  const std::string temporary_;
  mutable std::mutex mu_;
  mutable int fd_ = -1;                             // guarded by mu_; -1 once stored or abandoned
  mutable std::map<uint64_t, uint64_t> read_;       // guarded by mu_; ranges read, start -> end
};

namespace {

// A source that reads `inner` and calls itself `name` (a copy named by its URL).
class NamedByteSource : public ByteSource {
 public:
  NamedByteSource(std::unique_ptr<ByteSource> inner, std::string name)
      : inner_(std::move(inner)), name_(std::move(name)) {}
  uint64_t size() const override { return inner_->size(); }
  size_t Read(uint64_t offset, char* out, size_t n) const override { return inner_->Read(offset, out, n); }
  const std::string& name() const override { return name_; }
  void AdviseSequential() const override { inner_->AdviseSequential(); }

 private:
  const std::unique_ptr<ByteSource> inner_;
  const std::string name_;
};

// 90% of the space free on the file system of `dir`.
uint64_t FreeSpaceShare(const std::string& dir) {
  struct statvfs s {};
  if (::statvfs(dir.c_str(), &s) != 0) throw IoError(dir, "statvfs", errno);
  return static_cast<uint64_t>(static_cast<double>(s.f_bavail) * static_cast<double>(s.f_frsize) * 0.9);
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

ShardCache::ShardCache(std::string dir, uint64_t max_bytes) : dir_(std::move(dir)), max_bytes_(max_bytes) {
  MakeDirectories(dir_);
  if (max_bytes_ == 0) max_bytes_ = FreeSpaceShare(dir_);
}

std::string ShardCache::Stem(const std::string& url) const { return JoinPath(dir_, Sha256Hex(url)); }

std::unique_ptr<ByteSource> ShardCache::OpenCopy(const std::string& url, const std::function<ObjectVersion()>& head) {
  const std::string stem = Stem(url);
  // 1. A complete copy whose record names this URL.
  ObjectVersion kept;
  try {
    if (!PathExists(stem + ".data")) {
      ++misses_;
      return nullptr;
    }
    const nlohmann::json meta = nlohmann::json::parse(ReadFile(stem + ".json"));
    if (meta.at("url").get<std::string>() != url) throw DataError(stem + ".json", std::nullopt, "another URL");
    kept = {meta.at("size").get<uint64_t>(), meta.at("etag").get<std::string>()};
  } catch (const std::exception&) {  // a copy half removed by another process, or not ours
    ++misses_;
    return nullptr;
  }
  // 2. Checked against the object once per process.
  bool checked = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    checked = current_.count(url) > 0;
  }
  if (!checked) {
    const ObjectVersion now = head();
    if (now.size != kept.size || now.etag != kept.etag || kept.etag.empty()) {
      ::unlink((stem + ".data").c_str());
      ++refreshed_;
      ++misses_;
      return nullptr;
    }
    std::lock_guard<std::mutex> lock(mu_);
    current_.insert(url);
  }
  // 3. Opened, and marked as used now (the eviction order).
  std::unique_ptr<ByteSource> copy;
  try {
    copy = OpenLocalByteSource(stem + ".data");
  } catch (const IoError&) {  // evicted by another process since
    ++misses_;
    return nullptr;
  }
  if (copy->size() != kept.size) {
    ++misses_;
    return nullptr;
  }
  ::utimensat(AT_FDCWD, (stem + ".data").c_str(), nullptr, 0);
  ++hits_;
  return std::make_unique<NamedByteSource>(std::move(copy), url);
}

std::unique_ptr<ByteSource> ShardCache::Filling(const std::string& url, const ObjectVersion& version,
                                                std::unique_ptr<ByteSource> source) {
  if (version.etag.empty() || source->size() > max_bytes_) return source;  // no version to check, or too big
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!filling_.insert(url).second) return source;  // another source fills it
    current_.insert(url);                             // the copy it makes is of the version read now
  }
  const std::string temporary = Stem(url) + ".data." + std::to_string(::getpid()) + "." +
                                std::to_string(temporaries_++) + ".tmp";
  return std::make_unique<FillingByteSource>(shared_from_this(), url, version, std::move(source), temporary);
}

void ShardCache::FillEnded(const std::string& url) {
  std::lock_guard<std::mutex> lock(mu_);
  filling_.erase(url);
}

void ShardCache::Store(const std::string& url, const ObjectVersion& version, const std::string& temporary) {
  const std::string stem = Stem(url);
  const nlohmann::json meta = {{"url", url}, {"size", version.size}, {"etag", version.etag}};
  WriteFileAtomic(stem + ".json", meta.dump() + "\n", false);
  RenameFile(temporary, stem + ".data");
  ++stored_;
  Evict(stem + ".data");
}

void ShardCache::Evict(const std::string& keep) {
  struct Copy {
    std::string path;
    uint64_t bytes;
    timespec used;
  };
  std::vector<Copy> copies;
  uint64_t total = 0;
  for (const std::string& name : ListDirectory(dir_)) {
    if (!EndsWith(name, ".data")) continue;
    struct stat st {};
    const std::string path = JoinPath(dir_, name);
    if (::stat(path.c_str(), &st) != 0) continue;  // removed by another process meanwhile
    copies.push_back({path, static_cast<uint64_t>(st.st_size), st.st_mtim});
    total += static_cast<uint64_t>(st.st_size);
  }
  std::sort(copies.begin(), copies.end(), [](const Copy& a, const Copy& b) {
    return a.used.tv_sec != b.used.tv_sec ? a.used.tv_sec < b.used.tv_sec : a.used.tv_nsec < b.used.tv_nsec;
  });
  for (const Copy& c : copies) {
    if (total <= max_bytes_) break;
    if (c.path == keep) continue;
    if (::unlink(c.path.c_str()) == 0) {
      ::unlink((c.path.substr(0, c.path.size() - 5) + ".json").c_str());
      total -= c.bytes;
      ++evicted_;
    }
  }
}

ShardCacheCounters ShardCache::counters() const {
  return {hits_.load(), misses_.load(), stored_.load(), evicted_.load(), refreshed_.load()};
}

}  // namespace imgpipe
