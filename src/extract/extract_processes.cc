// RunExtractProcesses (feature_extractor.h): one extraction as several local processes.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "extract/extract_output.h"
#include "extract/extract_plan.h"
#include "extract/feature_extractor.h"
#include "extract/worker_processes.h"
#include "util/error.h"
#include "util/file.h"
#include "util/thread_pool.h"

namespace imgpipe::extract {
namespace {

// The shards of `dir` finished before this run (none when the run redoes them all).
std::set<size_t> FinishedShards(const std::string& dir, bool resume) {
  std::set<size_t> done;
  if (!resume || !PathExists(JoinPath(dir, ".imgpipe-extract/plan.json"))) return done;
  ExtractOutput output = ExtractOutput::Open(dir);
  for (size_t i = 0; i < output.shard_count(); ++i) {
    if (output.LoadFinishedShard(i)) done.insert(i);
  }
  return done;
}

}  // namespace

ExtractSummary RunExtractProcesses(const ExtractOptions& options, int nproc,
                                   const WorkerCommand& worker_command,
                                   const ExtractProgressCallback& progress) {
  if (nproc < 1) throw Error("--nproc must be at least 1");
  if (nproc == 1) return RunExtract(options, progress);
  const auto start = std::chrono::steady_clock::now();
  const std::set<size_t> finished_before = FinishedShards(options.output, options.resume);

  // 1. Workers 1..nproc-1 as child processes (their summaries to /dev/null), worker 0
  //    here; the CPUs shared out (libtorch's threads slow down a lot when oversubscribed).
  const int threads = options.threads > 0 ? options.threads : std::max(1, AvailableCpus() / nproc);
  std::vector<pid_t> children;
  for (int i = 1; i < nproc; ++i) {
    children.push_back(StartProcess(worker_command(i, threads), "/dev/null"));
  }
  ExtractOptions own = options;
  own.worker = 0;
  own.num_workers = nproc;
  own.threads = threads;
  try {
    RunExtract(own, progress);
  } catch (...) {
    for (pid_t pid : children) ::kill(pid, SIGTERM);
    for (pid_t pid : children) WaitProcess(pid);
    throw;
  }
  // 2. Wait for every worker; name the first that failed.
  std::string failure;
  for (int i = 1; i < nproc; ++i) {
    std::string how = DescribeExit(WaitProcess(children[i - 1]));
    if (!how.empty() && failure.empty()) {
      failure = "worker " + std::to_string(i) + " of " + std::to_string(nproc) + " " + how +
                " (its error is above; run again with --resume to finish)";
    }
  }
  if (!failure.empty()) throw Error(failure);

  // 3. The summary files, and this run's totals from the shard records.
  ExtractOutput output = ExtractOutput::Open(options.output);
  ExtractSummary summary;
  summary.dimension = output.plan().at("dimension").get<int64_t>();
  summary.shards_total = output.shard_count();
  std::vector<double> worker_seconds(static_cast<size_t>(nproc), 0.0);
  double input_wait = 0, shard_seconds = 0;
  for (size_t i = 0; i < output.shard_count(); ++i) {
    std::optional<ShardResult> done = output.LoadFinishedShard(i);
    if (!done) continue;
    ++summary.shards_done;
    summary.rows_total += done->rows;
    summary.failures_total += done->failures.size();
    if (finished_before.count(i)) {
      ++summary.shards_resumed;
      continue;
    }
    ++summary.shards_this_run;
    summary.rows_this_run += done->rows;
    summary.failures_this_run += done->failures.size();
    worker_seconds[i % static_cast<size_t>(nproc)] += done->seconds;
    input_wait += done->input_wait_seconds;
    shard_seconds += done->seconds;
  }
  summary.complete = summary.shards_done == summary.shards_total && output.WriteSummaryIfComplete();
  if (!summary.complete) {
    throw Error(options.output + ": every worker succeeded but only " +
                std::to_string(summary.shards_done) + " of " + std::to_string(summary.shards_total) +
                " shards are finished");
  }
  // Throughput: the rows over the longest any worker spent extracting.
  double busiest = 0;
  for (double s : worker_seconds) busiest = std::max(busiest, s);
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  summary.images_per_s = busiest > 0 ? summary.rows_this_run / busiest : 0;
  summary.input_wait_fraction = shard_seconds > 0 ? input_wait / shard_seconds : 0;
  return summary;
}

}  // namespace imgpipe::extract
