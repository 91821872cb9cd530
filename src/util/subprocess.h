// Child processes: one way to start them (StartProcess), wait for them (WaitProcess,
// LocalWorkers::Wait) and say how they ended (DescribeExit), for the local worker
// processes that train --nproc and extract --nproc start as torchrun --nproc-per-node
// does (each its own environment, RANK, WORLD_SIZE, ..., and its command line), and
// for programs whose output is read (RunForOutput).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace imgpipe {

using EnvironmentOverrides = std::vector<std::pair<std::string, std::string>>;

// Starts `argv` (argv[0]: the program's path) as a child process with this process's
// environment plus `environment`. Its stdout and stderr go to the files given (created
// or truncated), or are inherited when a path is empty. Throws IoError naming argv[0]
// when it cannot start.
pid_t StartProcess(const std::vector<std::string>& argv, const std::string& stdout_path = "",
                   const std::string& stderr_path = "", const EnvironmentOverrides& environment = {});

// Waits for child `pid` to end; returns waitpid's raw status. Throws IoError when
// waitpid fails (not a child).
int WaitProcess(pid_t pid);

// "exited with status 3", "killed by signal 9 (Killed)"; empty for a clean exit (0).
std::string DescribeExit(int raw_status);

// The exit status of a raw wait status: the code, or 128 + N when killed by signal N.
int ExitStatus(int raw_status);

// This process's command line (/proc/self/cmdline) with argv[0] replaced by
// CurrentExecutable(): what starts this binary again with the same arguments.
std::vector<std::string> OwnCommandLine();

// `args` without each option named in `options`, in both forms ("--nproc N" and
// "--nproc=N"); args[0] is kept as it is.
std::vector<std::string> CommandLineWithout(const std::vector<std::string>& args,
                                            const std::vector<std::string>& options);

// How one local worker starts: its command line (argv[0]: the program's path), what it
// adds to this process's environment, and where its stdout goes ("": inherited).
struct WorkerLaunch {
  std::vector<std::string> argv;
  EnvironmentOverrides environment;
  std::string stdout_path;
};

struct WorkerResult {
  int index = 0;
  int status = 0;       // exit status; 128 + N when killed by signal N
  std::string ending;   // DescribeExit's words: "" for a clean exit
};

// What Wait does to the other workers when one fails.
enum class WhenOneFails {
  kStopTheOthers,    // SIGTERM, then SIGKILL after the grace period: a broken job never hangs
  kLetTheOthersEnd,  // each finishes its own part (extract: their shards stay done)
};

// Local worker processes indexed first..first+count-1 (train: 0..N-1; extract runs
// worker 0 itself and starts 1..N-1), started together, waited for together, and never
// left behind: the destructor stops and reaps any still running (a caller that throws
// leaves no orphans).
class LocalWorkers {
 public:
  // Starts worker i as `launch(i)` says, for each i. When one cannot start, stops the
  // ones started and throws IoError naming the worker and the program.
  LocalWorkers(int first, int count, const std::function<WorkerLaunch(int)>& launch);
  ~LocalWorkers();
  LocalWorkers(const LocalWorkers&) = delete;
  LocalWorkers& operator=(const LocalWorkers&) = delete;

  // Waits until every worker has ended; returns one result per worker in index order.
  std::vector<WorkerResult> Wait(WhenOneFails when_one_fails,
                                 std::chrono::milliseconds grace = std::chrono::seconds(10));

  // Sends SIGTERM to every worker still running and reaps them.
  void Stop();

 private:
  int first_ = 0;
  std::vector<pid_t> pids_;  // -1 once reaped
};

// "worker 2 of 4 exited with status 3" for the first failed of `results` (workers of a
// job of `total`), or "" when every one ended cleanly.
std::string FirstWorkerFailure(const std::vector<WorkerResult>& results, int total);

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
