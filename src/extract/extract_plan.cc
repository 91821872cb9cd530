#include "extract/extract_plan.h"

#include <algorithm>

#include "record/crc32c.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe::extract {
namespace {

// Whether `s` ends with `suffix`.
bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The *.tfrecord files of `dir` (names starting with "SPLIT-" when `split` is set),
// sorted bytewise by name.
std::vector<std::string> TfRecordFilesIn(const std::string& dir, const std::string& split) {
  std::vector<std::string> files;
  for (const std::string& name : ListDirectory(dir)) {
    if (!EndsWith(name, ".tfrecord") || name[0] == '.') continue;
    if (!split.empty() && name.rfind(split + "-", 0) != 0) continue;
    files.push_back(JoinPath(dir, name));
  }
  return files;  // ListDirectory sorts
}

}  // namespace

ExtractPlan MakeExtractPlan(const std::string& data, const std::string& split, size_t shard_rows) {
  if (shard_rows == 0) throw Error("--shard-rows must be at least 1");
  ExtractPlan plan;
  plan.data = data;
  if (IsDirectory(data) && !TfRecordFilesIn(data, "").empty()) {
    plan.kind = InputKind::kTfRecord;
    std::vector<std::string> files = TfRecordFilesIn(data, split);
    if (files.empty()) {
      throw Error(data + ": no " + split + "-*.tfrecord files (--split " + split + ")");
    }
    for (size_t i = 0; i < files.size(); ++i) {
      PlannedShard shard;
      shard.index = i;
      shard.tfrecord_file = files[i];
      shard.tfrecord_bytes = FileSize(files[i]);
      plan.shards.push_back(shard);
    }
    return plan;
  }
  if (!split.empty()) {
    throw Error(data + ": --split selects TFRecord files, but this holds no *.tfrecord files");
  }
  plan.kind = InputKind::kImages;
  plan.images = ListInputs(data);
  for (size_t first = 0; first < plan.images.images.size(); first += shard_rows) {
    PlannedShard shard;
    shard.index = plan.shards.size();
    shard.first_image = first;
    shard.image_count = std::min(shard_rows, plan.images.images.size() - first);
    uint32_t crc = 0;
    for (size_t i = first; i < first + shard.image_count; ++i) {
      const InputImage& image = plan.images.images[i];
      std::string key = image.name + '\0' + std::to_string(image.label) + '\n';
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
