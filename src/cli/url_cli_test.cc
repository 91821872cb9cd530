// imgpipe's commands on data at a URL (issue 21), as real processes against a real nginx
// (http://) and a real S3 server (s3://), started and stopped here: inspect describes the
// shards as it does on local disk; doctor measures the store's latency and throughput and
// judges them against a rate; bench reports the requests, connections and bytes it used.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/cli_test_util.h"
#include "testing/fault_proxy.h"
#include "testing/nginx_test_server.h"
#include "testing/s3_test_server.h"
#include "io/storage.h"

namespace imgpipe {
namespace {

// hymenoptera's validation images converted into 2 shards (index files, labels.txt,
// dataset.json), served by nginx and uploaded to s3rver, for every test here.
class UrlCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string root = FreshDir("url_root");
    shards_ = root + "/shards";
    const Result convert = RunImgpipe({"convert", "--input", kTestData + "/images/hymenoptera/val", "--output",
                                       shards_, "--min-shards", "2", "--threads", "2"});
    ASSERT_EQ(convert.status, 0) << convert.err;
    nginx_ = new NginxTestServer(root, FreshDir("url_nginx"));
    s3_ = new S3TestServer({"data"}, FreshDir("url_s3rver"));
    s3_->PointStorageHere();  // for this process and the commands it starts
    for (const std::string& name : ListDirectory(shards_)) {
      if (!IsDirectory(JoinPath(shards_, name))) UploadStorageFile(JoinPath(shards_, name), "s3://data/shards/" + name);
    }
  }
  static void TearDownTestSuite() {
    delete s3_;
    delete nginx_;
    ResetStorageClients();
  }

  // The check of `report` (doctor --json) named `name`.
  static nlohmann::json Check(const nlohmann::json& report, const std::string& name) {
    for (const nlohmann::json& c : report["checks"]) {
      if (c["name"] == name) return c;
    }
    ADD_FAILURE() << "no check " << name << " in " << report.dump();
    return {};
  }

  static std::string shards_;
  static NginxTestServer* nginx_;
  static S3TestServer* s3_;
};
std::string UrlCliTest::shards_;
NginxTestServer* UrlCliTest::nginx_ = nullptr;
S3TestServer* UrlCliTest::s3_ = nullptr;

// The per-file objects of `inspect --json` output (the first line describes the data
// set), their paths taken out.
std::vector<nlohmann::json> Inspections(const std::string& out) {
  std::vector<nlohmann::json> files = JsonLines(out);
  EXPECT_GE(files.size(), 2u);
  files.erase(files.begin());
  for (nlohmann::json& f : files) f.erase("path");
  return files;
}

TEST_F(UrlCliTest, InspectDescribesUrlsAsLocalShards) {
  const Result local = RunImgpipe({"inspect", "--json", shards_});
  ASSERT_EQ(local.status, 0) << local.err;
  const std::vector<nlohmann::json> expected = Inspections(local.out);
  ASSERT_EQ(expected.size(), 2u);
  EXPECT_EQ(expected[0]["index"], "ok") << expected[0].dump();
  for (const std::string& url : {nginx_->Url("shards"), std::string("s3://data/shards/")}) {
    const Result r = RunImgpipe({"inspect", "--json", url});
    ASSERT_EQ(r.status, 0) << url << ": " << r.err;
    EXPECT_EQ(Inspections(r.out), expected) << url;
  }
  // One shard by its URL; and a shard whose bytes are not all there is named.
  const Result one = RunImgpipe({"inspect", nginx_->Url("shards/train-00001-of-00002.tfrecord")});
  EXPECT_EQ(one.status, 0) << one.err;
  EXPECT_NE(one.out.find("index: ok"), std::string::npos) << one.out;
  const std::string bytes = ReadFile(shards_ + "/train-00000-of-00002.tfrecord");
  WriteStorageFile("s3://data/cut/train-00000-of-00001.tfrecord", bytes.substr(0, bytes.size() - 100));
  const Result cut = RunImgpipe({"inspect", "s3://data/cut/train-00000-of-00001.tfrecord"});
  EXPECT_EQ(cut.status, 2);
  EXPECT_NE(cut.out.find("s3://data/cut/train-00000-of-00001.tfrecord"), std::string::npos) << cut.out;
  EXPECT_NE(cut.out.find("offset"), std::string::npos) << cut.out;
}

TEST_F(UrlCliTest, DoctorMeasuresTheStoreAgainstTheRate) {
  for (const std::string& url : {nginx_->Url("shards"), std::string("s3://data/shards")}) {
    const Result r = RunImgpipe({"doctor", "--data", url, "--json", "--images-per-s", "10"});
    const nlohmann::json report = nlohmann::json::parse(r.out);
    const nlohmann::json& network = report["network"];
    ASSERT_TRUE(network.is_object()) << r.out;
    EXPECT_EQ(network["error"], "");
    EXPECT_GT(network["latency_ms"].get<double>(), 0);
    EXPECT_GT(network["one_connection_mb_per_s"].get<double>(), 1);
    EXPECT_GT(network["many_connections_mb_per_s"].get<double>(), 1);
    EXPECT_EQ(network["connections"], 8);
    EXPECT_EQ(network["needed_images_per_s"], 10.0);
    EXPECT_EQ(Check(report, "network")["status"], "ok") << Check(report, "network").dump();
    EXPECT_EQ(Check(report, "shards")["detail"].get<std::string>().rfind("2 shards", 0), 0u);
  }
  // A rate no store gives is a warning with what to do; without a rate, the train
  // preset's on this machine's CPUs (measured on the data) is used.
  const Result fast = RunImgpipe({"doctor", "--data", "s3://data/shards", "--json", "--images-per-s", "1e9"});
  const nlohmann::json too_slow = Check(nlohmann::json::parse(fast.out), "network");
  EXPECT_EQ(too_slow["status"], "warning");
  EXPECT_NE(too_slow["detail"].get<std::string>().find("too slow"), std::string::npos) << too_slow.dump();
  EXPECT_NE(too_slow["fix"].get<std::string>().find("--cache-dir"), std::string::npos);
  const Result measured = RunImgpipe({"doctor", "--data", nginx_->Url("shards"), "--json"});
  const nlohmann::json with_preset = nlohmann::json::parse(measured.out);
  EXPECT_GT(with_preset["network"]["needed_images_per_s"].get<double>(), 10) << measured.out;
  EXPECT_NE(Check(with_preset, "network")["detail"].get<std::string>().find("the train preset"), std::string::npos);
}

TEST_F(UrlCliTest, DoctorSeesTheLatencyOfAFarStore) {
  FaultProxy proxy("127.0.0.1:" + std::to_string(nginx_->port()));
  proxy.SetLatencyMs(60);
  const Result r = RunImgpipe({"doctor", "--data", proxy.Url("shards"), "--json", "--images-per-s", "10"});
  const nlohmann::json network = nlohmann::json::parse(r.out)["network"];
  EXPECT_GE(network["latency_ms"].get<double>(), 60) << r.out;
  EXPECT_LT(network["one_connection_mb_per_s"].get<double>(), network["many_connections_mb_per_s"].get<double>())
      << "8 connections hide the latency that one waits for";
}

TEST_F(UrlCliTest, DoctorNamesWhatIsMissing) {
  for (const std::string& url : {nginx_->Url("nothing-here"), std::string("s3://no-such-bucket/shards")}) {
    const Result r = RunImgpipe({"doctor", "--data", url, "--json"});
    EXPECT_EQ(r.status, 2) << url;
    const nlohmann::json data = Check(nlohmann::json::parse(r.out), "data");
    EXPECT_EQ(data["status"], "error");
    EXPECT_NE(data["detail"].get<std::string>().find(url), std::string::npos) << data.dump();
  }
}

TEST_F(UrlCliTest, BenchReportsRequestsConnectionsAndBytes) {
  const Result r = RunImgpipe({"bench", "--data", "s3://data/shards", "--threads", "1", "--seconds", "1",
                               "--warmup", "0.2", "--batch-size", "16", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json out = nlohmann::json::parse(r.out);
  EXPECT_GT(out["images_per_s"].get<double>(), 0);
  const nlohmann::json& storage = out["storage"];
  ASSERT_TRUE(storage.is_object()) << r.out;
  EXPECT_GT(storage["requests"].get<uint64_t>(), 4u);  // a listing, the .idx files, the shards
  EXPECT_GE(storage["connections"].get<uint64_t>(), 1u);
  EXPECT_LE(storage["connections"].get<uint64_t>(), storage["requests"].get<uint64_t>());
  const uint64_t shard_bytes = StorageSize(shards_ + "/train-00000-of-00002.tfrecord");
  EXPECT_GE(storage["bytes_received"].get<uint64_t>(), shard_bytes);
  EXPECT_GT(storage["bytes_per_request"].get<double>(), 1000);
  EXPECT_EQ(storage["retries"], 0);
  // With --cache-dir, the epochs after the first read the local copies of the 2 shards.
  const std::string cache = FreshDir("url_bench_cache");
  const Result cached = RunImgpipe({"bench", "--data", "s3://data/shards", "--threads", "1", "--seconds", "1",
                                    "--warmup", "0.2", "--batch-size", "16", "--json", "--cache-dir", cache});
  ASSERT_EQ(cached.status, 0) << cached.err;
  const nlohmann::json with_cache = nlohmann::json::parse(cached.out)["storage"];
  EXPECT_GE(with_cache["cache_stored"].get<uint64_t>(), 2u) << with_cache.dump();  // rejects.csv too
  EXPECT_GT(with_cache["cache_hits"].get<uint64_t>(), 0u) << with_cache.dump();
  const Result no_dir = RunImgpipe({"bench", "--data", "s3://data/shards", "--cache-size", "1GB"});
  EXPECT_NE(no_dir.status, 0);
  EXPECT_NE(no_dir.err.find("--cache-size: needs --cache-dir"), std::string::npos) << no_dir.err;
  // Local data has no storage line.
  const Result local = RunImgpipe({"bench", "--data", shards_, "--threads", "1", "--seconds", "0.3",
                                   "--warmup", "0", "--json"});
  EXPECT_FALSE(nlohmann::json::parse(local.out).contains("storage"));
}

}  // namespace
}  // namespace imgpipe
