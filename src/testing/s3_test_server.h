// Tests' S3 server: s3rver (from the npm registry; scripts/install-deps.sh installs it in
// ~/.cache/imgpipe/s3rver, IMGPIPE_S3RVER_DIR overrides) on 127.0.0.1 under Node.js, with
// its buckets made at start, its objects in a folder of the test's, started by the test
// that needs it and stopped by pid when the object goes. It does not check signatures
// (s3_client_test.cc recomputes those of captured requests instead).
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include "io/storage.h"
#include "testing/test_server_process.h"
#include "util/error.h"
#include "util/file.h"
#include "util/subprocess.h"

namespace imgpipe {

class S3TestServer {
 public:
  // Starts s3rver with `buckets`, its data in `work` (made if missing). Throws Error when
  // it is not installed or does not start.
  S3TestServer(const std::vector<std::string>& buckets, const std::string& work) {
    const char* dir = std::getenv("IMGPIPE_S3RVER_DIR");
    const char* home = std::getenv("HOME");
    const std::string install =
        dir != nullptr ? dir : std::string(home != nullptr ? home : "") + "/.cache/imgpipe/s3rver";
    const std::string script = install + "/node_modules/s3rver/bin/s3rver.js";
    if (!PathExists(script)) throw Error("no s3rver at " + script + " (run scripts/install-deps.sh)");
    MakeDirectories(work + "/data");
    for (int attempt = 0; attempt < 5; ++attempt) {  // another process may take the port
      port_ = FreeLoopbackPort();
      // The legacy provider: s3rver's continuation tokens use a cipher OpenSSL 3 moved there.
      std::vector<std::string> argv = {"/usr/bin/node", "--openssl-legacy-provider", script,
                                       "-d", work + "/data", "-a", "127.0.0.1",
                                       "-p", std::to_string(port_), "--silent"};
      for (const std::string& bucket : buckets) {
        argv.push_back("--configure-bucket");
        argv.push_back(bucket);
      }
      if (process_.Start(argv, port_, "install nodejs; scripts/install-deps.sh installs s3rver",
                         std::chrono::seconds(30))) {
        return;
      }
    }
    throw Error("s3rver did not start on 127.0.0.1");
  }

  // http://127.0.0.1:PORT, for AWS_ENDPOINT_URL.
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // Points this process's s3:// and gs:// URLs at this server as a user would, with the
  // environment (its keys, AWS_ENDPOINT_URL, GCS_ENDPOINT_URL; no bearer token), and
  // short retry backoffs; the storage clients are made again at their next use.
  void PointStorageHere() const {
    for (const char* name : {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "GCS_HMAC_ACCESS_KEY_ID",
                             "GCS_HMAC_SECRET_ACCESS_KEY"}) {
      setenv(name, "S3RVER", 1);
    }
    setenv("AWS_REGION", "us-east-1", 1);
    setenv("AWS_ENDPOINT_URL", endpoint().c_str(), 1);
    setenv("GCS_ENDPOINT_URL", endpoint().c_str(), 1);
    unsetenv("GOOGLE_OAUTH_ACCESS_TOKEN");
    setenv("IMGPIPE_HTTP_BASE_DELAY_MS", "5", 1);
    ResetStorageClients();
  }

 private:
  int port_ = 0;
  TestServerProcess process_;
};

}  // namespace imgpipe
