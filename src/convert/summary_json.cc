#include "convert/summary_json.h"

#include <nlohmann/json.hpp>

#include "io/storage.h"
#include "pipeline/tfrecord_files.h"
#include "util/file.h"

namespace imgpipe {
namespace {

nlohmann::json FeaturesJson(const std::vector<FeatureDescription>& features) {
  nlohmann::json out = nlohmann::json::array();
  for (const FeatureDescription& f : features) {
    nlohmann::json item{{"key", f.key}, {"kind", f.kind}, {"length", f.length}};
    if (f.steps) item["steps"] = f.steps;
    out.push_back(item);
  }
  return out;
}

nlohmann::json ClassesJson(const FileInspection& r) {
  nlohmann::json classes = nlohmann::json::array();
  for (auto& [label, n] : r.class_counts) {
    nlohmann::json c{{"label", label}, {"count", n}};
    if (auto it = r.class_names.find(label); it != r.class_names.end()) c["text"] = it->second;
    classes.push_back(c);
  }
  return classes;
}

}  // namespace

std::string ConvertSummaryJson(const ConvertSummary& s) {
  nlohmann::json shards = nlohmann::json::array();
  for (const ShardSummary& shard : s.shards) {
    shards.push_back({{"file", shard.file_name}, {"split", shard.split},
                      {"records", shard.records}, {"bytes", shard.bytes}});
  }
  const double seconds = s.seconds > 0 ? s.seconds : 1e-9;
  const nlohmann::json out{{"inputs", s.inputs},
                           {"written", s.written},
                           {"rejected", s.rejected},
                           {"restart_markers_added", s.restart_markers_added},
                           {"restart_failures", s.restart_failures},
                           {"complete", s.complete},
                           {"shards_total", s.shards_total},
                           {"shards_done", s.shards_done},
                           {"shards_this_run", s.shards_this_run},
                           {"shards_resumed", s.shards_resumed},
                           {"shards_uploaded", s.shards_uploaded},
                           {"output_bytes", s.output_bytes},
                           {"seconds", s.seconds},
                           {"input_mb_per_s", s.input_bytes_this_run / seconds / 1e6},
                           {"shards", shards}};
  return out.dump();
}

std::string InspectionJson(const FileInspection& r) {
  nlohmann::json errors = nlohmann::json::array();
  for (const CorruptRecord& e : r.errors) errors.push_back({{"offset", e.offset}, {"reason", e.reason}});
  nlohmann::json out{{"path", r.path},
                     {"ok", r.ok()},
                     {"records", r.records},
                     {"compression", CompressionName(r.compression)},
                     {"file_bytes", r.file_bytes},
                     {"data_bytes", r.data_bytes},
                     {"crc_errors", r.crc_errors},
                     {"errors", errors},
                     {"record_type", r.record_type},
                     {"features", FeaturesJson(r.features)},
                     {"index", r.index_status}};
  if (r.record_type == "sequence_example") out["feature_lists"] = FeaturesJson(r.feature_lists);
  if (!r.fatal_error.empty()) out["error"] = r.fatal_error;
  if (r.unparsable_records) out["unparsable_records"] = r.unparsable_records;
  if (!r.label_key.empty()) {
    out["label_key"] = r.label_key;
    out["classes"] = ClassesJson(r);
  }
  return out.dump();
}

std::string DataSourceJson(const pipeline::DataSource& s) {
  nlohmann::json out{{"data", s.data}, {"layout", pipeline::LayoutName(s.layout)}};
  if (s.layout == pipeline::DataLayout::kImageFolder) return out.dump();
  nlohmann::json files = nlohmann::json::array();
  for (const pipeline::TfRecordFile& f : s.files) files.push_back({{"path", f.path}, {"split", f.split}});
  out.update({{"files", files},
              {"image_key", s.schema.image_key},
              {"label_key", s.schema.label_key},
              {"label_offset", s.schema.label_offset},
              {"label_offset_reason", s.label_offset_reason},
              {"classes", s.classes_from.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.schema.num_classes)},
              {"classes_from", s.classes_from},
              {"labels_read", {{"records", s.scanned_records},
                               {"min", s.min_label},
                               {"max", s.max_label},
                               {"all", s.labels.complete()},
                               {"kept_in", s.labels.cache_path}}},
              {"class_names", s.class_names},
              {"class_names_from", s.class_names_from}});
  return out.dump();
}

InspectTarget ResolveInspectTarget(const std::string& arg, const pipeline::DataSourceOptions& options) {
  InspectTarget target;
  if (pipeline::HasTfRecordName(BaseName(arg)) || !IsStorageFolder(arg)) {
    target.files = {arg};
    return target;
  }
  target.source = pipeline::ResolveDataSource(arg, options);
  if (target.source->layout != pipeline::DataLayout::kImageFolder) target.files = target.source->Paths();
  return target;
}

}  // namespace imgpipe
