// The local cache of fetched objects (shard_cache.h) through the storage functions, over a
// real nginx: a URL read front to back once is read from its copy after, with no request
// in the same process and one HEAD in the next; a changed object is fetched again; a
// partial read keeps nothing; the least recently used copy goes first.
#include "io/shard_cache.h"

#include <gtest/gtest.h>
#include <sys/time.h>

#include <chrono>
#include <string>
#include <thread>

#include "io/io_test_util.h"
#include "testing/nginx_test_server.h"
#include "io/storage.h"
#include "util/file.h"

namespace imgpipe {
namespace {

constexpr size_t kObjectBytes = 300000;

class ShardCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = ScratchDir("cache_root");
    for (int i = 0; i < 3; ++i) WriteFileAtomic(root_ + "/" + Name(i), Pattern(kObjectBytes, i), false);
    server_ = std::make_unique<NginxTestServer>(root_, ScratchDir("cache_server"));
    cache_dir_ = ScratchDir(std::string("cache_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ResetStorageClients();
  }
  void TearDown() override {
    ConfigureStorageCache("");
    ResetStorageClients();
  }

  static std::string Name(int i) { return "shard-" + std::to_string(i) + ".tfrecord"; }
  std::string Url(int i) const { return server_->Url(Name(i)); }
  // The whole object, read front to back as the pipeline reads it.
  static std::string ReadAll(const std::string& url) {
    const std::unique_ptr<SequentialFile> file = OpenSequentialStorage(url);
    std::string out, buffer(65536, '\0');
    while (size_t n = file->Read(buffer.data(), buffer.size())) out.append(buffer.data(), n);
    return out;
  }
  // The cache folder's files ending in `suffix`.
  size_t FilesEndingIn(const std::string& suffix) const {
    size_t n = 0;
    for (const std::string& name : ListDirectory(cache_dir_)) {
      n += name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
    }
    return n;
  }

  std::string root_, cache_dir_;
  std::unique_ptr<NginxTestServer> server_;
};

TEST_F(ShardCacheTest, ReadOnceThenFromTheCopyWithoutARequest) {
  ConfigureStorageCache(cache_dir_, 0);
  EXPECT_EQ(ReadAll(Url(0)), Pattern(kObjectBytes, 0));
  EXPECT_EQ(StorageCacheCounters().stored, 1u);
  EXPECT_EQ(StorageCacheCounters().misses, 1u);
  EXPECT_EQ(FilesEndingIn(".data"), 1u);
  EXPECT_EQ(FilesEndingIn(".tmp"), 0u);
  const size_t served = server_->Served(1);
  EXPECT_EQ(ReadAll(Url(0)), Pattern(kObjectBytes, 0));
  EXPECT_EQ(StorageCacheCounters().hits, 1u);
  EXPECT_EQ(server_->Served(served), served) << server_->AccessLog();
  // The next process (a new cache object on the same folder) checks it once, by a HEAD.
  ConfigureStorageCache("");
  ConfigureStorageCache(cache_dir_, 0);
  EXPECT_EQ(ReadAll(Url(0)), Pattern(kObjectBytes, 0));
  EXPECT_EQ(ReadAll(Url(0)), Pattern(kObjectBytes, 0));
  EXPECT_EQ(StorageCacheCounters().hits, 2u);
  EXPECT_EQ(server_->Served(served + 1), served + 1);
  EXPECT_NE(server_->AccessLog().rfind("HEAD"), std::string::npos);
}

TEST_F(ShardCacheTest, ChangedObjectIsFetchedAgain) {
  ConfigureStorageCache(cache_dir_, 0);
  EXPECT_EQ(ReadAll(Url(1)), Pattern(kObjectBytes, 1));
  WriteFileAtomic(root_ + "/" + Name(1), Pattern(kObjectBytes, 7), false);
  const std::string path = root_ + "/" + Name(1);
  timeval later[2] = {{time(nullptr) + 60, 0}, {time(nullptr) + 60, 0}};
  ASSERT_EQ(utimes(path.c_str(), later), 0);  // a new ETag even within the same second
  ConfigureStorageCache("");
  ConfigureStorageCache(cache_dir_, 0);  // a new process
  EXPECT_EQ(ReadAll(Url(1)), Pattern(kObjectBytes, 7));
  EXPECT_EQ(StorageCacheCounters().refreshed, 1u);
  EXPECT_EQ(StorageCacheCounters().stored, 1u);  // the new version kept
  EXPECT_EQ(ReadAll(Url(1)), Pattern(kObjectBytes, 7));
  EXPECT_EQ(StorageCacheCounters().hits, 1u);
}

// 40 MiB read 1 MiB in: the read-ahead fetched 3 pieces of 8 MiB, not the last two.
TEST_F(ShardCacheTest, PartialReadKeepsNothing) {
  const std::string bytes = Pattern(40 << 20, 3);
  WriteFileAtomic(root_ + "/large.tfrecord", bytes, false);
  ConfigureStorageCache(cache_dir_, 0);
  {
    const std::unique_ptr<SequentialFile> file = OpenSequentialStorage(server_->Url("large.tfrecord"));
    std::string head(1 << 20, '\0');
    ASSERT_EQ(file->Read(head.data(), head.size()), head.size());
    EXPECT_EQ(head, bytes.substr(0, head.size()));
  }
  EXPECT_EQ(StorageCacheCounters().stored, 0u);
  EXPECT_EQ(FilesEndingIn(".data"), 0u);
  EXPECT_EQ(FilesEndingIn(".tmp"), 0u);
}

TEST_F(ShardCacheTest, LeastRecentlyUsedCopyIsEvicted) {
  ConfigureStorageCache(cache_dir_, 2 * kObjectBytes + 1000);  // room for two
  EXPECT_EQ(ReadAll(Url(0)), Pattern(kObjectBytes, 0));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(ReadAll(Url(1)), Pattern(kObjectBytes, 1));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(ReadAll(Url(0)), Pattern(kObjectBytes, 0));  // used again: 1 is now the oldest
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(ReadAll(Url(2)), Pattern(kObjectBytes, 2));
  const ShardCacheCounters c = StorageCacheCounters();
  EXPECT_EQ(c.stored, 3u);
  EXPECT_EQ(c.evicted, 1u);
  EXPECT_EQ(c.hits, 1u);
  EXPECT_EQ(FilesEndingIn(".data"), 2u);
  EXPECT_EQ(ReadAll(Url(0)), Pattern(kObjectBytes, 0));
  EXPECT_EQ(StorageCacheCounters().hits, 2u);
  EXPECT_EQ(ReadAll(Url(1)), Pattern(kObjectBytes, 1));  // the one evicted: from the network
  EXPECT_EQ(StorageCacheCounters().hits, 2u);
  // A folder too small for an object keeps none of it.
  ConfigureStorageCache(ScratchDir("cache_small"), kObjectBytes / 2);
  EXPECT_EQ(ReadAll(Url(2)), Pattern(kObjectBytes, 2));
  EXPECT_EQ(StorageCacheCounters().stored, 0u);
}

}  // namespace
}  // namespace imgpipe
