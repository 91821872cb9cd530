// Local worker processes of the running binary, as torchrun --nproc-per-node starts
// them: each gets its own environment (RANK, WORLD_SIZE, ...) and the same arguments.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace imgpipe {

using EnvironmentOverrides = std::vector<std::pair<std::string, std::string>>;

struct WorkerResult {
  int index = 0;
  int status = 0;  // exit status; 128 + N when killed by signal N
};

// Runs `count` copies of `argv` (argv[0]: the program path), worker i with the current
// environment plus `environment(i)`, and waits for all of them. When one fails, the
// others get SIGTERM (then SIGKILL after `grace`), so a broken job never hangs.
// Returns one result per worker, in index order. Throws Error when a spawn fails.
std::vector<WorkerResult> RunWorkers(const std::vector<std::string>& argv, int count,
                                     const std::function<EnvironmentOverrides(int)>& environment,
                                     std::chrono::milliseconds grace = std::chrono::seconds(10));

// This process's environment (NAME=value strings) with `overrides` replacing or adding
// entries, for execve/posix_spawn.
std::vector<std::string> EnvironmentWith(const EnvironmentOverrides& overrides);

// This process's executable (/proc/self/exe resolved).
std::string CurrentExecutable();

struct ProgramOutput {
  int status = 0;      // exit status; 128 + N when killed by signal N
  std::string output;  // what it wrote to its standard output
};

// Runs `argv` (argv[0]: the program path) with this process's environment and standard
// error, and returns its exit status and standard output. Throws Error when it cannot
// be started.
ProgramOutput RunForOutput(const std::vector<std::string>& argv);

// A TCP port on 127.0.0.1 that was free a moment ago (bind to port 0, read, close).
int FreeLoopbackPort();

}  // namespace imgpipe
