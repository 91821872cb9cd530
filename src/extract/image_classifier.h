// `imgpipe classify`: the top-k classes of single images, with probabilities (softmax
// of the model's logits), through the eval preprocessing. libtorch-free header.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "image/presets.h"

namespace imgpipe::extract {

struct ClassifyOptions {
  std::string model;        // imgpipe checkpoint or TorchScript file (its forward: logits)
  std::string labels_file;  // one class name per line, or a --data folder (its class
                            // names); empty: the checkpoint's, or indices
  int top_k = 5;            // at most the number of classes
  int image_size = 0;       // eval crop; 0: the checkpoint's, 224 for TorchScript
  bool draft_decode = EvalPreset{}.draft_decode;  // the eval preset's (presets.h)
  size_t batch_size = 32;
  int threads = 0;          // 0: all CPUs
};

struct ClassProbability {
  int64_t index = 0;
  std::string name;  // the label's name, or its index as text
  double probability = 0;
};

struct ImageClassification {
  std::string path;
  std::string error;                  // non-empty: unreadable or undecodable, no classes
  std::vector<ClassProbability> top;  // top_k, most probable first
};

struct ClassifyResult {
  std::string label_source;  // "labels file", "data folder (...)", "checkpoint" or "indices"
  int64_t num_classes = 0;
  std::vector<ImageClassification> images;  // in the order given
};

// Classifies every image; an image that cannot be read or decoded gets an error
// (naming it) and the others are still classified. Throws Error for a bad model,
// labels file (names fewer or more than the model's classes) or option.
ClassifyResult ClassifyImages(const ClassifyOptions& options, const std::vector<std::string>& images);

// The class names of a labels file: one per line (like imgpipe convert's labels.txt),
// a final newline optional, "\r\n" accepted. Throws IoError when unreadable.
std::vector<std::string> ReadLabelsFile(const std::string& path);

}  // namespace imgpipe::extract
