// `imgpipe extract`: runs a model over every record of a TFRecord folder or image
// folder and writes one row of features per record into .npy shards (see
// extract_plan.h for the row order and extract_output.h for the output folder).
//
// Each worker extracts the shards i with i % num_workers == worker, one shard at a
// time: the records go through the eval preset on the pipeline's threads (a record
// that cannot be read or decoded becomes a zero row and a listed failure), batches
// go through the model, and the shard's files are written atomically. A one-worker
// run that finds every shard finished writes features.json and failures.csv; with
// several workers, the finalize step does (FinalizeExtract), so that none races another.
//
// This header is libtorch-free; the model side is in feature_model.h.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "image/presets.h"
#include "pipeline/data_source.h"

namespace imgpipe::extract {

struct ExtractOptions {
  std::string data;    // --data (pipeline/data_source.h), or an image manifest
  std::string split;   // TFRecord input: only split SPLIT's files; empty: every file
  pipeline::DataSourceOptions source;  // --image-key, --label-key, --label-offset
  std::string model;   // imgpipe checkpoint or TorchScript file
  std::string output;  // output folder (created)
  std::string layer = "penultimate";  // "penultimate", "logits" or a submodule name
  std::string dtype = "float32";      // of the features: float32 or float16
  size_t batch_size = 64;
  int image_size = 0;        // eval crop; 0: the checkpoint's, 224 for TorchScript
  bool draft_decode = EvalPreset{}.draft_decode;  // the eval preset's (presets.h)
  size_t shard_rows = 4096;  // image input: rows per output shard
  int threads = 0;           // pipeline CPU budget and libtorch threads; 0: all CPUs
  bool resume = false;       // keep shards finished by an earlier run of the same plan
  int worker = 0;            // this process extracts shards i % num_workers == worker
  int num_workers = 1;
  // Instead of extracting: check every shard of the output folder (finished, the
  // CRC-32C of its arrays) and write the summary files (FinalizeExtract).
  bool finalize = false;
};

// Progress after each batch and each shard, of this process in this run.
struct ExtractProgress {
  uint64_t rows_done = 0;
  size_t shards_done = 0;
  size_t shards_total = 0;  // the shards this process extracts in this run
};
using ExtractProgressCallback = std::function<void(const ExtractProgress&)>;

struct ExtractSummary {
  int64_t dimension = 0;
  size_t shards_total = 0;
  size_t shards_done = 0;      // finished, by any process or earlier run
  size_t shards_this_run = 0;  // extracted by this call (or its worker processes)
  size_t shards_resumed = 0;   // kept from an earlier run
  uint64_t rows_this_run = 0;
  uint64_t failures_this_run = 0;
  bool complete = false;       // every shard finished; features.json written
  uint64_t rows_total = 0;     // when complete: rows in all shards
  uint64_t failures_total = 0; // when complete
  double seconds = 0;          // wall time of this run's extraction
  double images_per_s = 0;     // rows_this_run / seconds
  // Of the time spent extracting shards, the part the model waited for its next batch.
  double input_wait_fraction = 0;
};

// Runs this worker's part of an extraction (see above). Throws Error on bad options,
// an unreadable model, a plan mismatch with an existing output folder, a corrupt
// TFRecord stretch (DataError naming the file and offset), or an I/O failure; no
// partial file is ever left under a final name.
ExtractSummary RunExtract(const ExtractOptions& options,
                          const ExtractProgressCallback& progress = nullptr);

// The finalize step of an extraction split over workers (libtorch-free: it loads no
// model): checks that options.output holds an extraction of these options' data,
// split, model, layer and dtype, that every shard is finished and that its arrays'
// CRC-32C are the recorded ones (reading them on options.threads threads), then
// writes features.json and failures.csv. Throws Error naming each shard that does not
// check out and the workers (of options.num_workers) to rerun; then writes nothing.
ExtractSummary FinalizeExtract(const ExtractOptions& options);

// Runs an extraction as `nproc` local processes: this one is worker 0 (RunExtract) and
// `worker_command(i, threads)` (a full command line) starts worker i for i in
// 1..nproc-1. Each process gets options.threads threads, or (when 0) an equal share
// of the CPUs. After all succeed, writes features.json; throws Error naming the first
// worker that failed (the others are still waited for). The summary counts all
// workers' shards.
using WorkerCommand = std::function<std::vector<std::string>(int worker, int threads)>;
ExtractSummary RunExtractProcesses(const ExtractOptions& options, int nproc,
                                   const WorkerCommand& worker_command,
                                   const ExtractProgressCallback& progress = nullptr);

}  // namespace imgpipe::extract
