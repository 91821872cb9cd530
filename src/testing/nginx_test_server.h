// Tests' HTTP server: Debian's nginx (nginx-light) serving a folder on 127.0.0.1, started
// by the test that needs it and stopped by pid when the object goes. It honours Range and
// If-Match and sends ETags, as object stores do; /fail503/ answers every request with 503
// and Retry-After: 0. Each request is a line of access_log().
#pragma once

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

#include "testing/test_server_process.h"
#include "util/error.h"
#include "util/file.h"
#include "util/subprocess.h"

namespace imgpipe {

class NginxTestServer {
 public:
  // Serves `root`; its configuration, logs and pid in `work` (made if missing). Throws
  // Error (with nginx's error log) when it does not start.
  NginxTestServer(const std::string& root, const std::string& work) : work_(work) {
    MakeDirectories(work_);
    for (int attempt = 0; attempt < 5; ++attempt) {  // another process may take the port
      port_ = FreeLoopbackPort();
      WriteFileAtomic(work_ + "/nginx.conf", Config(root), false);
      if (Start()) return;
    }
    throw Error("nginx did not start: " + (PathExists(work_ + "/error.log") ? ReadFile(work_ + "/error.log") : ""));
  }
  NginxTestServer(const NginxTestServer&) = delete;
  NginxTestServer& operator=(const NginxTestServer&) = delete;

  int port() const { return port_; }
  // http://127.0.0.1:PORT/PATH
  std::string Url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + "/" + path;
  }
  // The requests served so far, one line each.
  std::string AccessLog() const {
    return PathExists(work_ + "/access.log") ? ReadFile(work_ + "/access.log") : "";
  }
  // The number of requests logged, once there are `expected`. nginx logs a request after
  // sending its response, so this waits up to 2 s for `expected` lines, and 20 ms more for
  // any beyond them.
  size_t Served(size_t expected) const {
    auto lines = [this] {
      const std::string log = AccessLog();
      return static_cast<size_t>(std::count(log.begin(), log.end(), '\n'));
    };
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (lines() < expected && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return lines();
  }

 private:
  std::string Config(const std::string& root) const {
    const std::string w = work_;
    return "daemon off;\nmaster_process off;\nworker_processes 1;\nerror_log " + w +
           "/error.log warn;\npid " + w + "/nginx.pid;\nevents { worker_connections 256; }\n"
           "http {\n  access_log " + w + "/access.log;\n  client_body_temp_path " + w +
           "/body;\n  proxy_temp_path " + w + "/proxy;\n  fastcgi_temp_path " + w +
           "/fastcgi;\n  uwsgi_temp_path " + w + "/uwsgi;\n  scgi_temp_path " + w +
           "/scgi;\n  server {\n    listen 127.0.0.1:" + std::to_string(port_) +
           ";\n    root " + root + ";\n    location / { }\n    location /fail503/ {\n"
           "      add_header Retry-After 0 always;\n      return 503;\n    }\n  }\n}\n";
  }

  // Starts nginx and waits until it accepts connections; false when it exits first.
  bool Start() {
    return process_.Start({"/usr/sbin/nginx", "-p", work_, "-e", work_ + "/error.log", "-c",
                           work_ + "/nginx.conf"},
                          port_, "install nginx-light");
  }

  std::string work_;
  int port_ = 0;
  TestServerProcess process_;
};

}  // namespace imgpipe
