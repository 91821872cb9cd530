#include "cli/data_options.h"

#include <cstdio>
#include <memory>

#include "cli/progress_bar.h"
#include "convert/convert_plan.h"
#include "io/storage.h"

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

void AddDraftDecodeFlag(CLI::App* cmd, bool& draft_decode) {
  cmd->add_flag("--draft-decode", draft_decode, kDraftDecodeDoc)->capture_default_str();
}

void AddAugmentOptions(CLI::App* cmd, loader::AugmentOptions& options) {
  const AugmentPolicyOptions defaults;
  cmd->add_option("--auto-augment", options.auto_augment,
                  "Train preset: torchvision's automatic augmentation policy on the flipped crop: "
                  "ta_wide (TrivialAugmentWide), ra (RandAugment), imagenet (AutoAugment's "
                  "ImageNet policy) or none (docs/augmentation.md)")
      ->capture_default_str()->check(CLI::IsMember(AugmentPolicyNames()));
  cmd->add_option("--ra-num-ops", options.ra_num_ops, "RandAugment (--auto-augment ra): ops per image")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--ra-magnitude", options.ra_magnitude,
                  "RandAugment (--auto-augment ra): the magnitude bin of its ops")
      ->capture_default_str()->check(CLI::Range(0, defaults.num_magnitude_bins - 1));
  cmd->add_option("--random-erase", options.random_erase,
                  "Train preset: RandomErasing's probability (value 0 after Normalize; uint8: the "
                  "mean's byte), torchvision's scale and ratio ranges")
      ->capture_default_str()->check(CLI::Range(0.0, 1.0));
}

}  // namespace imgpipe::cli
