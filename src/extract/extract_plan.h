// What `imgpipe extract` reads and which output shard each input record goes to. The
// plan depends only on the input listing and --shard-rows (never on workers, threads
// or timing), so every worker and every resumed run computes the same one.
//
// Row order:
//   TFRecord input (--data as pipeline/data_source.h resolves it; with --split, only
//     that split's files): files sorted bytewise by name; output shard k is input file
//     k, one row per record in file order.
//   Image folder (one sub-folder per class) or CSV/JSONL manifest: images sorted by
//     their name (path relative to the folder); output shard k is images
//     [k * shard_rows, (k + 1) * shard_rows).
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pipeline/data_source.h"
#include "pipeline/input_list.h"
#include "util/worker_shards.h"

namespace imgpipe::extract {

enum class InputKind { kTfRecord, kImages };

struct PlannedShard {
  size_t index = 0;
  std::string tfrecord_file;  // kTfRecord: the input file's path
  uint64_t tfrecord_bytes = 0;
  size_t first_image = 0;     // kImages: images [first_image, first_image + image_count)
  size_t image_count = 0;
  uint32_t images_crc = 0;    // kImages: CRC32C of those images' names and labels
};

struct ExtractPlan {
  InputKind kind = InputKind::kTfRecord;
  std::string data;    // --data as given
  InputList images;    // kImages: every image, sorted by name
  pipeline::RecordSchema schema;  // kTfRecord: how its records are read
  std::string description;        // kTfRecord: DataSource::Describe(), for the user
  std::vector<PlannedShard> shards;
};

// The plan for --data `data`: TFRecord shards as ResolveDataSource(data, options) finds
// them (only split `split`'s when not empty), else an image folder or manifest
// (ListInputs). Throws Error when there is nothing to read, `split` has no files, or
// `split` is given for images.
ExtractPlan MakeExtractPlan(const std::string& data, const std::string& split, size_t shard_rows,
                            const pipeline::DataSourceOptions& options = {});

// What shard `shard` reads, as JSON: {"tfrecord": NAME, "bytes": N} or
// {"images": [first, count], "crc32c": C}. Equal JSON means equal input.
nlohmann::json ShardInputJson(const ExtractPlan& plan, const PlannedShard& shard);

}  // namespace imgpipe::extract
