// The output folder of `imgpipe convert` and its bookkeeping, shared by the workers
// (RunConvert) and the finalize step (FinalizeConvert):
//   <split>-NNNNN-of-MMMMM.tfrecord      shards (ConvertPlan decides their contents)
//   <split>-NNNNN-of-MMMMM.tfrecord.idx  index files (record/tfrecord_format.h)
//   labels.txt                          class names, one per line, line i = label i
//   dataset.json                        counts per split and class, shard list
//   rejects.csv                         path,reason for every input not written
//   .imgpipe/plan.json                  what the run was asked to do (checked on resume)
//   .imgpipe/<shard>.json               a finished shard's counts, rejects and the
//                                       CRC-32C of the shard and of its index
// Every file is written under a temporary name and renamed into place, so a final
// name never holds a partial file. A shard is renamed into place after its index and
// part file are written; it counts as done when all three are there and agree (sizes
// and counts; the checksums are checked by the finalize step, which reads the files).
// labels.txt, dataset.json and rejects.csv are written by a one-worker run when it
// finishes the last shard, or by the finalize step; never by one of several workers.
//
// The output may also be an s3:// or gs:// prefix (io/storage.h), with the same files as
// objects. A worker then writes its shards into a local staging folder (the layout
// above, holding only the shards in progress and .imgpipe/plan.json) and uploads each
// finished shard in the same order: index, part file, shard last, each object appearing
// only whole, so that a shard object always has its index and part objects; then it
// removes the local copies. The bookkeeping below (plan, finished shards, summary files)
// reads and writes the output through io/storage.h, so folders and prefixes are alike;
// only the local folders have temporaries to clear.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "convert/convert_plan.h"
#include "convert/converter.h"
#include "convert/record_inputs.h"
#include "pipeline/input_list.h"
#include "util/thread_pool.h"

namespace imgpipe {

// Throws Error, naming the command-line option, for the bad options RunConvert lists.
void CheckConvertOptions(const ConvertOptions& options);

// The inputs of a conversion, their sizes, its plan and plan.json's document: what
// every worker and the finalize step compute alike from the same options.
struct PlannedConversion {
  InputList inputs;             // for TFRecord input: one "FILE@OFFSET" per record
  RecordInputs records;         // TFRecord input's records; empty for images
  std::vector<uint64_t> sizes;  // file size of each input (0 when unreadable)
  ConvertPlan plan;
  nlohmann::json plan_document;
};

// Lists the inputs (a manifest may be at a URL), reads their sizes on `pool` and makes
// the plan.
PlannedConversion PlanConversion(const ConvertOptions& options, ThreadPool& pool);

// Records plan.json in `output` (a folder, made if missing, or a URL), or checks that the
// one there is the same plan; throws Error naming the options that differ.
void CheckOrWritePlan(const std::string& output, const nlohmann::json& plan_document);

// The local folder this worker writes its shards into: `options.output` itself, or for a
// URL output `options.staging_dir`, by default DefaultStagingFolder(output).
std::string WorkFolder(const ConvertOptions& options);

// "$TMPDIR/imgpipe-staging/<the URL, made a file name>-<its hash>" (TMPDIR unset: /tmp):
// the same folder for the same URL, so that a resumed run finds what an earlier one staged.
std::string DefaultStagingFolder(const std::string& url);

// Records plan.json in the staging folder `staging` (made if missing) unless the same plan
// is there; returns whether it was there, i.e. whether the shards staged in `staging` are
// of this plan. When it was not, removes the shards, indexes and part files staged there.
bool CheckOrWriteStagingPlan(const std::string& staging, const nlohmann::json& plan_document);

// Throws Error when `output` has no plan.json, or one that differs from this plan.
void CheckPlanExists(const std::string& output, const nlohmann::json& plan_document);

// `output`'s state folder (".imgpipe").
std::string StateFolder(const std::string& output);

// ".imgpipe/<shard file name>.json" in `output`.
std::string PartPath(const std::string& output, const PlannedShard& shard);

// Removes leftovers that killed processes left of the files every worker may write
// (plan.json, the summaries); those of running processes stay.
void RemoveDeadSummaryTemporaries(const std::string& output);

// The files of an output folder (or prefix) and of its state folder with their sizes,
// listed once, so that checking many shards costs a listing and not requests per file.
struct OutputListing {
  std::map<std::string, uint64_t> files;
  std::map<std::string, uint64_t> state_files;
};

// Lists `output` (a folder or URL; missing: empty) and its state folder.
OutputListing ListOutput(const std::string& output);

// Removes a killed run's leftovers (temporaries) of `shard`, its index and part file
// from the local folder `output`, as `listing` lists it.
void RemoveShardTemporaries(const std::string& output, const OutputListing& listing,
                            const PlannedShard& shard);

// Removes `shard`, then its index and part file, from `output` (a folder or URL), those
// of them that `listing` lists.
void RemoveShardFiles(const std::string& output, const OutputListing& listing,
                      const PlannedShard& shard);

// Uploads the finished `shard` from the staging folder `staging` to the URL `output`
// with `upload` (by default UploadStorageFile): its index, its part file, then the shard;
// then removes the three local files. Throws what `upload` throws (the local files stay).
void UploadShard(const std::string& staging, const std::string& output,
                 const PlannedShard& shard, ConvertOptions::Uploader upload);

// A finished shard, as its part file records it.
struct ShardPart {
  uint64_t records = 0;
  uint64_t bytes = 0;                  // of the .tfrecord file
  uint64_t restart_markers_added = 0;  // records whose JPEG was given restart markers
  // (path, why) for each JPEG stored as given because its restart-marker rewrite failed.
  std::vector<std::pair<std::string, std::string>> restart_failures;
  // (class, records) for each class with records, by class: flat, because every
  // shard's part is held until the summary is written (10M images in 340 shards of
  // ~9,500 classes each: 52 MB this way, ~150 MB as map nodes).
  std::vector<std::pair<int, uint64_t>> per_class;
  std::vector<std::pair<std::string, std::string>> rejects;  // path, reason
  // CRC-32C of the .tfrecord and .idx files; absent in part files written before
  // they were recorded (such shards are checked by size and count only).
  std::optional<uint32_t> shard_crc32c;
  std::optional<uint32_t> index_crc32c;

  nlohmann::json ToJson(const PlannedShard& shard) const;
  static ShardPart FromJson(const nlohmann::json& doc);
};

// Writes `part` as `shard`'s part file in the local folder `output`.
void WriteShardPart(const std::string& output, const PlannedShard& shard, const ShardPart& part);

// The shard's part when it is done: its part file, the shard and its index are in
// `output` (a folder or URL, as `listing` lists it), the shard's size is the recorded one
// and records + rejects = its inputs. Reads the part file; throws IoError, HttpError.
std::optional<ShardPart> LoadFinishedPart(const std::string& output, const OutputListing& listing,
                                          const PlannedShard& shard);

// Counts `part`, the finished `shard`, into `summary` (shards_done, written, rejected,
// bytes, the shard list).
void CountFinishedShard(const PlannedShard& shard, const ShardPart& part, ConvertSummary* summary);

// Writes labels.txt, rejects.csv and dataset.json (last) to `output`, a folder or URL,
// from every shard's part (`parts[i]` of `plan.shards[i]`); nothing when dataset.json
// already holds the same text (a resumed run of a finished conversion). Throws Error
// unless written + rejected = inputs.
void WriteDatasetFiles(const std::string& output, const PlannedConversion& conversion,
                       const std::vector<ShardPart>& parts);

}  // namespace imgpipe
