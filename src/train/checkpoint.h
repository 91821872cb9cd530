// Training checkpoints: one file, written atomically (temp name, fsync, rename), that
// Python's torch.load reads as a dict (torch::pickle_save). Keys:
//   "format": "imgpipe.checkpoint.v1"
//   "model": {parameter or buffer name: tensor}  (torchvision's names for the ResNets)
//   "meta": {"model": str, "num_classes": int, "image_size": int,
//            "class_names": [str], "epoch": int, "step": int, "step_in_epoch": int,
//            "config": str (the run's options as JSON)}
//   "optimizer": bytes (torch::optim's own archive), "loss_scale": float,
//   "pipeline_states": [bytes] (each rank's train pipeline IteratorState, rank order)
//   "model_ema": {name: tensor}, "model_ema_updates": int (only with --model-ema: the
//   averaged parameters and buffers, and torchvision's n_averaged)
#pragma once

#include <torch/torch.h>

#include <string>
#include <vector>

#include "train/models.h"

namespace imgpipe::train {

struct CheckpointMeta {
  std::string model;       // an ImageClassifierNames() entry
  int64_t num_classes = 0;
  int image_size = 224;    // the training crop; eval resizes to image_size * 256/224
  std::vector<std::string> class_names;  // may be empty
  int64_t epoch = 0;          // epochs completed before step_in_epoch
  int64_t step = 0;           // optimizer steps taken in all
  int64_t step_in_epoch = 0;  // steps taken in the current epoch
  std::string config_json;
};

struct Checkpoint {
  CheckpointMeta meta;
  std::vector<std::pair<std::string, torch::Tensor>> model;  // named parameters + buffers
  std::string optimizer;       // empty: none saved
  double loss_scale = 1.0;
  std::vector<std::string> pipeline_states;  // one per rank; empty: none saved
  std::vector<std::pair<std::string, torch::Tensor>> model_ema;  // empty: none saved
  int64_t model_ema_updates = 0;
};

// Writes `checkpoint` to `path` atomically; no file under `path` is ever partial.
void SaveCheckpoint(const std::string& path, const Checkpoint& checkpoint);
// Reads a checkpoint; throws imgpipe::DataError naming the path when it is not one.
Checkpoint LoadCheckpoint(const std::string& path);

// The named parameters and buffers of `model` (copies on the CPU), for a Checkpoint.
std::vector<std::pair<std::string, torch::Tensor>> ModelState(torch::nn::Module& model);
// Copies `state` into `model`; throws DataError naming `path` on a missing or
// mis-shaped tensor.
void LoadModelState(torch::nn::Module& model,
                    const std::vector<std::pair<std::string, torch::Tensor>>& state,
                    const std::string& path);

// The model a checkpoint holds, rebuilt and loaded, in eval mode on the CPU.
ImageClassifier LoadClassifierFromCheckpoint(const std::string& path, CheckpointMeta* meta);

}  // namespace imgpipe::train
