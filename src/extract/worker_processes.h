// Child processes for multi-process extraction: start, wait, describe how they ended,
// and the command line that runs one worker's part.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace imgpipe::extract {

// Starts `argv` (argv[0]: the program's path) as a child process with this process's
// environment. Its stdout and stderr go to the files given (created or truncated), or
// are inherited when a path is empty. Throws IoError when it cannot start.
pid_t StartProcess(const std::vector<std::string>& argv, const std::string& stdout_path = "",
                   const std::string& stderr_path = "");

// Waits for child `pid` to end; returns waitpid's raw status.
int WaitProcess(pid_t pid);

// "exited with status 3", "killed by signal 9 (Killed)"; empty for a clean exit (0).
std::string DescribeExit(int raw_status);

// This process's command line (/proc/self/cmdline), argv[0] first.
std::vector<std::string> OwnCommandLine();

// `args` with every "--nproc N" and "--threads N" (or "--opt=N") removed and
// "--threads T --worker I --num-workers N" appended: the command line of one worker's
// part of a multi-process run. Throws Error when `args` already names a worker.
std::vector<std::string> WorkerCommandLine(const std::vector<std::string>& args, int worker,
                                           int num_workers, int threads);

}  // namespace imgpipe::extract
