#include "convert/converter.h"

#include <chrono>
#include <deque>
#include <future>
#include <map>

#include "convert/convert_output.h"
#include "image/jpeg_transcode.h"
#include "io/storage.h"
#include "record/crc32c_file.h"
#include "record/index.h"
#include "record/tfrecord_writer.h"
#include "util/error.h"
#include "util/file.h"
#include "util/logging.h"
#include "util/thread_pool.h"

namespace imgpipe {
namespace {

// One input's outcome: a record to write, or a reason to reject it.
struct ItemResult {
  ImageExample example;
  int label = 0;              // its class
  std::string reject_reason;  // empty when `example` is good
};

// Input `i`'s record: an image file's, or a TFRecord input's record re-made.
ItemResult MakeItem(const PlannedConversion& conversion, size_t i, const InputImage& input,
                    const ImageExampleOptions& options) {
  ItemResult result;
  try {
    if (conversion.records.empty()) {
      result.label = input.label;
      result.example = MakeImageExample(input, conversion.inputs.class_names[input.label], options);
    } else {
      result.example = MakeRecordExample(conversion.records, i, input.name,
                                         conversion.inputs.class_names, options, &result.label);
    }
  } catch (const pipeline::LabelOutOfRange&) {
    throw;  // a wrong data set or label offset: stop, rejecting every record is no help
  } catch (const std::exception& e) {
    result.reject_reason = RejectReason(e, input.path);
    if (result.reject_reason.empty()) result.reject_reason = "unknown error";
  }
  return result;
}

// 2. This worker's shards: when resuming, those finished earlier are kept, and for a URL
//    output those finished in the staging folder `work` but not uploaded are uploaded
//    now (both counted in `summary`). The others are cleared of a killed run's leftovers
//    (and, for a URL output, of their staged files and objects) and returned.
std::vector<const PlannedShard*> ShardsToConvert(const ConvertOptions& options,
                                                 const PlannedConversion& conversion,
                                                 const std::string& work, ConvertSummary* summary) {
  const bool url = IsUrl(options.output);
  // Staged shards of another plan (the URL's objects were removed, and it was begun
  // again with other options) are not uploaded.
  const bool staged_usable = url && CheckOrWriteStagingPlan(work, conversion.plan_document);
  RemoveDeadSummaryTemporaries(work);
  const OutputListing output = ListOutput(options.output);
  const OutputListing staged = url ? ListOutput(work) : output;
  std::vector<const PlannedShard*> todo;
  for (size_t i = 0; i < conversion.plan.shards.size(); ++i) {
    if (!ShardBelongsToWorker(i, options.worker, options.num_workers)) continue;
    const PlannedShard& shard = conversion.plan.shards[i];
    RemoveShardTemporaries(work, staged, shard);
    if (options.resume && LoadFinishedPart(options.output, output, shard)) {
      if (url) RemoveShardFiles(work, staged, shard);  // uploaded before a kill
      ++summary->shards_resumed;
      continue;
    }
    if (!url) {
      RemoveFile(PartPath(work, shard));
    } else if (options.resume && staged_usable && LoadFinishedPart(work, staged, shard)) {
      RemoveShardFiles(options.output, output, shard);
      UploadShard(work, options.output, shard, options.uploader);
      ++summary->shards_resumed;
      ++summary->shards_uploaded;
      continue;
    } else {
      RemoveShardFiles(work, staged, shard);
      RemoveShardFiles(options.output, output, shard);
    }
    todo.push_back(&shard);
  }
  return todo;
}

// Uploads the shards finished in the staging folder to a URL output on a thread of its
// own, one at a time, while the next shard is converted (so at most two are staged).
// An upload's error is rethrown by the next Start or by Finish; the destructor waits
// for the upload in flight.
class ShardUploads {
 public:
  ShardUploads(const ConvertOptions& options, const std::string& work)
      : options_(options), work_(work) {}

  // Waits for the upload before (rethrowing its error), then starts `shard`'s.
  void Start(const PlannedShard& shard) {
    Finish();
    pending_ = std::async(std::launch::async, [this, &shard] {
      UploadShard(work_, options_.output, shard, options_.uploader);
    });
  }
  // Waits for the upload in flight; rethrows its error.
  void Finish() {
    if (pending_.valid()) pending_.get();
  }

 private:
  const ConvertOptions& options_;
  const std::string& work_;
  std::future<void> pending_;
};

// 3. Converts the shards in `todo` into the folder `work`: images are read, checked and
//    encoded on the pool, up to `ahead` images in flight, and written in plan order by
//    this thread; for a URL output, each finished shard is uploaded while the next is
//    converted.
void ConvertShards(const ConvertOptions& options, const PlannedConversion& conversion,
                   const std::vector<const PlannedShard*>& todo, const std::string& work,
                   ThreadPool& pool, int threads, const ConvertProgressCallback& progress,
                   ConvertSummary* summary) {
  const InputList& inputs = conversion.inputs;
  ConvertProgress state;
  for (const PlannedShard* shard : todo) {
    state.total += shard->inputs.size();
    state.bytes_total += shard->input_bytes;
  }
  const size_t ahead = static_cast<size_t>(threads) * 16;
  std::deque<std::future<ItemResult>> in_flight;
  // The tasks refer to `inputs`, which goes away before the pool's threads do: when
  // writing fails (e.g. on a full disk), wait for the tasks still in flight first.
  struct WaitForTasks {
    std::deque<std::future<ItemResult>>& tasks;
    ~WaitForTasks() {
      for (std::future<ItemResult>& task : tasks) task.wait();
    }
  } wait_for_tasks{in_flight};
  std::optional<ShardUploads> uploads;
  if (IsUrl(options.output)) uploads.emplace(options, work);
  // The next input to submit: position `next_input` of shard todo[next_shard].
  size_t next_shard = 0, next_input = 0;
  auto submit_ahead = [&] {
    while (in_flight.size() < ahead && next_shard < todo.size()) {
      if (next_input == todo[next_shard]->inputs.size()) {
        ++next_shard;
        next_input = 0;
        continue;
      }
      const size_t i = todo[next_shard]->inputs[next_input++];
      in_flight.push_back(pool.Submit([i, input = inputs.image(i), &conversion, &options] {
        return MakeItem(conversion, i, input, options.image);
      }));
    }
  };

  for (const PlannedShard* shard : todo) {
    std::string shard_path = JoinPath(work, shard->file_name);
    ShardPart part;
    std::map<int, uint64_t> per_class;
    std::vector<IndexEntry> index;
    {
      AtomicFileWriter file(shard_path, options.shard_opener);
      Crc32cWritableFile checksummed(file.file());
      TfRecordWriter writer(checksummed);
      for (size_t k = 0; k < shard->inputs.size(); ++k) {
        submit_ahead();
        ItemResult result = in_flight.front().get();
        in_flight.pop_front();
        const size_t input = shard->inputs[k];
        if (result.reject_reason.empty()) {
          index.push_back(writer.Write(result.example.record));
          ++part.records;
          part.restart_markers_added += result.example.restart_markers_added;
          if (!result.example.restart_failure.empty()) {
            part.restart_failures.emplace_back(inputs.path(input), result.example.restart_failure);
          }
          ++per_class[result.label];
        } else {
          part.rejects.emplace_back(inputs.path(input), result.reject_reason);
        }
        ++state.done;
        state.bytes_done += conversion.sizes[input];
        if (progress) progress(state);
      }
      writer.Close();
      part.per_class.assign(per_class.begin(), per_class.end());
      part.bytes = writer.bytes_written();
      part.shard_crc32c = checksummed.crc32c();
      // The shard takes its final name last, so that a .tfrecord in the output always
      // has its index and part file, even when a write fails (e.g. a full disk).
      part.index_crc32c = WriteIndexFile(IndexPathFor(shard_path), index);
      WriteShardPart(work, *shard, part);
      file.Commit();
    }
    if (uploads) {
      uploads->Start(*shard);
      ++summary->shards_uploaded;
    }
    ++summary->shards_this_run;
    summary->input_bytes_this_run += shard->input_bytes;
  }
  if (uploads) uploads->Finish();
}

// 4. Counts every finished shard (any worker's) into `summary`; returns their parts,
//    in plan order. The part files are read on `pool` (requests, for a URL output).
std::vector<ShardPart> GatherFinishedShards(const std::string& output, const ConvertPlan& plan,
                                            ThreadPool& pool, ConvertSummary* summary) {
  const OutputListing listing = ListOutput(output);
  std::vector<std::optional<ShardPart>> loaded(plan.shards.size());
  ParallelFor(pool, plan.shards.size(),
              [&](size_t i) { loaded[i] = LoadFinishedPart(output, listing, plan.shards[i]); });
  std::vector<ShardPart> parts;
  for (size_t i = 0; i < plan.shards.size(); ++i) {
    const PlannedShard& shard = plan.shards[i];
    std::optional<ShardPart>& part = loaded[i];
    if (!part) continue;
    CountFinishedShard(shard, *part, summary);
    parts.push_back(std::move(*part));
  }
  summary->shards_total = plan.shards.size();
  summary->complete = summary->shards_done == summary->shards_total;
  return parts;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

ConvertSummary RunConvert(const ConvertOptions& options, const ConvertProgressCallback& progress) {
  if (options.finalize) return FinalizeConvert(options);
  auto start = std::chrono::steady_clock::now();
  CheckConvertOptions(options);
  const int threads = options.threads > 0 ? options.threads : AvailableCpus();
  ThreadPool pool(threads);

  // 1. Inputs, their sizes, and the plan, checked against the output's.
  PlannedConversion conversion = PlanConversion(options, pool);
  CheckOrWritePlan(options.output, conversion.plan_document);
  // 2.-3. This worker's shards, written in `work` (the output, or the staging folder of
  //        a URL output).
  ConvertSummary summary;
  const std::string work = WorkFolder(options);
  std::vector<const PlannedShard*> todo = ShardsToConvert(options, conversion, work, &summary);
  ConvertShards(options, conversion, todo, work, pool, threads, progress, &summary);
  // 4. What is done; a one-worker run finishes the data set (several workers leave that
  //    to the finalize step, so that none races another for the summary files).
  std::vector<ShardPart> parts =
      GatherFinishedShards(options.output, conversion.plan, pool, &summary);
  summary.inputs = conversion.inputs.size();
  if (summary.complete && options.num_workers == 1) {
    WriteDatasetFiles(options.output, conversion, parts);
  } else {
    summary.complete = false;
  }
  summary.seconds = SecondsSince(start);
  return summary;
}

std::string DescribeRestartMarkers(const ConvertSummary& summary, int interval) {
  std::string line = "restart markers (every " + std::to_string(interval) + " MCUs) added to " +
                     std::to_string(summary.restart_markers_added) + " of " +
                     std::to_string(summary.written) + " JPEGs";
  uint64_t failed = 0;
  std::string reasons;
  for (const auto& [reason, n] : summary.restart_failures) {
    failed += n;
    reasons += (reasons.empty() ? "" : ", ") + reason + " (" + std::to_string(n) + ")";
  }
  if (failed > 0) line += "; " + std::to_string(failed) + " stored as given: " + reasons;
  return line;
}

}  // namespace imgpipe
