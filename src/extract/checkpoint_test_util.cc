#include "extract/checkpoint_test_util.h"

#include "train/checkpoint.h"
#include "train/models.h"

namespace imgpipe::extract {

int64_t WriteTestCheckpoint(const std::string& path, const std::string& model,
                            const std::vector<std::string>& class_names, int image_size,
                            uint64_t seed) {
  torch::manual_seed(seed);
  train::ImageClassifier classifier =
      train::MakeImageClassifier(model, static_cast<int64_t>(class_names.size()));
  train::Checkpoint checkpoint;
  checkpoint.meta.model = model;
  checkpoint.meta.num_classes = static_cast<int64_t>(class_names.size());
  checkpoint.meta.image_size = image_size;
  checkpoint.meta.class_names = class_names;
  checkpoint.meta.config_json = "{}";
  checkpoint.model = train::ModelState(*classifier);
  train::SaveCheckpoint(path, checkpoint);
  return classifier->feature_dim();
}

}  // namespace imgpipe::extract
