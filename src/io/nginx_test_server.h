// Tests' HTTP server: Debian's nginx (nginx-light) serving a folder on 127.0.0.1, started
// by the test that needs it and stopped by pid when the object goes. It honours Range and
// If-Match and sends ETags, as object stores do; /fail503/ answers every request with 503
// and Retry-After: 0. Each request is a line of access_log().
#ifndef IMGPIPE_IO_NGINX_TEST_SERVER_H_
#define IMGPIPE_IO_NGINX_TEST_SERVER_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "util/error.h"
#include "util/file.h"
#include "util/subprocess.h"

extern char** environ;

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
  ~NginxTestServer() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
  }
  NginxTestServer(const NginxTestServer&) = delete;
  NginxTestServer& operator=(const NginxTestServer&) = delete;

  // http://127.0.0.1:PORT/PATH
  std::string Url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + "/" + path;
  }
  // The requests served so far, one line each.
  std::string AccessLog() const {
    return PathExists(work_ + "/access.log") ? ReadFile(work_ + "/access.log") : "";
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
    const std::string conf = work_ + "/nginx.conf", log = work_ + "/error.log";
    const char* argv[] = {"/usr/sbin/nginx", "-p", work_.c_str(), "-e", log.c_str(), "-c", conf.c_str(), nullptr};
    if (posix_spawn(&pid_, argv[0], nullptr, nullptr, const_cast<char**>(argv), environ) != 0) {
      throw Error("cannot start /usr/sbin/nginx (install nginx-light)");
    }
    for (int i = 0; i < 400; ++i) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      if (Accepts()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return false;
  }

  bool Accepts() const {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port_));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    close(fd);
    return ok;
  }

  std::string work_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace imgpipe

#endif  // IMGPIPE_IO_NGINX_TEST_SERVER_H_
