// RunExtractProcesses (feature_extractor.h): one extraction as several local processes.
#include <algorithm>
#include <chrono>
#include <set>

#include "extract/extract_output.h"
#include "extract/extract_plan.h"
#include "extract/feature_extractor.h"
#include "util/error.h"
#include "util/file.h"
#include "util/subprocess.h"
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

// Runs worker 0 here while workers 1..nproc-1 run as child processes (their summaries
// to /dev/null) on `threads` threads each; throws Error naming the first that failed.
void RunAllWorkers(const ExtractOptions& options, int nproc, int threads,
                   const WorkerCommand& worker_command, const ExtractProgressCallback& progress) {
  LocalWorkers children(1, nproc - 1, [&](int i) {
    return WorkerLaunch{worker_command(i, threads), {}, "/dev/null"};
  });
  ExtractOptions own = options;
  own.worker = 0;
  own.num_workers = nproc;
  own.threads = threads;
  RunExtract(own, progress);  // when it throws, `children` stops the others
  const std::string failure = FirstWorkerFailure(children.Wait(WhenOneFails::kLetTheOthersEnd), nproc);
  if (!failure.empty()) throw Error(failure + " (its error is above; run again with --resume to finish)");
}

// This run's totals from the shard records of `output` (`finished_before`: the shards
// done before it), and features.json written; throws Error when a shard is missing.
ExtractSummary SummarizeShards(const ExtractOptions& options, int nproc, const std::set<size_t>& finished_before,
                               std::chrono::steady_clock::time_point start) {
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

}  // namespace

ExtractSummary RunExtractProcesses(const ExtractOptions& options, int nproc,
                                   const WorkerCommand& worker_command,
                                   const ExtractProgressCallback& progress) {
  if (nproc < 1) throw Error("--nproc must be at least 1");
  if (nproc == 1) return RunExtract(options, progress);
  const auto start = std::chrono::steady_clock::now();
  const std::set<size_t> finished_before = FinishedShards(options.output, options.resume);
  // 1. The CPUs shared out (libtorch's threads slow down a lot when oversubscribed).
  const int threads = options.threads > 0 ? options.threads : std::max(1, AvailableCpus() / nproc);
  // 2. Every worker run to its end; the first that failed named.
  RunAllWorkers(options, nproc, threads, worker_command, progress);
  // 3. The summary files, and this run's totals from the shard records.
  return SummarizeShards(options, nproc, finished_before, start);
}

}  // namespace imgpipe::extract
