#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "convert/synth_dataset.h"

namespace imgpipe::cli {

void AddSynthCommand(CLI::App& app) {
  auto options = std::make_shared<SynthOptions>();
  auto size = std::make_shared<std::string>("256x256");
  CLI::App* cmd = app.add_subcommand(
      "synth", "Write a synthetic labelled image set (JPEG files, one folder per class) "
               "whose content depends on the class");
  cmd->add_option("--out", options->out_dir, "Output folder")->required();
  cmd->add_option("--classes", options->classes, "Number of classes")
      ->capture_default_str()->check(CLI::Range(1, 100000));
  cmd->add_option("--per-class", options->per_class, "Images per class")
      ->capture_default_str()->check(CLI::Range(1, 100000000));
  cmd->add_option("--size", *size, "Image size WxH")->capture_default_str();
  cmd->add_option("--seed", options->seed, "Seed")->capture_default_str();
  cmd->add_option("--quality", options->quality, "JPEG quality")
      ->capture_default_str()->check(CLI::Range(1, 100));
  cmd->add_option("--threads", options->threads, "Threads (0: all available CPUs)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->callback([options, size] {
    int w = 0, h = 0;
    char x = 0;
    if (std::sscanf(size->c_str(), "%d%c%d", &w, &x, &h) != 3 || (x != 'x' && x != 'X') ||
        w < 8 || h < 8 || w > 16384 || h > 16384) {
      throw CLI::ValidationError("--size", "expected WxH with 8 <= W,H <= 16384, got " + *size);
    }
    options->width = w;
    options->height = h;
    SynthResult result = WriteSynthDataset(*options);
    std::printf("wrote %llu images (%.1f MB) to %s\n",
                static_cast<unsigned long long>(result.images), result.bytes / 1e6,
                options->out_dir.c_str());
  });
}

}  // namespace imgpipe::cli
