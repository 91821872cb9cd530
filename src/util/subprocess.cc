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
#include "util/file.h"

extern char** environ;

namespace imgpipe {
namespace {

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

pid_t StartProcess(const std::vector<std::string>& argv, const std::string& stdout_path,
                   const std::string& stderr_path, const EnvironmentOverrides& environment) {
  if (argv.empty()) throw Error("StartProcess: empty command line");
  std::vector<std::string> args = argv;
  std::vector<char*> arg_pointers = Pointers(args);
  std::vector<std::string> env = environment.empty() ? std::vector<std::string>{} : EnvironmentWith(environment);
  std::vector<char*> env_pointers = Pointers(env);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const int flags = O_WRONLY | O_CREAT | O_TRUNC;
  if (!stdout_path.empty()) posix_spawn_file_actions_addopen(&actions, 1, stdout_path.c_str(), flags, 0644);
  if (!stderr_path.empty()) posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(), flags, 0644);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, args[0].c_str(), &actions, nullptr, arg_pointers.data(),
                               environment.empty() ? environ : env_pointers.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw IoError(args[0], "posix_spawn", rc);
  return pid;
}

int WaitProcess(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw IoError("process " + std::to_string(pid), "waitpid", errno);
  }
  return status;
}

std::string DescribeExit(int raw_status) {
  if (WIFEXITED(raw_status)) {
    const int code = WEXITSTATUS(raw_status);
    return code == 0 ? "" : "exited with status " + std::to_string(code);
  }
  if (WIFSIGNALED(raw_status)) {
    const int sig = WTERMSIG(raw_status);
    return "killed by signal " + std::to_string(sig) + " (" + ::strsignal(sig) + ")";
  }
  return "ended with wait status " + std::to_string(raw_status);
}

int ExitStatus(int raw_status) {
  return WIFEXITED(raw_status) ? WEXITSTATUS(raw_status) : 128 + WTERMSIG(raw_status);
}

std::vector<std::string> OwnCommandLine() {
  const std::string bytes = ReadFile("/proc/self/cmdline");
  std::vector<std::string> args;
  size_t start = 0;
  while (start < bytes.size()) {
    size_t end = bytes.find('\0', start);
    if (end == std::string::npos) end = bytes.size();
    args.push_back(bytes.substr(start, end - start));
    start = end + 1;
  }
  if (args.empty()) throw Error("/proc/self/cmdline: empty");
  args[0] = CurrentExecutable();
  return args;
}

std::vector<std::string> CommandLineWithout(const std::vector<std::string>& args,
                                            const std::vector<std::string>& options) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    bool dropped = false;
    for (const std::string& option : options) {
      if (i > 0 && args[i] == option) {
        ++i;  // and its value
        dropped = true;
      } else if (i > 0 && args[i].rfind(option + "=", 0) == 0) {
        dropped = true;
      }
      if (dropped) break;
    }
    if (!dropped) out.push_back(args[i]);
  }
  return out;
}

LocalWorkers::LocalWorkers(int first, int count, const std::function<WorkerLaunch(int)>& launch)
    : first_(first) {
  for (int i = first; i < first + count; ++i) {
    WorkerLaunch w = launch(i);
    try {
      pids_.push_back(StartProcess(w.argv, w.stdout_path, "", w.environment));
    } catch (const IoError& e) {
      Stop();
      throw IoError("worker " + std::to_string(i) + " (" + (w.argv.empty() ? "" : w.argv[0]) + ")",
                    "start", e.error_number());
    }
  }
}

LocalWorkers::~LocalWorkers() {
  try {
    Stop();
  } catch (...) {  // a destructor must not throw; waitpid fails only for a non-child
  }
}

void LocalWorkers::Stop() {
  for (pid_t p : pids_) {
    if (p > 0) ::kill(p, SIGTERM);
  }
  for (pid_t& p : pids_) {
    if (p > 0) WaitProcess(p);
    p = -1;
  }
}

std::vector<WorkerResult> LocalWorkers::Wait(WhenOneFails when_one_fails, std::chrono::milliseconds grace) {
  std::vector<WorkerResult> results(pids_.size());
  size_t running = 0;
  for (size_t i = 0; i < pids_.size(); ++i) {
    results[i].index = first_ + static_cast<int>(i);
    running += pids_[i] > 0;
  }
  bool stopping = false;
  std::chrono::steady_clock::time_point kill_at{};
  // 1. Poll each worker (waitpid(-1) would reap children that are not workers).
  while (running > 0) {
    for (size_t i = 0; i < pids_.size(); ++i) {
      int raw = 0;
      if (pids_[i] <= 0) continue;
      const pid_t done = ::waitpid(pids_[i], &raw, WNOHANG);
      if (done == 0 || (done < 0 && errno == EINTR)) continue;
      if (done < 0) throw IoError("worker " + std::to_string(results[i].index), "waitpid", errno);
      results[i].status = ExitStatus(raw);
      results[i].ending = DescribeExit(raw);
      pids_[i] = -1;
      --running;
      // 2. After the first failure, stop the rest: SIGTERM, then SIGKILL after `grace`.
      if (results[i].status != 0 && !stopping && when_one_fails == WhenOneFails::kStopTheOthers) {
        stopping = true;
        for (pid_t p : pids_) {
          if (p > 0) ::kill(p, SIGTERM);
        }
        kill_at = std::chrono::steady_clock::now() + grace;
      }
    }
    if (stopping && std::chrono::steady_clock::now() >= kill_at) {
      for (pid_t p : pids_) {
        if (p > 0) ::kill(p, SIGKILL);
      }
    }
    if (running > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return results;
}

std::string FirstWorkerFailure(const std::vector<WorkerResult>& results, int total) {
  for (const WorkerResult& r : results) {
    if (r.status != 0) return "worker " + std::to_string(r.index) + " of " + std::to_string(total) + " " + r.ending;
  }
  return "";
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
  result.status = ExitStatus(WaitProcess(pid));
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
