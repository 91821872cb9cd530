// A local-disk cache of objects read over the network (issue 21): a URL read front to back
// once is kept as a file in the cache folder, and later opens read that file instead. The
// folder holds at most max_bytes; adding a copy removes the least recently used ones.
//
// A copy is used only while it is the object's current version: the first open of a URL in
// a process compares the copy's size and ETag with a HEAD's (a changed object is fetched
// again); later opens in the process trust that answer, so epochs after the first make no
// request. Every record's CRC is still checked when the copy is read.
//
// Layout of the folder: for each URL, SHA256(url).data (the object's bytes, present only
// when complete) and SHA256(url).json ({"url", "size", "etag"}); copies being written are
// SHA256(url).data.PID.N.tmp, removed when the reader stops before the end. Several
// processes may share a folder (each writes its own temporary files and renames them).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "io/byte_source.h"

namespace imgpipe {

// What a cache has done so far.
struct ShardCacheCounters {
  uint64_t hits = 0;       // opens read from a copy
  uint64_t misses = 0;     // opens read from the network
  uint64_t stored = 0;     // copies completed
  uint64_t evicted = 0;    // copies removed to stay under max_bytes
  uint64_t refreshed = 0;  // copies dropped because the object changed
};

// The size and ETag of an object, from a HEAD.
struct ObjectVersion {
  uint64_t size = 0;
  std::string etag;
};

class ShardCache : public std::enable_shared_from_this<ShardCache> {
 public:
  // A cache in `dir` (made if missing) of at most `max_bytes` (0: 90% of the space free
  // on its file system now). Throws IoError when the folder cannot be made. Make it with
  // std::make_shared: the sources Filling returns share it.
  ShardCache(std::string dir, uint64_t max_bytes);

  // The copy of `url` as a source named `url`, when there is one of its current version
  // (`head` gives it, called on the first open of `url` in this process); null otherwise.
  // Throws what `head` throws.
  std::unique_ptr<ByteSource> OpenCopy(const std::string& url, const std::function<ObjectVersion()>& head);
  // `source` (of `url`, at `version`) wrapped so that once every byte has been read
  // through it, in any order, the bytes are kept as the copy of `url`. Returned as it is
  // when larger than max_bytes, without an ETag, or while another source fills that copy.
  std::unique_ptr<ByteSource> Filling(const std::string& url, const ObjectVersion& version,
                                      std::unique_ptr<ByteSource> source);

  const std::string& dir() const { return dir_; }
  uint64_t max_bytes() const { return max_bytes_; }
  ShardCacheCounters counters() const;

 private:
  friend class FillingByteSource;
  // Moves the complete `temporary` file into place as the copy of `url` at `version`,
  // then evicts the least recently used copies until the folder holds max_bytes or less.
  void Store(const std::string& url, const ObjectVersion& version, const std::string& temporary);
  // Removes copies, oldest use first, until those present total max_bytes or less;
  // `keep` is never removed.
  void Evict(const std::string& keep);
  // A source filling the copy of `url` is gone (stored or not).
  void FillEnded(const std::string& url);
  // "DIR/SHA256(url)".
  std::string Stem(const std::string& url) const;

  const std::string dir_;
  uint64_t max_bytes_;
  std::mutex mu_;
  std::set<std::string> current_;  // guarded by mu_; URLs whose copy this process checked
  std::set<std::string> filling_;  // guarded by mu_; URLs whose copy a source is filling
  std::atomic<uint64_t> hits_{0}, misses_{0}, stored_{0}, evicted_{0}, refreshed_{0};
  std::atomic<uint64_t> temporaries_{0};
};

}  // namespace imgpipe
