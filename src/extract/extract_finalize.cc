// FinalizeExtract (extract/feature_extractor.h): the step after the workers of an
// extraction. libtorch-free: it reads the output folder only.
#include "extract/extract_output.h"
#include "extract/feature_extractor.h"
#include "util/error.h"
#include "util/file.h"
#include "util/thread_pool.h"
#include "util/worker_shards.h"

namespace imgpipe::extract {
namespace {

// Throws Error when an option that goes into the plan unchanged differs from the plan
// the workers recorded in `output`.
void CheckOptionsAgainstPlan(const ExtractOptions& options, const ExtractOutput& output) {
  const nlohmann::json& plan = output.plan();
  std::string differences;
  auto compare = [&](const char* key, const std::string& option, const std::string& value) {
    const std::string recorded = plan.value(key, std::string());
    if (recorded == value) return;
    differences += (differences.empty() ? "" : ", ") + option + " (" + recorded + " there, " +
                   value + " now)";
  };
  compare("data", "--data", options.data);
  compare("split", "--split", options.split);
  compare("model", "--model", options.model);
  compare("layer", "--layer", options.layer);
  compare("dtype", "--dtype", options.dtype);
  if (!differences.empty()) {
    throw Error(options.output + ": holds an extraction with other options: " + differences +
                "; run --finalize with the workers' options");
  }
}

}  // namespace

ExtractSummary FinalizeExtract(const ExtractOptions& options) {
  // 1. The plan the workers recorded, which must be this command's.
  if (!PathExists(options.output)) {
    throw Error(options.output + ": no extraction was begun there; run the workers first");
  }
  ExtractOutput output = ExtractOutput::Open(options.output);
  CheckOptionsAgainstPlan(options, output);

  // 2. Every shard: finished, its arrays' CRC-32C the recorded ones (read on the pool).
  const size_t count = output.shard_count();
  std::vector<std::string> problems(count), names(count);
  ThreadPool pool(options.threads > 0 ? options.threads : AvailableCpus());
  ParallelFor(pool, count, [&](size_t i) {
    names[i] = "shard " + std::to_string(i) + " (" + FeaturesFileName(i) + ")";
    try {
      problems[i] = output.ShardProblem(i);
    } catch (const Error& e) {
      problems[i] = e.what();
    }
  });
  ExtractSummary summary;
  summary.dimension = output.plan().at("dimension").get<int64_t>();
  summary.shards_total = count;
  for (const std::string& problem : problems) summary.shards_done += problem.empty();
  if (summary.shards_done != count) {
    throw Error(ShardProblemReport(options.output, names, problems, options.num_workers,
                                   "with --resume, a worker keeps its finished shards"));
  }

  // 3. The summary files.
  if (!output.WriteSummaryIfComplete()) {
    throw Error(options.output + ": a shard changed while it was being finalized");
  }
  for (size_t i = 0; i < count; ++i) {
    ShardResult result = *output.LoadFinishedShard(i);
    summary.rows_total += result.rows;
    summary.failures_total += result.failures.size();
  }
  summary.complete = true;
  return summary;
}

}  // namespace imgpipe::extract
