#include "cli/data_options.h"

#include <cstdio>

namespace imgpipe::cli {

void AddDataSourceOptions(CLI::App* cmd, pipeline::DataSourceOptions& options) {
  cmd->add_option("--image-key", options.image_key,
                  "Feature holding the encoded image (default: detected from the first record: "
                  "image/encoded, image, image_raw, jpeg, encoded, ...)");
  cmd->add_option("--label-key", options.label_key,
                  "Int64 feature holding the label, or none (default: detected: "
                  "image/class/label, label, ...)");
  cmd->add_option("--label-offset", options.label_offset,
                  "Subtracted from stored labels (default: detected: 1 for TF-slim's 1-based "
                  "labels, else 0)");
}

pipeline::DataSource ResolveAndReport(const std::string& data,
                                      const pipeline::DataSourceOptions& options) {
  pipeline::DataSource source = pipeline::ResolveDataSource(data, options);
  std::fprintf(stderr, "%s\n", source.Describe().c_str());
  return source;
}

void AddDraftDecodeFlag(CLI::App* cmd, bool& draft_decode) {
  cmd->add_flag("--draft-decode", draft_decode, kDraftDecodeDoc)->capture_default_str();
}

}  // namespace imgpipe::cli
