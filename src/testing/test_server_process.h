// Tests' servers: a program started on 127.0.0.1 by the test that needs it, waited for
// until its port accepts connections, and stopped by pid (SIGTERM, then waited for) when
// the object goes. The nginx and s3rver fixtures start theirs through it.
#pragma once

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
#include <vector>

#include "util/error.h"

extern char** environ;

namespace imgpipe {

class TestServerProcess {
 public:
  TestServerProcess() = default;
  ~TestServerProcess() { Stop(); }
  TestServerProcess(const TestServerProcess&) = delete;
  TestServerProcess& operator=(const TestServerProcess&) = delete;

  // Starts `argv` (argv[0] a full path) and waits up to `timeout` until 127.0.0.1:`port`
  // accepts connections: true then; false when the program exits first or does not listen
  // in time (it is stopped). Throws Error when argv[0] cannot be started, saying `install`.
  bool Start(const std::vector<std::string>& argv, int port, const std::string& install,
             std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    Stop();
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    if (posix_spawn(&pid_, args[0], nullptr, nullptr, args.data(), environ) != 0) {
      pid_ = -1;
      throw Error("cannot start " + argv[0] + " (" + install + ")");
    }
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      if (Accepts(port)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    Stop();
    return false;
  }

  // Stops the program (SIGTERM) and waits for it; nothing when none runs.
  void Stop() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
    pid_ = -1;
  }

  // Whether 127.0.0.1:`port` accepts a connection now.
  static bool Accepts(int port) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    close(fd);
    return ok;
  }

 private:
  pid_t pid_ = -1;
};

}  // namespace imgpipe
