#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/data_options.h"
#include "convert/summary_json.h"
#include "convert/tfrecord_inspector.h"

namespace imgpipe::cli {
namespace {

struct InspectFlags {
  std::vector<std::string> files;
  std::string on_error = ErrorPolicyName(InspectOptions{}.policy);
  bool json = false;
  int max_classes = 50;
  pipeline::DataSourceOptions source;
};

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

}  // namespace

void AddInspectCommand(CLI::App& app) {
  auto flags = std::make_shared<InspectFlags>();
  CLI::App* cmd = app.add_subcommand(
      "inspect", "Count, check and describe TFRecord files (plain, GZIP or ZLIB)");
  cmd->add_option("files", flags->files,
                  "TFRecord files, or data folders (their layout, keys and classes, then their "
                  "shards)")->required();
  AddDataSourceOptions(cmd, flags->source);
  AddStorageCacheOptions(cmd);
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
      InspectTarget target = ResolveInspectTarget(arg, flags->source);
      if (target.source) {
        const std::string text = flags->json ? DataSourceJson(*target.source) : target.source->Describe();
        std::printf("%s\n", text.c_str());
      }
      for (std::string& file : target.files) files.push_back(std::move(file));
    }
    for (const std::string& file : files) {
      FileInspection r = InspectTfRecordFile(file, options);
      all_ok = all_ok && r.ok();
      if (flags->json) {
        std::printf("%s\n", InspectionJson(r).c_str());
      } else {
        PrintInspection(r, flags->max_classes);
      }
    }
    std::fflush(stdout);
    if (!all_ok) throw CLI::RuntimeError(2);
  });
}

}  // namespace imgpipe::cli
