#include "extract/image_classifier.h"

#include <ATen/Parallel.h>

#include <algorithm>

#include "extract/feature_model.h"
#include "image/presets.h"
#include "pipeline/data_source.h"
#include "util/error.h"
#include "util/file.h"
#include "util/thread_pool.h"

namespace imgpipe::extract {
namespace {

// The class names to print: the labels file's (or a data folder's, as ResolveDataSource
// finds them), else the checkpoint's, else indices.
std::vector<std::string> ClassNames(const ClassifyOptions& options, const ModelDescription& model,
                                    int64_t num_classes, std::string* source) {
  std::vector<std::string> names;
  if (!options.labels_file.empty()) {
    if (IsDirectory(options.labels_file)) {
      const pipeline::DataSource data = pipeline::ResolveDataSource(options.labels_file);
      names = data.class_names;
      *source = "data folder (" + (data.class_names_from.empty() ? "no names" : data.class_names_from) + ")";
    } else {
      names = ReadLabelsFile(options.labels_file);
      *source = "labels file";
    }
    if (static_cast<int64_t>(names.size()) != num_classes) {
      throw Error(options.labels_file + ": " + std::to_string(names.size()) + " class names, but " +
                  model.path + " has " + std::to_string(num_classes) + " classes");
    }
    return names;
  }
  if (static_cast<int64_t>(model.class_names.size()) == num_classes) {
    *source = "checkpoint";
    return model.class_names;
  }
  *source = "indices";
  for (int64_t i = 0; i < num_classes; ++i) names.push_back(std::to_string(i));
  return names;
}

}  // namespace

std::vector<std::string> ReadLabelsFile(const std::string& path) {
  std::string text = ReadFile(path);
  std::vector<std::string> names;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    names.push_back(std::move(line));
    start = end + 1;
  }
  return names;
}

ClassifyResult ClassifyImages(const ClassifyOptions& options, const std::vector<std::string>& images) {
  if (options.top_k < 1) throw Error("--top-k must be at least 1");
  if (options.batch_size < 1) throw Error("batch size must be at least 1");
  const int threads = options.threads > 0 ? options.threads : AvailableCpus();
  at::set_num_threads(threads);
  // 1. The model (logits), its classes and their names.
  std::unique_ptr<FeatureModel> model = LoadFeatureModel(options.model, "logits");
  EvalPreset preset = EvalPresetForCrop(
      options.image_size > 0 ? options.image_size : model->description().image_size, OutputLayout::kFloat32Nchw);
  preset.draft_decode = options.draft_decode;
  ClassifyResult result;
  result.num_classes = OutputDimension(*model, preset.crop_size);
  std::vector<std::string> names =
      ClassNames(options, model->description(), result.num_classes, &result.label_source);
  const int64_t k = std::min<int64_t>(options.top_k, result.num_classes);

  // 2. Batches of images: preprocessed on a thread pool, then through the model.
  const size_t image_bytes = OutputBytes(preset.layout, preset.crop_size);
  ThreadPool pool(threads);
  for (size_t first = 0; first < images.size(); first += options.batch_size) {
    const size_t n = std::min(options.batch_size, images.size() - first);
    std::vector<float> pixels(n * image_bytes / sizeof(float));
    std::vector<ImageClassification> batch(n);
    ParallelFor(pool, n, [&](size_t i) {
      batch[i].path = images[first + i];
      try {
        std::string encoded = ReadFile(batch[i].path);
        ApplyEvalPreset(encoded, batch[i].path, preset, pixels.data() + i * image_bytes / sizeof(float));
      } catch (const Error& e) {
        batch[i].error = e.what();
      }
    });
    std::vector<int64_t> good;
    for (size_t i = 0; i < n; ++i) {
      if (batch[i].error.empty()) good.push_back(static_cast<int64_t>(i));
    }
    if (!good.empty()) {
      torch::Tensor all = torch::from_blob(pixels.data(), {static_cast<int64_t>(n), 3, preset.crop_size,
                                                           preset.crop_size}, torch::kFloat32);
      torch::Tensor logits = model->Run(all.index_select(0, torch::tensor(good)));
      auto [probabilities, indices] = torch::softmax(logits.to(torch::kFloat64), 1).topk(k, 1);
      auto p = probabilities.accessor<double, 2>();
      auto c = indices.accessor<int64_t, 2>();
      for (size_t g = 0; g < good.size(); ++g) {
        for (int64_t j = 0; j < k; ++j) {
          batch[good[g]].top.push_back({c[g][j], names[c[g][j]], p[g][j]});
        }
      }
    }
    for (ImageClassification& image : batch) result.images.push_back(std::move(image));
  }
  return result;
}

}  // namespace imgpipe::extract
