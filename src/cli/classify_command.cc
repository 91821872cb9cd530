#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/model_commands.h"
#include "cli/data_options.h"
#include "extract/image_classifier.h"

namespace imgpipe::cli {
namespace {

struct ClassifyFlags {
  extract::ClassifyOptions options;
  std::vector<std::string> images;
  bool json = false;
};

nlohmann::json ImageJson(const extract::ImageClassification& image) {
  if (!image.error.empty()) return {{"path", image.path}, {"error", image.error}};
  nlohmann::json top = nlohmann::json::array();
  for (const extract::ClassProbability& c : image.top) {
    top.push_back({{"index", c.index}, {"label", c.name}, {"probability", c.probability}});
  }
  return {{"path", image.path}, {"top", top}};
}

void PrintImage(const extract::ImageClassification& image, bool names_are_indices) {
  std::printf("%s\n", image.path.c_str());
  for (const extract::ClassProbability& c : image.top) {
    if (names_are_indices) {
      std::printf("  %.4f  %lld\n", c.probability, static_cast<long long>(c.index));
    } else {
      std::printf("  %.4f  %s (%lld)\n", c.probability, c.name.c_str(), static_cast<long long>(c.index));
    }
  }
}

}  // namespace

void AddClassifyCommand(CLI::App& app) {
  auto flags = std::make_shared<ClassifyFlags>();
  extract::ClassifyOptions& o = flags->options;
  CLI::App* cmd = app.add_subcommand("classify", ModelCommandDescription("classify"));
  cmd->add_option("images", flags->images, "Image files")->required();
  cmd->add_option("--model", o.model, "imgpipe checkpoint, or TorchScript file (forward: logits)")
      ->required();
  cmd->add_option("--labels", o.labels_file,
                  "Class names, one per line (like convert's labels.txt), or a data folder "
                  "(its class names, as --data finds them); default: the checkpoint's, else "
                  "class indices");
  cmd->add_option("--top-k", o.top_k, "Classes to print per image")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--image-size", o.image_size,
                  "Eval crop size; 0: the checkpoint's, 224 for TorchScript")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  AddDraftDecodeFlag(cmd, o.draft_decode);
  cmd->add_option("--threads", o.threads, "Decode and libtorch threads (0: all available CPUs)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_flag("--json", flags->json, "One JSON object per image, one per line");
  cmd->callback([flags] {
    extract::ClassifyResult result = extract::ClassifyImages(flags->options, flags->images);
    bool all_ok = true;
    for (const extract::ImageClassification& image : result.images) {
      if (!image.error.empty()) {
        all_ok = false;
        std::fprintf(stderr, "imgpipe: error: %s\n", image.error.c_str());
      }
      if (flags->json) {
        std::printf("%s\n", ImageJson(image).dump().c_str());
      } else if (image.error.empty()) {
        PrintImage(image, result.label_source == "indices");
      }
    }
    std::fflush(stdout);
    if (!all_ok) throw CLI::RuntimeError(2);
  });
}

}  // namespace imgpipe::cli
