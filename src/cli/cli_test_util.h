// Running the real imgpipe binary from tests: start it (optionally unprivileged or with
// extra environment variables), wait, read its output.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "util/file.h"
#include "util/subprocess.h"
#include "testing/unprivileged_test_util.h"

namespace imgpipe {

inline const std::string kBinary = IMGPIPE_BINARY;
inline const std::string kTestData = IMGPIPE_TESTDATA_DIR;

// An empty folder "<tmp>/cli_test_<pid>_<name>".
inline std::string FreshDir(const std::string& name) {
  std::string dir = JoinPath(::testing::TempDir(), "cli_test_" + std::to_string(::getpid()) + "_" + name);
  EXPECT_EQ(std::system(("rm -rf '" + dir + "'").c_str()), 0);
  MakeDirectories(dir);
  return dir;
}

// Starts imgpipe with `args`, stdout to `stdout_path` and stderr to that path + ".err",
// with `env` added to the environment; `unprivileged`: as 'nobody' when the test runs
// as root (testing/unprivileged_test_util.h).
inline pid_t StartBinary(const std::string& binary, const std::vector<std::string>& args,
                         const std::string& stdout_path, bool unprivileged = false,
                         const EnvironmentOverrides& env = {}) {
  std::vector<std::string> all = {binary};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> environment = EnvironmentWith(env);
  std::vector<char*> envp;
  for (std::string& e : environment) envp.push_back(e.data());
  envp.push_back(nullptr);
  if (unprivileged) {
    pid_t pid = ::fork();
    if (pid == 0) {
      int out = ::open(stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int err = ::open((stdout_path + ".err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (out < 0 || err < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0) ::_exit(125);
      if (!DropRootPrivileges()) ::_exit(126);
      ::execve(binary.c_str(), argv.data(), envp.data());
      ::_exit(127);
    }
    EXPECT_GT(pid, 0);
    return pid;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, (stdout_path + ".err").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  EXPECT_EQ(posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), envp.data()), 0);
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

// StartBinary of the imgpipe binary under test.
inline pid_t Start(const std::vector<std::string>& args, const std::string& stdout_path,
                   bool unprivileged = false, const EnvironmentOverrides& env = {}) {
  return StartBinary(kBinary, args, stdout_path, unprivileged, env);
}

// The exit status, or 128 + the signal that killed it.
inline int Wait(pid_t pid) {
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

struct Result {
  int status;
  std::string out;
  std::string err;
};

// Runs `binary` with `args` and `env` added to the environment, and returns its exit
// status and output.
inline Result RunBinary(const std::string& binary, const std::vector<std::string>& args,
                        bool unprivileged = false, const EnvironmentOverrides& env = {}) {
  static int calls = 0;
  std::string out = JoinPath(::testing::TempDir(), "cli_test_out_" + std::to_string(::getpid()) + "_" +
                                                       std::to_string(calls++));
  int status = Wait(StartBinary(binary, args, out, unprivileged, env));
  return {status, ReadFile(out), ReadFile(out + ".err")};
}

inline Result RunImgpipe(const std::vector<std::string>& args, bool unprivileged = false,
                         const EnvironmentOverrides& env = {}) {
  return RunBinary(kBinary, args, unprivileged, env);
}

// One JSON value per line of `text`.
inline std::vector<nlohmann::json> JsonLines(const std::string& text) {
  std::vector<nlohmann::json> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    std::string line = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
    pos = end == std::string::npos ? text.size() : end + 1;
  }
  return out;
}

}  // namespace imgpipe
