// FinalizeConvert (convert/converter.h): the step after the workers of a conversion.
#include <chrono>
#include <memory>
#include <vector>

#include "convert/convert_output.h"
#include "convert/converter.h"
#include "io/storage.h"
#include "record/crc32c.h"
#include "record/crc32c_file.h"
#include "record/index.h"
#include "util/error.h"
#include "util/file.h"
#include "util/thread_pool.h"
#include "util/worker_shards.h"

namespace imgpipe {
namespace {

// What is wrong with a planned shard; empty when it checks out.
std::string ShardProblem(const std::string& output, const PlannedShard& shard,
                         const std::optional<ShardPart>& part) {
  if (!part) return "not finished (no shard, index or part file, or they disagree)";
  std::string path = JoinPath(output, shard.file_name);
  std::string index_path = IndexPathFor(path);
  const std::string index_text = ReadStorageFile(index_path);  // read once: CRC and entries
  if (part->index_crc32c) {
    std::string mismatch = Crc32cMismatch(crc32c::Value(index_text.data(), index_text.size()),
                                          *part->index_crc32c);
    if (!mismatch.empty()) return "changed since it was written: index " + mismatch;
  }
  size_t entries = ParseIndex(index_text, index_path).size();
  if (entries != part->records) {
    return "its index has " + std::to_string(entries) + " entries for " +
           std::to_string(part->records) + " records";
  }
  if (part->shard_crc32c) {
    std::string mismatch = Crc32cMismatch(FileCrc32c(path), *part->shard_crc32c);
    if (!mismatch.empty()) return "changed since it was written: " + mismatch;
  }
  return "";
}

}  // namespace

ConvertSummary FinalizeConvert(const ConvertOptions& options) {
  auto start = std::chrono::steady_clock::now();
  CheckConvertOptions(options);
  ThreadPool pool(options.threads > 0 ? options.threads : AvailableCpus());

  // 1. The plan, which must be the one the workers recorded.
  PlannedConversion conversion = PlanConversion(options, pool);
  CheckPlanExists(options.output, conversion.plan_document);
  RemoveDeadSummaryTemporaries(options.output);

  // 2. Every planned shard: finished, its index as long as its record count, both
  //    files' CRC-32C the ones recorded (the files are read on the pool).
  const std::vector<PlannedShard>& shards = conversion.plan.shards;
  std::vector<std::optional<ShardPart>> parts(shards.size());
  std::vector<std::string> problems(shards.size());
  const OutputListing listing = ListOutput(options.output);
  ParallelFor(pool, shards.size(), [&](size_t i) {
    try {
      parts[i] = LoadFinishedPart(options.output, listing, shards[i]);
      problems[i] = ShardProblem(options.output, shards[i], parts[i]);
    } catch (const Error& e) {
      problems[i] = e.what();
    }
  });

  // 3. All or nothing: a report of what to rerun, or the summary files.
  ConvertSummary summary;
  summary.inputs = conversion.inputs.size();
  summary.shards_total = shards.size();
  std::vector<ShardPart> finished;
  for (size_t i = 0; i < shards.size(); ++i) {
    if (!problems[i].empty()) continue;
    CountFinishedShard(shards[i], *parts[i], &summary);
    finished.push_back(std::move(*parts[i]));
  }
  if (summary.shards_done != summary.shards_total) {
    std::vector<std::string> names;
    for (const PlannedShard& shard : shards) names.push_back(shard.file_name);
    throw Error(ShardProblemReport(options.output, names, problems, options.num_workers,
                                   "with --resume, a worker keeps its finished shards; a "
                                   "changed shard is redone once its part file in " +
                                       StateFolder(options.output) + " is removed"));
  }
  WriteDatasetFiles(options.output, conversion, finished);
  summary.complete = true;
  summary.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace imgpipe
