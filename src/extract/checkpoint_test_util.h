// Writes imgpipe checkpoints for the extract tests (libtorch).
#pragma once

#include <string>
#include <vector>

namespace imgpipe::extract {

// A checkpoint at `path` of MakeImageClassifier(`model`, class_names.size()) with
// random weights from torch::manual_seed(`seed`), image_size `image_size`. Returns the
// model's feature_dim().
int64_t WriteTestCheckpoint(const std::string& path, const std::string& model,
                            const std::vector<std::string>& class_names, int image_size,
                            uint64_t seed = 1);

}  // namespace imgpipe::extract
