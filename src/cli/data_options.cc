#include "cli/data_options.h"

#include <cstdio>
#include <memory>

#include "cli/loader_flags.h"
#include "cli/progress_bar.h"
#include "convert/convert_plan.h"
#include "io/storage.h"

namespace imgpipe::cli {

void AddDataSourceOptions(CLI::App* cmd, pipeline::DataSourceOptions& options) {
  AddLoaderFlag(cmd, "image_key", options.image_key);
  AddLoaderFlag(cmd, "label_key", options.label_key);
  AddLoaderFlag(cmd, "label_offset", options.label_offset);
}

void AddStorageCacheOptions(CLI::App* cmd) {
  struct CacheFlags {
    std::string dir, size;
  };
  auto flags = std::make_shared<CacheFlags>();
  cmd->add_option("--cache-dir", flags->dir,
                  "Keep the shards read from URLs (s3://, gs://, http(s)://) as local copies in this "
                  "folder, for the epochs and runs after the first (the least recently used go "
                  "beyond --cache-size; docs/object-storage.md)");
  cmd->add_option("--cache-size", flags->size,
                  "At most this much in --cache-dir, e.g. 200GB or 1.5TiB (default: 90% of the space "
                  "free there)");
  cmd->parse_complete_callback([flags] {
    if (flags->dir.empty()) {
      if (!flags->size.empty()) throw CLI::ValidationError("--cache-size", "needs --cache-dir");
      return;
    }
    ConfigureStorageCache(flags->dir, flags->size.empty() ? 0 : ParseByteSize(flags->size));
  });
}

pipeline::LabelScanProgress LabelScanProgressBar() {
  auto bar = std::make_shared<ProgressBar>("MB");
  return [bar](uint64_t done, uint64_t total) {
    bar->Update(done >> 20, total >> 20, done, "reading every record's label");
    if (done == total) bar->Finish();
  };
}

pipeline::DataSource ResolveAndReport(const std::string& data,
                                      const pipeline::DataSourceOptions& options) {
  pipeline::DataSource source = pipeline::ResolveDataSource(data, options);
  std::fprintf(stderr, "%s\n", source.Describe().c_str());
  return source;
}

void AddDraftDecodeFlag(CLI::App* cmd, bool& draft_decode) { AddLoaderFlag(cmd, "draft_decode", draft_decode); }

}  // namespace imgpipe::cli
