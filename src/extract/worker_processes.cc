#include "extract/worker_processes.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>

#include "util/error.h"
#include "util/file.h"

extern char** environ;

namespace imgpipe::extract {

pid_t StartProcess(const std::vector<std::string>& argv, const std::string& stdout_path,
                   const std::string& stderr_path) {
  if (argv.empty()) throw Error("StartProcess: empty command line");
  std::vector<std::string> args = argv;
  std::vector<char*> c_args;
  for (std::string& a : args) c_args.push_back(a.data());
  c_args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const int flags = O_WRONLY | O_CREAT | O_TRUNC;
  if (!stdout_path.empty()) posix_spawn_file_actions_addopen(&actions, 1, stdout_path.c_str(), flags, 0644);
  if (!stderr_path.empty()) posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(), flags, 0644);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, args[0].c_str(), &actions, nullptr, c_args.data(), environ);
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
    int code = WEXITSTATUS(raw_status);
    return code == 0 ? "" : "exited with status " + std::to_string(code);
  }
  if (WIFSIGNALED(raw_status)) {
    int sig = WTERMSIG(raw_status);
    return "killed by signal " + std::to_string(sig) + " (" + ::strsignal(sig) + ")";
  }
  return "ended with wait status " + std::to_string(raw_status);
}

std::vector<std::string> OwnCommandLine() {
  std::string bytes = ReadFile("/proc/self/cmdline");
  std::vector<std::string> args;
  size_t start = 0;
  while (start < bytes.size()) {
    size_t end = bytes.find('\0', start);
    if (end == std::string::npos) end = bytes.size();
    args.push_back(bytes.substr(start, end - start));
    start = end + 1;
  }
  return args;
}

std::vector<std::string> WorkerCommandLine(const std::vector<std::string>& args, int worker,
                                           int num_workers, int threads) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--worker" || a == "--num-workers" || a.rfind("--worker=", 0) == 0 ||
        a.rfind("--num-workers=", 0) == 0) {
      throw Error("--nproc starts the workers itself: leave out --worker and --num-workers");
    }
    if (a == "--nproc" || a == "--threads") {
      ++i;  // and its value
      continue;
    }
    if (a.rfind("--nproc=", 0) == 0 || a.rfind("--threads=", 0) == 0) continue;
    out.push_back(a);
  }
  out.insert(out.end(), {"--threads", std::to_string(threads), "--worker", std::to_string(worker),
                         "--num-workers", std::to_string(num_workers)});
  return out;
}

}  // namespace imgpipe::extract
