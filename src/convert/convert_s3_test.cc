// imgpipe convert with an s3:// or gs:// output (and a manifest at a URL), over a real S3
// server: s3rver, started once for the suite, that the process's storage clients reach
// through AWS_* and GCS_* variables. Every conversion is compared, byte for byte, with
// the same conversion into a local folder.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "convert/convert_output.h"
#include "convert/convert_test_util.h"
#include "convert/converter.h"
#include "io/http_client.h"
#include "io/io_test_util.h"
#include "testing/s3_test_server.h"
#include "io/storage.h"
#include "record/index.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe {
namespace {

const std::string kPhotos = std::string(IMGPIPE_TESTDATA_DIR) + "/images/photos-by-class";

// The names of the regular files directly in `dir` (a folder or a URL).
std::vector<std::string> FileNames(const std::string& dir) {
  std::vector<std::string> names;
  for (const StorageEntry& e : ListStorageFolderSizes(dir)) names.push_back(e.name);
  return names;
}

// Every file of `expected` and of its .imgpipe folder is at `actual` (a folder or URL)
// with the same bytes, and nothing else is.
void ExpectSameFiles(const std::string& expected, const std::string& actual) {
  for (const std::string& dir : {std::string(""), std::string(".imgpipe")}) {
    const std::string want_dir = dir.empty() ? expected : JoinPath(expected, dir);
    const std::string got_dir = dir.empty() ? actual : JoinPath(actual, dir);
    const std::vector<std::string> names = FileNames(want_dir);
    ASSERT_EQ(FileNames(got_dir), names) << got_dir;
    for (const std::string& name : names) {
      EXPECT_TRUE(ReadStorageFile(JoinPath(got_dir, name)) == ReadFile(JoinPath(want_dir, name)))
          << JoinPath(got_dir, name);
    }
  }
}

// Each shard object at `url` has its index and part objects; returns how many shards.
size_t CountCompleteShards(const std::string& url) {
  const std::vector<std::string> names = FileNames(url);
  const std::vector<std::string> parts = FileNames(JoinPath(url, ".imgpipe"));
  size_t shards = 0;
  for (const std::string& name : names) {
    if (!name.ends_with(".tfrecord")) continue;
    ++shards;
    EXPECT_TRUE(std::count(names.begin(), names.end(), IndexPathFor(name))) << name << " without index";
    EXPECT_TRUE(std::count(parts.begin(), parts.end(), name + ".json")) << name << " without part";
  }
  return shards;
}

// The shards, indexes and part files staged in `staging` (none once uploaded).
std::vector<std::string> StagedShardFiles(const std::string& staging) {
  std::vector<std::string> staged;
  for (const std::string& dir : {staging, JoinPath(staging, ".imgpipe")}) {
    for (const std::string& name : FileNames(dir)) {
      if (name != "plan.json") staged.push_back(name);
    }
  }
  return staged;
}

class ConvertS3Test : public ::testing::Test {
 protected:
  // One s3rver (Node.js takes a second to start), the environment pointing both schemes'
  // clients at it, and the local conversion every test compares with.
  static void SetUpTestSuite() {
    scratch_ = new std::string(ScratchDir("convert_s3"));
    server_ = new S3TestServer({"bucket"}, JoinPath(*scratch_, "s3rver"));
    server_->PointStorageHere();
    reference_ = new ConvertSummary(RunConvert(Options(Local("reference"))));
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    ResetStorageClients();
  }

  // The conversion every test makes: the 47 photos, 4 shards, JPEGs as given (quick).
  static ConvertOptions Options(const std::string& output) {
    ConvertOptions o;
    o.input = kPhotos;
    o.output = output;
    o.plan.min_shards = 4;
    o.threads = 2;
    o.image.jpeg_restart_interval = 0;
    return o;
  }
  static std::string Local(const std::string& name) { return JoinPath(*scratch_, name); }
  static std::string Reference() { return Local("reference"); }
  // Options for a URL output staged in a folder of the test's.
  static ConvertOptions UrlOptions(const std::string& url, const std::string& staging) {
    ConvertOptions o = Options(url);
    o.staging_dir = Local(staging);
    return o;
  }
  // Each file under s3rver's data folder with its modification time: what PUTs change.
  static std::map<std::string, std::filesystem::file_time_type> ServerFiles() {
    std::map<std::string, std::filesystem::file_time_type> files;
    for (const auto& e : std::filesystem::recursive_directory_iterator(Local("s3rver/data"))) {
      if (e.is_regular_file()) files[e.path().string()] = e.last_write_time();
    }
    return files;
  }

  static std::string* scratch_;
  static S3TestServer* server_;
  static ConvertSummary* reference_;
};
std::string* ConvertS3Test::scratch_ = nullptr;
S3TestServer* ConvertS3Test::server_ = nullptr;
ConvertSummary* ConvertS3Test::reference_ = nullptr;

// To s3:// and gs://: each shard uploaded as it finishes, the staging folder emptied, and
// the objects (shards, indexes, labels.txt, dataset.json, rejects.csv, plan and part
// files) the local conversion's files byte for byte.
TEST_F(ConvertS3Test, ObjectsAreTheFilesOfALocalConversion) {
  ASSERT_TRUE(reference_->complete);
  ASSERT_EQ(reference_->shards.size(), 4u);
  for (const std::string url : {"s3://bucket/out", "gs://bucket/out-gs"}) {
    SCOPED_TRACE(url);
    const ConvertOptions options = UrlOptions(url, "staging" + url.substr(0, 2));
    const ConvertSummary summary = RunConvert(options);
    EXPECT_TRUE(summary.complete);
    EXPECT_EQ(summary.shards_this_run, 4u);
    EXPECT_EQ(summary.shards_uploaded, 4u);
    EXPECT_EQ(summary.written, reference_->written);
    ExpectSameFiles(Reference(), url);
    EXPECT_EQ(StagedShardFiles(options.staging_dir), std::vector<std::string>{});
  }
}

// A second run with --resume keeps every object: no PUT reaches the server (its files
// keep their modification times), and the summary counts 4 shards kept, none uploaded.
TEST_F(ConvertS3Test, ResumeOfAFinishedConversionUploadsNothing) {
  ConvertOptions options = UrlOptions("s3://bucket/resumed", "staging-resumed");
  ASSERT_TRUE(RunConvert(options).complete);
  const auto before = ServerFiles();
  ASSERT_GT(before.size(), 12u);  // the shards, indexes, parts, summaries and plan
  options.resume = true;
  const ConvertSummary again = RunConvert(options);
  EXPECT_TRUE(again.complete);
  EXPECT_EQ(again.shards_resumed, 4u);
  EXPECT_EQ(again.shards_this_run, 0u);
  EXPECT_EQ(again.shards_uploaded, 0u);
  EXPECT_EQ(again.written, reference_->written);
  EXPECT_TRUE(ServerFiles() == before) << "a resumed run wrote objects";
  ExpectSameFiles(Reference(), options.output);

  // A shard whose part object is gone is redone and uploaded again, identically.
  DeleteStorageFile(JoinPath(options.output, ".imgpipe/" + reference_->shards[2].file_name + ".json"));
  const ConvertSummary redo = RunConvert(options);
  EXPECT_EQ(redo.shards_this_run, 1u);
  EXPECT_EQ(redo.shards_uploaded, 1u);
  ExpectSameFiles(Reference(), options.output);

  options.plan.seed = 99;  // another plan: refused, naming what differs
  try {
    RunConvert(options);
    ADD_FAILURE() << "another plan was not refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("seed (0 there, 99 now)"), std::string::npos) << e.what();
  }
}

// Two workers (staged on "two machines") and the finalize step, which reads every shard
// object to check its CRC-32C: the same objects as one local process.
TEST_F(ConvertS3Test, WorkersAndTheFinalizeStepMakeTheSameObjects) {
  ConvertOptions options = UrlOptions("s3://bucket/workers", "staging-worker1");
  options.num_workers = 2;
  options.worker = 1;
  EXPECT_EQ(RunConvert(options).shards_uploaded, 2u);
  options.worker = 0;
  options.staging_dir = Local("staging-worker0");
  const ConvertSummary rest = RunConvert(options);
  EXPECT_FALSE(rest.complete);
  EXPECT_EQ(rest.shards_done, 4u);
  for (const char* name : {"dataset.json", "rejects.csv", "labels.txt"}) {
    EXPECT_FALSE(StorageExists(JoinPath(options.output, name))) << name << " written by a worker";
  }
  options.finalize = true;
  const ConvertSummary finalized = RunConvert(options);
  EXPECT_TRUE(finalized.complete);
  EXPECT_EQ(finalized.shards_done, 4u);
  ExpectSameFiles(Reference(), options.output);

  // A shard object changed after it was written (same size) fails the finalize step.
  const std::string shard = JoinPath(options.output, reference_->shards[1].file_name);
  std::string bytes = ReadStorageFile(shard);
  bytes[bytes.size() / 2] ^= 1;
  WriteStorageFile(shard, bytes);
  try {
    RunConvert(options);
    ADD_FAILURE() << "the finalize step passed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("changed since it was written"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("rerun worker 1"), std::string::npos) << e.what();
  }
}

// The staging disk fills while the third shard is written: an IoError (ENOSPC) naming
// the staged file; the two shards before it are complete objects, no shard object lacks
// its index or part, nothing else is there; --resume finishes it to the same objects.
TEST_F(ConvertS3Test, AFullStagingDiskStopsCleanlyAndResumes) {
  ConvertOptions options = UrlOptions("s3://bucket/disk-full", "staging-disk-full");
  options.shard_opener = &OpenDiskFullFile;
  disk_bytes_left = static_cast<int64_t>(reference_->shards[0].bytes + reference_->shards[1].bytes +
                                         reference_->shards[2].bytes / 2);
  try {
    RunConvert(options);
    FAIL() << "no error on a full disk";
  } catch (const IoError& e) {
    EXPECT_EQ(e.error_number(), ENOSPC);
    const std::string staged = JoinPath(options.staging_dir, reference_->shards[2].file_name);
    EXPECT_EQ(std::string(e.what()).rfind(staged + ".", 0), 0u) << e.what();
  }
  EXPECT_EQ(CountCompleteShards(options.output), 2u);
  EXPECT_FALSE(StorageExists(JoinPath(options.output, "dataset.json")));
  EXPECT_EQ(StagedShardFiles(options.staging_dir), std::vector<std::string>{});

  options.shard_opener = nullptr;
  options.resume = true;
  const ConvertSummary resumed = RunConvert(options);
  EXPECT_TRUE(resumed.complete);
  EXPECT_EQ(resumed.shards_resumed, 2u);
  EXPECT_EQ(resumed.shards_this_run, 2u);
  ExpectSameFiles(Reference(), options.output);
}

// An upload that fails for good: that of the second shard's .tfrecord (after its index
// and part file).
std::string failing_upload;
void FailingUpload(const std::string& local, const std::string& url) {
  if (url.ends_with("/" + failing_upload)) throw HttpError(url, 503, "injected: SlowDown");
  UploadStorageFile(local, url);
}

// The second shard's upload fails while the third is converted: the error surfaces when
// the third is done. No shard object is there without its index and part; the second
// and third shards wait, finished, in the staging folder, and --resume uploads them
// without converting them again, then converts the fourth.
TEST_F(ConvertS3Test, AFailedUploadResumesFromTheStagingFolder) {
  ConvertOptions options = UrlOptions("s3://bucket/upload-fails", "staging-upload-fails");
  options.uploader = &FailingUpload;
  failing_upload = reference_->shards[1].file_name;
  try {
    RunConvert(options);
    FAIL() << "no error from the failed upload";
  } catch (const HttpError& e) {
    EXPECT_EQ(e.status(), 503);
  }
  EXPECT_EQ(CountCompleteShards(options.output), 1u);
  EXPECT_EQ(StagedShardFiles(options.staging_dir).size(), 6u);  // 2 shards, indexes, parts

  options.uploader = nullptr;
  options.resume = true;
  const ConvertSummary resumed = RunConvert(options);
  EXPECT_TRUE(resumed.complete);
  EXPECT_EQ(resumed.shards_resumed, 3u);   // one object, two staged
  EXPECT_EQ(resumed.shards_this_run, 1u);  // the fourth
  EXPECT_EQ(resumed.shards_uploaded, 3u);
  ExpectSameFiles(Reference(), options.output);
  EXPECT_EQ(StagedShardFiles(options.staging_dir), std::vector<std::string>{});
}

// Without --staging-dir a URL output is staged under $TMPDIR, in a folder named from the
// URL (a trailing '/' or not), which a resumed run finds again.
TEST_F(ConvertS3Test, TheDefaultStagingFolderIsNamedFromTheUrl) {
  const std::string tmp = Local("tmp");
  MakeDirectories(tmp);
  const char* old_tmp = std::getenv("TMPDIR");
  const std::string saved = old_tmp != nullptr ? old_tmp : "";
  setenv("TMPDIR", tmp.c_str(), 1);
  const std::string staging = DefaultStagingFolder("s3://bucket/default");
  EXPECT_EQ(staging.rfind(tmp + "/imgpipe-staging/s3___bucket_default-", 0), 0u) << staging;
  EXPECT_EQ(DefaultStagingFolder("s3://bucket/default/"), staging);
  EXPECT_NE(DefaultStagingFolder("gs://bucket/default"), staging);
  ConvertOptions options = Options("s3://bucket/default");
  EXPECT_EQ(WorkFolder(options), staging);
  EXPECT_TRUE(RunConvert(options).complete);
  EXPECT_TRUE(PathExists(JoinPath(staging, ".imgpipe/plan.json")));
  EXPECT_EQ(StagedShardFiles(staging), std::vector<std::string>{});
  ExpectSameFiles(Reference(), options.output);
  if (old_tmp != nullptr) {
    setenv("TMPDIR", saved.c_str(), 1);
  } else {
    unsetenv("TMPDIR");
  }
}

// A CSV manifest at a URL, its relative paths objects beside it: the same shards as the
// same manifest and photos in a local folder.
TEST_F(ConvertS3Test, AManifestAtAUrlReadsTheObjectsBesideIt) {
  const std::string local_in = Local("manifest-in");
  MakeDirectories(JoinPath(local_in, "img"));
  std::string manifest = "path,label\n";
  int n = 0;
  for (const std::string& cls : ListDirectory(kPhotos)) {
    if (!IsDirectory(JoinPath(kPhotos, cls)) || n == 6) continue;
    const std::string file = ListDirectory(JoinPath(kPhotos, cls)).front();
    const std::string bytes = ReadFile(JoinPath(JoinPath(kPhotos, cls), file));
    const std::string name = "img/" + cls + "-" + file;
    WriteStorageFile(JoinPath(local_in, name), bytes);
    WriteStorageFile("s3://bucket/in/" + name, bytes);
    manifest += name + "," + cls + "\n";
    ++n;
  }
  WriteStorageFile(JoinPath(local_in, "manifest.csv"), manifest);
  WriteStorageFile("s3://bucket/in/manifest.csv", manifest);

  ConvertOptions options = Options(Local("manifest-local"));
  options.input = JoinPath(local_in, "manifest.csv");
  options.plan.min_shards = 2;
  const ConvertSummary local = RunConvert(options);
  ASSERT_EQ(local.written, 6u);
  options.input = "s3://bucket/in/manifest.csv";
  options.output = Local("manifest-url");
  const ConvertSummary remote = RunConvert(options);
  EXPECT_EQ(remote.written, 6u);
  for (const ShardSummary& s : local.shards) {
    EXPECT_TRUE(ReadFile(JoinPath(options.output, s.file_name)) ==
                ReadFile(JoinPath(Local("manifest-local"), s.file_name)))
        << s.file_name;
  }
}

// Outputs that cannot be written, and --staging-dir with a folder output, are refused.
TEST_F(ConvertS3Test, BadOutputsAreRefused) {
  ConvertOptions options = Options("https://example.com/out");
  EXPECT_THROW(RunConvert(options), Error);
  options = Options(Local("folder-with-staging"));
  options.staging_dir = Local("unused-staging");
  EXPECT_THROW(RunConvert(options), Error);
  EXPECT_FALSE(PathExists(options.output));
}

// The storage functions the converter uploads with: a file above the multipart threshold
// (64 MiB) uploaded from its mapping, listed with its size, read back, deleted.
TEST_F(ConvertS3Test, UploadListAndDeleteAFileAboveTheMultipartThreshold) {
  const std::string local = Local("big.bin");
  {
    std::string bytes((64u << 20) + 4097, '\0');
    for (size_t i = 0; i < bytes.size(); i += 4096) bytes[i] = static_cast<char>(i >> 12);
    WriteFileAtomic(local, bytes, false);
  }
  const std::string url = "s3://bucket/big/file.bin";
  UploadStorageFile(local, url);
  const std::vector<StorageEntry> listed = ListStorageFolderSizes("s3://bucket/big");
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].name, "file.bin");
  EXPECT_EQ(listed[0].size, FileSize(local));
  const std::string back = ReadStorageFile(url);
  EXPECT_TRUE(back == ReadFile(local));
  DeleteStorageFile(url);
  EXPECT_FALSE(StorageExists(url));
  DeleteStorageFile(url);  // none there: no error
  MakeDirectories(Local("copied"));
  UploadStorageFile(Local("reference/labels.txt"), Local("copied/labels.txt"));
  EXPECT_EQ(ReadFile(Local("copied/labels.txt")), ReadFile(Local("reference/labels.txt")));
  EXPECT_TRUE(ListStorageFolderSizes(Local("no-such-folder")).empty());
}

}  // namespace
}  // namespace imgpipe
