// The command line of one worker's part of a multi-process extraction (extract
// --nproc); util/subprocess.h starts and waits for the processes.
#pragma once

#include <string>
#include <vector>

namespace imgpipe::extract {

// `args` with every "--nproc N" and "--threads N" (or "--opt=N") removed and
// "--threads T --worker I --num-workers N" appended: the command line of one worker's
// part of a multi-process run. Throws Error when `args` already names a worker.
std::vector<std::string> WorkerCommandLine(const std::vector<std::string>& args, int worker,
                                           int num_workers, int threads);

}  // namespace imgpipe::extract
