// `imgpipe convert`: an image folder or manifest -> sharded TFRecord files of
// tf.train.Example records, with index files, labels, a summary and a reject list
// (the output folder, or s3:// / gs:// prefix: convert/convert_output.h). One process,
// or several workers that each convert their shards and a finalize step that checks them
// all and writes the summary files.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "convert/convert_plan.h"
#include "convert/image_example.h"
#include "util/file.h"

namespace imgpipe {

struct ConvertOptions {
  std::string input;   // folder (one sub-folder per class) or .csv/.jsonl manifest (a
                       // path or an s3:// / gs:// / http(s):// URL)
  std::string output;  // output folder (created), or an s3:// or gs:// prefix
  // For a URL output: the local folder shards are written into before they are uploaded
  // (one shard at a time, two while one uploads); "": DefaultStagingFolder(output).
  std::string staging_dir;
  PlanOptions plan;
  ImageExampleOptions image;
  int threads = 0;     // 0: all available CPUs
  bool resume = false; // keep shards already done by an earlier run of the same plan
  int worker = 0;      // this process converts the shards i with i % num_workers == worker
  int num_workers = 1;
  // Instead of converting: check every planned shard (present, counts, the CRC-32C of
  // the shard and its index as their worker recorded it) and write the summary files.
  bool finalize = false;
  // Makes the file each shard is written to (tests substitute one that fails, e.g.
  // with ENOSPC); by default OpenWritableFile.
  AtomicFileWriter::Opener shard_opener = nullptr;
  // Copies a finished file of the staging folder to its URL (tests substitute one that
  // fails); by default UploadStorageFile.
  using Uploader = void (*)(const std::string& local, const std::string& url);
  Uploader uploader = nullptr;
};

// Progress after each image: images done (written or rejected) and input bytes read,
// out of this worker's totals.
struct ConvertProgress {
  uint64_t done = 0;
  uint64_t total = 0;
  uint64_t bytes_done = 0;
  uint64_t bytes_total = 0;
};
using ConvertProgressCallback = std::function<void(const ConvertProgress&)>;

struct ShardSummary {
  std::string file_name;
  std::string split;
  uint64_t records = 0;
  uint64_t bytes = 0;  // size of the .tfrecord file
};

struct ConvertSummary {
  uint64_t inputs = 0;          // all inputs of the plan
  uint64_t written = 0;         // records in finished shards
  uint64_t rejected = 0;        // rejects in finished shards
  uint64_t restart_markers_added = 0;  // records in finished shards whose JPEG was
                                       // rewritten with restart markers
  // Why JPEGs of finished shards that needed restart markers were stored as given, and
  // how many for each reason (the paths: dataset.json's restart_failures).
  std::map<std::string, uint64_t> restart_failures;
  uint64_t shards_total = 0;
  uint64_t shards_done = 0;     // finished, by any worker or earlier run
  uint64_t shards_this_run = 0; // converted by this call
  uint64_t shards_resumed = 0;  // kept from an earlier run
  uint64_t shards_uploaded = 0; // uploaded to a URL output by this call (converted now,
                                // or staged by an earlier run that stopped before)
  uint64_t input_bytes_this_run = 0;
  uint64_t output_bytes = 0;    // bytes of finished shards
  bool complete = false;        // every shard done; dataset.json etc. written
  double seconds = 0;
  std::vector<ShardSummary> shards;  // finished shards
};

// Runs this worker's part of a conversion. A one-worker run that leaves every shard
// done writes labels.txt, dataset.json and rejects.csv (checking written + rejected =
// inputs); with several workers, only the finalize step does. With `finalize` set,
// runs the finalize step instead (see FinalizeConvert).
// Throws Error on bad options (worker outside [0, num_workers), no output, an http(s)
// output, staging_dir with a local output, threads < 0, jpeg_quality outside [1, 100],
// jpeg_restart_interval outside [0, kMaxJpegRestartInterval], min_shards < 1), on a
// plan mismatch with an existing output, and on I/O failure (no partial file is left under a final name,
// and no shard object without its index and part objects).
ConvertSummary RunConvert(const ConvertOptions& options,
                          const ConvertProgressCallback& progress = nullptr);

// The finalize step of a conversion split over workers: with the workers' options,
// checks that every planned shard is done and reads each shard and index file to check
// its CRC-32C against the one its worker recorded (on `options.threads` threads), then
// writes labels.txt, dataset.json and rejects.csv. Throws Error naming each shard that
// is missing or does not check out and the workers (of options.num_workers) to rerun;
// then no summary file is written.
ConvertSummary FinalizeConvert(const ConvertOptions& options);

// The summary's line on restart markers: "restart markers (every 1 MCUs) added to N of
// M JPEGs", then "; K stored as given: REASON (n), ..." when some rewrites failed.
std::string DescribeRestartMarkers(const ConvertSummary& summary, int interval);

}  // namespace imgpipe
