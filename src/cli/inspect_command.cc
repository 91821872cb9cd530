#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/data_options.h"
#include "convert/tfrecord_inspector.h"
#include "util/file.h"

namespace imgpipe::cli {
namespace {

struct InspectFlags {
  std::vector<std::string> files;
  std::string on_error = "fail";
  bool json = false;
  int max_classes = 50;
  pipeline::DataSourceOptions source;
};

nlohmann::json FeaturesJson(const std::vector<FeatureDescription>& features) {
  nlohmann::json out = nlohmann::json::array();
  for (const FeatureDescription& f : features) {
    nlohmann::json item{{"key", f.key}, {"kind", f.kind}, {"length", f.length}};
    if (f.steps) item["steps"] = f.steps;
    out.push_back(item);
  }
  return out;
}

nlohmann::json InspectionJson(const FileInspection& r) {
  nlohmann::json errors = nlohmann::json::array();
  for (const CorruptRecord& e : r.errors) errors.push_back({{"offset", e.offset}, {"reason", e.reason}});
  nlohmann::json classes = nlohmann::json::array();
  for (auto& [label, n] : r.class_counts) {
    nlohmann::json c{{"label", label}, {"count", n}};
    if (auto it = r.class_names.find(label); it != r.class_names.end()) c["text"] = it->second;
    classes.push_back(c);
  }
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
    out["classes"] = classes;
  }
  return out;
}

void PrintFeatures(const char* title, const std::vector<FeatureDescription>& features) {
  if (features.empty()) return;
  std::printf("  %s:\n", title);
  for (const FeatureDescription& f : features) {
    std::printf("    %-28s %-6s x%zu", f.key.c_str(), f.kind.c_str(), f.length);
    if (f.steps) std::printf(" over %zu steps", f.steps);
    std::printf("\n");
  }
}

void PrintInspection(const FileInspection& r, int max_classes) {
  std::printf("%s\n", r.path.c_str());
  std::printf("  records: %llu  compression: %s  file bytes: %llu  record bytes: %llu\n",
              static_cast<unsigned long long>(r.records), CompressionName(r.compression),
              static_cast<unsigned long long>(r.file_bytes),
              static_cast<unsigned long long>(r.data_bytes));
  std::printf("  crc errors: %llu  index: %s\n", static_cast<unsigned long long>(r.crc_errors),
              r.index_status.c_str());
  for (const CorruptRecord& e : r.errors) {
    std::printf("  corrupt at offset %llu: %s\n", static_cast<unsigned long long>(e.offset),
                e.reason.c_str());
  }
  if (!r.fatal_error.empty()) std::printf("  error: %s\n", r.fatal_error.c_str());
  if (r.unparsable_records) {
    std::printf("  records that do not parse as %s: %llu\n", r.record_type.c_str(),
                static_cast<unsigned long long>(r.unparsable_records));
  }
  std::printf("  record type: %s\n", r.record_type.c_str());
  PrintFeatures(r.record_type == "sequence_example" ? "context" : "features", r.features);
  PrintFeatures("feature lists", r.feature_lists);
  if (!r.label_key.empty()) {
    std::printf("  classes (%s): %zu\n", r.label_key.c_str(), r.class_counts.size());
    int shown = 0;
    for (auto& [label, n] : r.class_counts) {
      if (shown++ == max_classes) {
        std::printf("    ... %zu more\n", r.class_counts.size() - max_classes);
        break;
      }
      auto it = r.class_names.find(label);
      std::printf("    %6lld %-24s %llu\n", static_cast<long long>(label),
                  it == r.class_names.end() ? "" : it->second.c_str(),
                  static_cast<unsigned long long>(n));
    }
  }
}

// A data folder's layout, keys, labels and classes (as JSON: one object).
nlohmann::json SourceJson(const pipeline::DataSource& s) {
  nlohmann::json out{{"data", s.data}, {"layout", pipeline::LayoutName(s.layout)}};
  if (s.layout == pipeline::DataLayout::kImageFolder) return out;
  nlohmann::json files = nlohmann::json::array();
  for (const pipeline::TfRecordFile& f : s.files) files.push_back({{"path", f.path}, {"split", f.split}});
  out.update({{"files", files},
              {"image_key", s.schema.image_key},
              {"label_key", s.schema.label_key},
              {"label_offset", s.schema.label_offset},
              {"label_offset_reason", s.label_offset_reason},
              {"classes", s.schema.num_classes},
              {"class_names", s.class_names},
              {"class_names_from", s.class_names_from}});
  return out;
}

// The TFRecord files to inspect for argument `arg`: itself, or a data folder's shards
// after printing what the folder is (a folder named like a shard is reported as a bad
// file).
std::vector<std::string> FilesOfArgument(const std::string& arg, const InspectFlags& flags) {
  if (!IsDirectory(arg) || pipeline::HasTfRecordName(BaseName(arg))) return {arg};
  const pipeline::DataSource source = pipeline::ResolveDataSource(arg, flags.source);
  if (flags.json) {
    std::printf("%s\n", SourceJson(source).dump().c_str());
  } else {
    std::printf("%s\n", source.Describe().c_str());
  }
  return source.layout == pipeline::DataLayout::kImageFolder ? std::vector<std::string>{}
                                                            : source.Paths();
}

}  // namespace

void AddInspectCommand(CLI::App& app) {
  auto flags = std::make_shared<InspectFlags>();
  CLI::App* cmd = app.add_subcommand(
      "inspect", "Count, check and describe TFRecord files (plain, GZIP or ZLIB)");
  cmd->add_option("files", flags->files,
                  "TFRecord files, or data folders (their layout, keys and classes, then their "
                  "shards)")->required();
  AddDataSourceOptions(cmd, flags->source);
  cmd->add_option("--on-error", flags->on_error,
                  "Corrupt records: fail (stop at the first) or skip (count all and go on)")
      ->capture_default_str()->check(CLI::IsMember({"fail", "skip"}));
  cmd->add_option("--max-classes", flags->max_classes, "Classes to list in the histogram")
      ->capture_default_str();
  cmd->add_flag("--json", flags->json, "One JSON object per file, one per line");
  cmd->callback([flags] {
    InspectOptions options;
    options.policy = ParseErrorPolicy(flags->on_error);
    bool all_ok = true;
    std::vector<std::string> files;
    for (const std::string& arg : flags->files) {
      for (std::string& file : FilesOfArgument(arg, *flags)) files.push_back(std::move(file));
    }
    for (const std::string& file : files) {
      FileInspection r = InspectTfRecordFile(file, options);
      all_ok = all_ok && r.ok();
      if (flags->json) {
        std::printf("%s\n", InspectionJson(r).dump().c_str());
      } else {
        PrintInspection(r, flags->max_classes);
      }
    }
    std::fflush(stdout);
    if (!all_ok) throw CLI::RuntimeError(2);
  });
}

}  // namespace imgpipe::cli
