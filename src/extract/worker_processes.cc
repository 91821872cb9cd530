#include "extract/worker_processes.h"

#include "util/error.h"
#include "util/subprocess.h"

namespace imgpipe::extract {

std::vector<std::string> WorkerCommandLine(const std::vector<std::string>& args, int worker,
                                           int num_workers, int threads) {
  for (const std::string& a : args) {
    if (a == "--worker" || a == "--num-workers" || a.rfind("--worker=", 0) == 0 ||
        a.rfind("--num-workers=", 0) == 0) {
      throw Error("--nproc starts the workers itself: leave out --worker and --num-workers");
    }
  }
  std::vector<std::string> out = CommandLineWithout(args, {"--nproc", "--threads"});
  out.insert(out.end(), {"--threads", std::to_string(threads), "--worker", std::to_string(worker),
                         "--num-workers", std::to_string(num_workers)});
  return out;
}

}  // namespace imgpipe::extract
