#include "extract/extract_plan.h"

#include <algorithm>

#include "io/storage.h"
#include "pipeline/tfrecord_files.h"
#include "record/crc32c.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe::extract {
namespace {

// Whether `data` is read as TFRecord input: a folder (of shards, or else of class
// sub-folders, see ResolveDataSource), a TFRecord file, a glob pattern, or a URL of any.
bool IsDataSource(const std::string& data) {
  if (IsUrl(data) || IsDirectory(data)) return true;
  if (!PathExists(data)) return data.find_first_of("*?[") != std::string::npos;
  return pipeline::HasTfRecordName(BaseName(data)) || pipeline::HasTfRecordFrame(data);
}

}  // namespace

ExtractPlan MakeExtractPlan(const std::string& data, const std::string& split, size_t shard_rows,
                            const pipeline::DataSourceOptions& options) {
  if (shard_rows == 0) throw Error("--shard-rows must be at least 1");
  ExtractPlan plan;
  plan.data = data;
  if (IsDataSource(data)) {
    const pipeline::DataSource source = pipeline::ResolveDataSource(data, options);
    if (source.layout != pipeline::DataLayout::kImageFolder) {
      plan.kind = InputKind::kTfRecord;
      plan.schema = source.schema;
      plan.description = source.Describe();
      const std::vector<std::string> files = source.Paths(split);
      for (size_t i = 0; i < files.size(); ++i) {
        PlannedShard shard;
        shard.index = i;
        shard.tfrecord_file = files[i];
        shard.tfrecord_bytes = StorageSize(files[i]);
        plan.shards.push_back(shard);
      }
      return plan;
    }
  }
  if (!split.empty()) {
    throw Error(data + ": --split selects TFRecord files, but this holds no TFRecord files");
  }
  plan.kind = InputKind::kImages;
  plan.images = ListInputs(data);
  for (size_t first = 0; first < plan.images.size(); first += shard_rows) {
    PlannedShard shard;
    shard.index = plan.shards.size();
    shard.first_image = first;
    shard.image_count = std::min(shard_rows, plan.images.size() - first);
    uint32_t crc = 0;
    for (size_t i = first; i < first + shard.image_count; ++i) {
      std::string key = std::string(plan.images.name(i)) + '\0' +
                        std::to_string(plan.images.label(i)) + '\n';
      crc = crc32c::Extend(crc, key.data(), key.size());
    }
    shard.images_crc = crc;
    plan.shards.push_back(shard);
  }
  return plan;
}

nlohmann::json ShardInputJson(const ExtractPlan& plan, const PlannedShard& shard) {
  if (plan.kind == InputKind::kTfRecord) {
    return {{"tfrecord", BaseName(shard.tfrecord_file)}, {"bytes", shard.tfrecord_bytes}};
  }
  return {{"images", {shard.first_image, shard.image_count}}, {"crc32c", shard.images_crc}};
}

}  // namespace imgpipe::extract
