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
