#include "util/subprocess.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <map>
#include <thread>

#include "util/error.h"

extern char** environ;

namespace imgpipe {
namespace {

int StatusOf(int wait_status) {
  return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> p;
  for (std::string& s : strings) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

}  // namespace

std::vector<std::string> EnvironmentWith(const EnvironmentOverrides& overrides) {
  std::map<std::string, std::string> vars;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    size_t eq = entry.find('=');
    if (eq != std::string::npos) vars[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  for (const auto& [name, value] : overrides) vars[name] = value;
  std::vector<std::string> out;
  for (const auto& [name, value] : vars) out.push_back(name + "=" + value);
  return out;
}

std::vector<WorkerResult> RunWorkers(const std::vector<std::string>& argv, int count,
                                     const std::function<EnvironmentOverrides(int)>& environment,
                                     std::chrono::milliseconds grace) {
  // 1. Start every worker.
  std::vector<pid_t> pids;
  std::vector<std::string> args = argv;
  std::vector<char*> arg_pointers = Pointers(args);
  auto kill_all = [&](int sig) {
    for (pid_t p : pids) {
      if (p > 0) ::kill(p, sig);
    }
  };
  for (int i = 0; i < count; ++i) {
    std::vector<std::string> env = EnvironmentWith(environment(i));
    std::vector<char*> env_pointers = Pointers(env);
    pid_t pid = 0;
    int rc = ::posix_spawn(&pid, args[0].c_str(), nullptr, nullptr, arg_pointers.data(), env_pointers.data());
    if (rc != 0) {
      kill_all(SIGKILL);
      for (pid_t p : pids) ::waitpid(p, nullptr, 0);
      throw Error("cannot start worker " + std::to_string(i) + " (" + args[0] + "): " + std::strerror(rc));
    }
    pids.push_back(pid);
  }
  // 2. Wait; after the first failure, stop the rest (SIGTERM, then SIGKILL after grace).
  std::vector<WorkerResult> results(count);
  for (int i = 0; i < count; ++i) results[i].index = i;
  int running = count;
  bool failed = false;
  std::chrono::steady_clock::time_point kill_at{};
  while (running > 0) {
    int wait_status = 0;
    pid_t done = ::waitpid(-1, &wait_status, failed ? WNOHANG : 0);
    if (done < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (done == 0) {  // failed: polling until the grace period ends
      if (std::chrono::steady_clock::now() >= kill_at) kill_all(SIGKILL);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    for (int i = 0; i < count; ++i) {
      if (pids[i] != done) continue;
      results[i].status = StatusOf(wait_status);
      pids[i] = -1;
      --running;
      if (results[i].status != 0 && !failed) {
        failed = true;
        kill_all(SIGTERM);
        kill_at = std::chrono::steady_clock::now() + grace;
      }
    }
  }
  return results;
}

std::string CurrentExecutable() {
  char path[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) throw IoError("/proc/self/exe", "readlink", errno);
  return std::string(path, n);
}

ProgramOutput RunForOutput(const std::vector<std::string>& argv) {
  // 1. A pipe for its standard output, its write end dup'ed onto the child's fd 1.
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw IoError(argv.at(0), "pipe", errno);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  std::vector<std::string> args = argv;
  std::vector<char*> arg_pointers = Pointers(args);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, args.at(0).c_str(), &actions, nullptr, arg_pointers.data(),
                               environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    throw Error("cannot run " + argv.at(0) + ": " + std::strerror(rc));
  }
  // 2. Read to its end, then reap it.
  ProgramOutput result;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], buffer, sizeof(buffer));
    if (n > 0) {
      result.output.append(buffer, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(fds[0]);
  int wait_status = 0;
  while (::waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
  }
  result.status = StatusOf(wait_status);
  return result;
}

int FreeLoopbackPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw Error(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    int e = errno;
    ::close(fd);
    throw Error(std::string("cannot find a free port: ") + std::strerror(e));
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace imgpipe
