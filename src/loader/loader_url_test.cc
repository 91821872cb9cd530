// The Loader over URLs: shards that imgpipe convert wrote, served by a real nginx
// (http://, listed by their dataset.json or named by a brace pattern) and a real S3
// server (s3:// and gs://), give the batches of the same shards on local disk, byte for
// byte; so they do through a proxy that drops connections, answers 503 SlowDown, cuts
// and stalls bodies (the retries counted); and a state saved mid-epoch over a URL
// resumes exactly.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "convert/converter.h"
#include "testing/fault_proxy.h"
#include "io/io_test_util.h"
#include "testing/nginx_test_server.h"
#include "testing/s3_test_server.h"
#include "io/storage.h"
#include "loader/loader.h"
#include "loader/loader_test_util.h"
#include "pipeline/pipeline.h"
#include "pipeline/source_datasets.h"
#include "util/file.h"

namespace imgpipe::loader {
namespace {

std::vector<std::string> Epoch(const std::string& data, int64_t epoch, const LoaderOptions& o = SmallOptions()) {
  Loader loader(data, o);
  loader.SetEpoch(epoch);
  std::vector<std::string> views;
  auto pass = loader.Iterate();
  while (std::optional<LoaderBatch> b = pass->Next()) views.push_back(View(*b));
  return views;
}

// The photos converted once into 4 shards (with index files, labels.txt, dataset.json),
// served by nginx and uploaded to s3rver, for every test here.
class LoaderUrlTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string root = ScratchDir("loader_url_root");
    shards_ = root + "/shards";
    ConvertOptions convert;
    convert.input = kPhotos;
    convert.output = shards_;
    convert.plan.min_shards = 4;
    convert.threads = 2;
    RunConvert(convert);
    nginx_ = new NginxTestServer(root, ScratchDir("loader_url_nginx"));
    s3_ = new S3TestServer({"data"}, ScratchDir("loader_url_s3rver"));
    setenv("IMGPIPE_HTTP_STALL_SECONDS", "1", 1);
    s3_->PointStorageHere();
    for (const std::string& name : ListDirectory(shards_)) {
      if (!IsDirectory(JoinPath(shards_, name))) {
        WriteStorageFile("s3://data/shards/" + name, ReadFile(JoinPath(shards_, name)));
      }
    }
    local_epoch1_ = new std::vector<std::string>(Epoch(shards_, 1));
  }
  static void TearDownTestSuite() {
    delete local_epoch1_;
    delete s3_;
    delete nginx_;
    ResetStorageClients();
  }
  static std::string shards_;
  static NginxTestServer* nginx_;
  static S3TestServer* s3_;
  static std::vector<std::string>* local_epoch1_;
};
std::string LoaderUrlTest::shards_;
NginxTestServer* LoaderUrlTest::nginx_ = nullptr;
S3TestServer* LoaderUrlTest::s3_ = nullptr;
std::vector<std::string>* LoaderUrlTest::local_epoch1_ = nullptr;

TEST_F(LoaderUrlTest, EveryUrlGivesTheLocalBatches) {
  ASSERT_EQ(local_epoch1_->size(), 153u / 16);
  // The memory estimate counts the pieces read ahead of the 4 shards read at once.
  EXPECT_EQ(Loader(shards_, SmallOptions()).memory().read_ahead_bytes, 0u);
  EXPECT_EQ(Loader(nginx_->Url("shards"), SmallOptions()).memory().read_ahead_bytes, 4 * 5 * (uint64_t{8} << 20));
  for (const std::string& data :
       {nginx_->Url("shards/"), nginx_->Url("shards"), nginx_->Url("shards/train-{00000..00003}-of-00004.tfrecord"),
        std::string("s3://data/shards/"), std::string("s3://data/shards"), std::string("gs://data/shards"),
        std::string("s3://data/shards/train-*-of-00004.tfrecord")}) {
    SCOPED_TRACE(data);
    Loader loader(data, SmallOptions());
    EXPECT_EQ(loader.data().samples, 153);
    EXPECT_EQ(loader.data().source.class_names, (std::vector<std::string>{"ants", "bees"}));
    EXPECT_EQ(Epoch(data, 1), *local_epoch1_);
  }
}

// Faults between the loader and nginx: each is ridden over (retried, resumed), the epoch
// is the local one, and the counters say what happened.
TEST_F(LoaderUrlTest, FaultsAreRetriedAndTheEpochIsTheLocalOne) {
  FaultProxy proxy("127.0.0.1:" + std::to_string(nginx_->port()));
  using Kind = FaultProxy::Fault::Kind;
  const std::string shard = "train-00002-of-00004.tfrecord";
  proxy.AddFault({Kind::kDropConnection, "dataset.json", "GET"});
  proxy.AddFault({Kind::kServiceUnavailable, shard, "GET", 0, 0, 1});
  proxy.AddFault({Kind::kTruncateBody, shard, "GET", 100000});
  proxy.AddFault({Kind::kStallBody, "train-00003", "GET", 50000, 3000});
  const uint64_t retries_before = StorageRetries();
  EXPECT_EQ(Epoch(proxy.Url("shards/"), 1), *local_epoch1_);
  EXPECT_EQ(proxy.faults_applied(), 4u);
  EXPECT_EQ(proxy.pending_faults(), 0u);
  // A drop on a reused connection is resent by libcurl itself, uncounted; the 503, the
  // stall and the resumed body always count.
  EXPECT_GE(StorageRetries() - retries_before, 3u);
}

// Requests the storage clients made while `run` ran.
template <typename F>
uint64_t RequestsDuring(F run) {
  const uint64_t before = StorageTraffic().requests;
  run();
  return StorageTraffic().requests - before;
}

// Record-level sharding over a URL (more ranks than shards): each rank gets the local
// batches, its stretch of records fetched in ranged reads cut at record boundaries along
// the .idx files (a HEAD and one GET of up to 8 MiB per file here), not one request per
// record or per 1 MiB.
TEST_F(LoaderUrlTest, RecordShardsOverAUrlAreReadInRangesAlongTheIndex) {
  LoaderOptions o = SmallOptions();
  o.world_size = 8;  // 4 shards: record-level (DATA) sharding
  for (const int rank : {0, 5}) {
    SCOPED_TRACE(rank);
    o.rank = rank;
    const std::vector<std::string> local = Epoch(shards_, 1, o);
    ASSERT_FALSE(local.empty());
    Loader loader(nginx_->Url("shards"), o);
    loader.SetEpoch(1);
    std::vector<std::string> views;
    const uint64_t requests = RequestsDuring([&] {
      auto pass = loader.Iterate();
      while (std::optional<LoaderBatch> b = pass->Next()) views.push_back(View(*b));
    });
    EXPECT_EQ(views, local);
    EXPECT_LE(requests, 4u);  // a rank's 1/8 of 4 shards spans at most 2 of them
  }
}

// A state saved in the middle of an epoch over a URL resumes, in a loader that never ran,
// to the rest of the local epoch.
TEST_F(LoaderUrlTest, StateSavedMidEpochOverAUrlResumesExactly) {
  for (const std::string& data : {std::string("s3://data/shards"), nginx_->Url("shards")}) {
    SCOPED_TRACE(data);
    Loader loader(data, SmallOptions());
    loader.SetEpoch(1);
    std::vector<std::string> seen;
    auto pass = loader.Iterate();
    for (int i = 0; i < 4; ++i) seen.push_back(View(*pass->Next()));
    const LoaderState state = DeserializeLoaderState(SerializeLoaderState(loader.State()));
    loader.Close();
    Loader resumed(data, SmallOptions());
    resumed.LoadState(state);
    auto rest = resumed.Iterate();
    while (std::optional<LoaderBatch> b = rest->Next()) seen.push_back(View(*b));
    EXPECT_EQ(seen, *local_epoch1_);
  }
}

// A shuffle buffer of records (saved by reference) restored over a URL reads them again
// in a few ranged reads, neighbours in one, not a round trip per record.
TEST_F(LoaderUrlTest, ShuffleBufferRestoredOverAUrlIsReadInRanges) {
  pipeline::Pipeline<pipeline::Record> records =
      pipeline::Pipeline<pipeline::Record>(
          pipeline::TfRecordFiles(pipeline::ListFiles({nginx_->Url("shards/*.tfrecord")})))
          .Shuffle(100);
  auto pass = records.MakeIterator();
  for (int i = 0; i < 30; ++i) ASSERT_TRUE(pass.Next());
  const pipeline::IteratorState state = pass.Save();
  std::vector<std::string> expected;
  while (std::optional<pipeline::Record> r = pass.Next()) expected.push_back(r->data);
  auto resumed = records.MakeIterator();
  const uint64_t requests = RequestsDuring([&] { resumed.Restore(state); });
  std::vector<std::string> rest;
  while (std::optional<pipeline::Record> r = resumed.Next()) rest.push_back(r->data);
  EXPECT_EQ(rest, expected);
  // The 100 buffered records lie in all 4 shards (of about 12 MB): a HEAD and one or two
  // ranged GETs of up to 8 MiB each; the shard being read reopens at its offset (a HEAD
  // and its compression check). A request per record would be 100 or more.
  EXPECT_LE(requests, 14u);
}

// A pipeline over URLs has one read-ahead knob for all its files (the autotuner's): it
// counts the pieces of the file being read, none once the pass is over, and stays at 2
// pieces in flight when the RAM budget holds no more (it grows to 4 when it does:
// stats_test's Autotuner.SharedKnobIsOneAndGrowsWithinTheRamBudget).
TEST_F(LoaderUrlTest, ReadAheadIsOneAutotunedKnobWithinTheRamBudget) {
  using pipeline::KnobSnapshot;
  pipeline::Pipeline<pipeline::Record> records(
      pipeline::TfRecordFiles(pipeline::ListFiles({nginx_->Url("shards/*.tfrecord")})));
  pipeline::PipelineOptions options;
  options.ram_budget_bytes = uint64_t{20} << 20;  // 2 pieces of 8 MiB, not 4
  auto pass = records.MakeIterator(options);
  auto read_ahead = [&] {
    std::vector<KnobSnapshot> found;
    for (const KnobSnapshot& knob : pass.Knobs()) {
      if (knob.name == "read_ahead") found.push_back(knob);
    }
    return found;
  };
  size_t n = 0;
  while (pass.Next()) {
    if (++n % 20 == 0) {
      const std::vector<KnobSnapshot> knobs = read_ahead();
      ASSERT_EQ(knobs.size(), 1u);
      EXPECT_EQ(knobs[0].value, 2);
      EXPECT_EQ(knobs[0].bytes, 2 * (uint64_t{8} << 20));  // one file read at a time
    }
  }
  EXPECT_EQ(n, 153u);
  ASSERT_EQ(read_ahead().size(), 1u);
  EXPECT_EQ(read_ahead()[0].bytes, 0u);
}

// What is wrong with a URL is said, naming it.
TEST_F(LoaderUrlTest, MissingDataIsAnErrorNamingTheUrl) {
  for (const std::string& data : {nginx_->Url("nothing/"), std::string("s3://data/nothing/x.tfrecord"),
                                  std::string("s3://no-bucket/shards")}) {
    SCOPED_TRACE(data);
    try {
      Loader loader(data, SmallOptions());
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(data.substr(0, 20)), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace imgpipe::loader
