// The training loop: an image classifier fed by the input pipeline (or by synthetic
// batches), mixed precision, data parallelism over processes, evaluation each epoch,
// TensorBoard scalars, atomic checkpoints with the pipeline's iterator state, resume.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "loader/loader_options.h"
#include "loader/batch_mixing.h"
#include "pipeline/data_source.h"
#include "train/distributed_env.h"
#include "train/model_ema_options.h"

namespace imgpipe::train {

struct TrainOptions {
  std::string data_dir;      // --data (pipeline/data_source.h): shards of splits train, validation
  pipeline::DataSourceOptions source;  // --image-key, --label-key, --label-offset
  // The Loader options train takes as flags (AddLoaderFlags(kTrain): --image-size, the
  // seed, --shuffle-buffer, --decode-threads, the augmentation, --mixup-alpha and
  // --cutmix-alpha; --nondeterministic); the Trainer sets the rest (LoaderOptionsFor).
  // Mixed batches: the loss is lambda * CE(y) + (1 - lambda) * CE(roll(y, 1)).
  loader::LoaderOptions loader;
  std::string model = "resnet18";
  int epochs = 1;
  int64_t batch_size = 256;  // global: each of the world_size replicas takes batch/world
  std::string precision = "fp32";  // fp32, bf16 (CPU and GPU), fp16 (GPU, loss scaling)
  std::string optimizer = "sgd";   // sgd (momentum 0.9, Nesterov off) or adamw
  double lr = 0.1;                 // for the global batch
  double weight_decay = 1e-4;
  double warmup_epochs = 0;
  double label_smoothing = 0;
  ModelEmaOptions ema;             // --model-ema: validation also reports ema_val_*
  std::string logdir;              // TensorBoard event files; empty: none
  std::string checkpoint_dir;      // empty: no checkpoints
  int64_t checkpoint_every = 0;    // steps; 0: at epoch ends only
  bool resume = false;             // continue from checkpoint_dir/last.pt
  std::string device = "cpu";      // cpu or cuda
  bool augment = true;             // random-resized-crop + flip; off: the eval preprocessing
  int val_resize_size = 0;         // validation's resize of the shorter side; 0: crop * 256 / 224
  int val_crop_size = 0;           // validation's centre crop; 0: image_size
  bool synthetic = false;          // batches made once in memory: the model's own rate
  int classes = 0;                 // --num-classes: the model's classes (0: the data's; synthetic: 10)
  int intra_op_threads = 0;        // libtorch's; 0: the CPUs this process may use
  int64_t max_steps = 0;           // stop after this many steps in all; 0: no limit
  int64_t log_every = 10;          // steps between step events
  std::chrono::milliseconds collective_timeout{std::chrono::minutes(5)};
};

// What a run reports: each event is a JSON object with "event" set to "start",
// "step", "epoch", "checkpoint", "message" or "summary" (the last one). The summary
// has at least val_top1, val_top5, val_loss, images_per_s, input_wait, world_size,
// and parameters_crc32c with replicas_identical (every rank's parameters compared).
using TrainEventSink = std::function<void(const nlohmann::json& event)>;

// Trains as `options` say, as rank env.rank of env.world_size (a group is joined when
// world_size > 1); rank 0 writes logs and checkpoints. Events reach `sink` on every
// rank. Returns the summary. Throws on bad options or data (with file and offset), and
// when a peer fails.
nlohmann::json RunTraining(const TrainOptions& options, const DistributedEnv& env,
                           const TrainEventSink& sink);

}  // namespace imgpipe::train
