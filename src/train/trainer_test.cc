#include "train/trainer.h"

#include <gtest/gtest.h>

#include "monitor/tensorboard_writer.h"
#include "train/checkpoint.h"
#include "train/trainer_test_util.h"
#include "util/file.h"

namespace imgpipe::train {
namespace {

using nlohmann::json;

std::string FreshDir(const std::string& name) {
  std::string dir = JoinPath(::testing::TempDir(), "trainer_test_" + std::to_string(::getpid()) + "_" + name);
  EXPECT_EQ(std::system(("rm -rf '" + dir + "'").c_str()), 0);
  return dir;
}

// A few-second run: small-resnet on 32x32 crops, 6 steps of 8 per epoch, one thread.
TrainOptions SmallRun() {
  TrainOptions o;
  o.data_dir = SmallTrainingSet();
  o.model = "small-resnet";
  o.loader.image_size = 32;
  o.batch_size = 8;
  o.epochs = 1;
  o.lr = 0.05;
  o.loader.decode_threads = 1;
  o.intra_op_threads = 1;
  o.log_every = 1;
  o.loader.seed = 7;
  return o;
}

struct Events {
  std::vector<json> all;
  std::vector<json> Of(const std::string& kind) const {
    std::vector<json> out;
    for (const json& e : all) {
      if (e["event"] == kind) out.push_back(e);
    }
    return out;
  }
  // step -> loss of every step event.
  std::map<int64_t, double> Losses() const {
    std::map<int64_t, double> out;
    for (const json& e : Of("step")) out[e["step"].get<int64_t>()] = e["loss"].get<double>();
    return out;
  }
};

json Train(const TrainOptions& options, Events* events) {
  return RunTraining(options, DistributedEnv{}, [&](const json& e) { events->all.push_back(e); });
}

TEST(Trainer, TrainsEvaluatesLogsAndCheckpointsEachEpoch) {
  TrainOptions o = SmallRun();
  o.epochs = 2;
  o.logdir = FreshDir("logs");
  o.checkpoint_dir = FreshDir("checkpoints");
  Events events;
  json summary = Train(o, &events);

  ASSERT_EQ(events.Of("start").size(), 1u);
  EXPECT_EQ(events.Of("start")[0]["steps_per_epoch"], 6);
  EXPECT_EQ(events.Of("start")[0]["train_records"], 48);
  EXPECT_EQ(events.Of("step").size(), 12u);
  std::vector<json> epochs = events.Of("epoch");
  ASSERT_EQ(epochs.size(), 2u);
  for (const json& e : epochs) {
    EXPECT_EQ(e["val_records"], 16);  // every validation record, once
    EXPECT_GE(e["val_top1"].get<double>(), 0.0);
    EXPECT_LE(e["val_top1"].get<double>(), e["val_top5"].get<double>());
    EXPECT_TRUE(std::isfinite(e["train_loss"].get<double>()));
  }
  EXPECT_EQ(events.all.back()["event"], "summary");
  for (const char* key : {"val_top1", "val_top5", "val_loss", "images_per_s", "input_wait", "world_size",
                          "model_images_per_s", "verdict"}) {
    EXPECT_TRUE(summary.contains(key)) << key;
  }
  EXPECT_EQ(summary["world_size"], 1);
  EXPECT_EQ(summary["steps"], 12);
  EXPECT_EQ(summary["val_top5"], 1.0);  // 4 classes: the top 5 always hold the label
  EXPECT_GT(summary["images_per_s"].get<double>(), 0);
  EXPECT_LE(summary["images_per_s"].get<double>(), summary["model_images_per_s"].get<double>());

  // TensorBoard scalars, read back with our reader.
  std::vector<std::string> files = ListDirectory(o.logdir);
  ASSERT_EQ(files.size(), 1u);
  std::set<std::string> tags;
  for (const ScalarEvent& s : ReadScalarEvents(JoinPath(o.logdir, files[0]))) tags.insert(s.tag);
  for (const char* tag : {"train/loss", "train/lr", "train/images_per_s", "train/input_wait", "val/top1",
                          "val/top5", "val/loss"}) {
    EXPECT_TRUE(tags.count(tag)) << tag;
  }

  // Checkpoints: last.pt and one per epoch, with the step count and the classes.
  Checkpoint last = LoadCheckpoint(JoinPath(o.checkpoint_dir, "last.pt"));
  EXPECT_EQ(last.meta.step, 12);
  EXPECT_EQ(last.meta.epoch, 2);
  EXPECT_EQ(last.meta.class_names.size(), 4u);
  EXPECT_EQ(last.pipeline_states.size(), 1u);
  EXPECT_EQ(LoadCheckpoint(JoinPath(o.checkpoint_dir, "epoch-001.pt")).meta.step, 6);
}

// Interrupted after step 3 (mid-epoch) and resumed: the losses of steps 4..12 equal
// the uninterrupted run's (deterministic mode), shuffle and augmentation included.
TEST(Trainer, ResumeMidEpochContinuesTheSameLossCurve) {
  TrainOptions o = SmallRun();
  o.epochs = 2;
  Events reference;
  Train(o, &reference);
  std::map<int64_t, double> expected = reference.Losses();
  ASSERT_EQ(expected.size(), 12u);

  o.checkpoint_dir = FreshDir("resume");
  o.max_steps = 3;
  Events first;
  Train(o, &first);
  EXPECT_EQ(first.Losses().size(), 3u);
  EXPECT_EQ(LoadCheckpoint(JoinPath(o.checkpoint_dir, "last.pt")).meta.step_in_epoch, 3);

  o.max_steps = 0;
  o.resume = true;
  Events second;
  json summary = Train(o, &second);
  std::map<int64_t, double> resumed = second.Losses();
  ASSERT_EQ(resumed.size(), 9u);
  for (const auto& [step, loss] : resumed) {
    EXPECT_EQ(loss, expected.at(step)) << "step " << step;
  }
  EXPECT_EQ(summary["steps"], 12);
}

// Equal names, shapes and values, tensor for tensor.
void ExpectSameTensors(const std::vector<std::pair<std::string, torch::Tensor>>& a,
                       const std::vector<std::pair<std::string, torch::Tensor>>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].first, b[i].first) << what;
    EXPECT_TRUE(torch::equal(a[i].second, b[i].second)) << what << " " << a[i].first;
  }
}

// Mixup and cutmix with an EMA of the weights, interrupted after step 3 and resumed:
// the final weights and their average equal the uninterrupted run's, bit for bit (the
// mixing draws come from the batch's place in the epoch; the average is checkpointed).
TEST(Trainer, MixingAndModelEmaResumeToTheSameWeights) {
  TrainOptions o = SmallRun();
  o.epochs = 2;
  o.loader.mixup_alpha = 0.2;
  o.loader.cutmix_alpha = 1.0;
  o.ema.enabled = true;
  o.ema.steps = 2;
  o.warmup_epochs = 0.5;  // the first epoch resets the average after each update
  o.checkpoint_dir = FreshDir("mix_reference");
  Events reference;
  json expected = Train(o, &reference);
  EXPECT_TRUE(expected.contains("ema_val_top1"));
  EXPECT_TRUE(std::isfinite(expected["train_loss"].get<double>()));
  const Checkpoint want = LoadCheckpoint(JoinPath(o.checkpoint_dir, "last.pt"));
  EXPECT_EQ(want.model_ema_updates, 3);  // steps 0, 2, 4 of the second epoch
  ASSERT_FALSE(want.model_ema.empty());

  o.checkpoint_dir = FreshDir("mix_resume");
  o.max_steps = 3;
  Events first;
  Train(o, &first);
  o.max_steps = 0;
  o.resume = true;
  Events second;
  json summary = Train(o, &second);
  for (const auto& [step, loss] : second.Losses()) EXPECT_EQ(loss, reference.Losses().at(step)) << step;
  const Checkpoint got = LoadCheckpoint(JoinPath(o.checkpoint_dir, "last.pt"));
  ExpectSameTensors(got.model, want.model, "model");
  ExpectSameTensors(got.model_ema, want.model_ema, "model_ema");
  EXPECT_EQ(got.model_ema_updates, want.model_ema_updates);
  EXPECT_EQ(summary["ema_val_top1"], expected["ema_val_top1"]);
}

TEST(Trainer, Bf16AutocastTrainsOnCpu) {
  TrainOptions o = SmallRun();
  o.precision = "bf16";
  o.max_steps = 2;
  Events events;
  json summary = Train(o, &events);
  ASSERT_EQ(events.Losses().size(), 2u);
  for (const auto& [step, loss] : events.Losses()) EXPECT_TRUE(std::isfinite(loss));
  EXPECT_EQ(summary["precision"], "bf16");
}

TEST(Trainer, SyntheticRunMeasuresTheModelAlone) {
  TrainOptions o = SmallRun();
  o.data_dir.clear();
  o.synthetic = true;
  o.max_steps = 3;
  o.classes = 5;
  Events events;
  json summary = Train(o, &events);
  EXPECT_EQ(summary["steps"], 3);
  EXPECT_TRUE(summary["val_top1"].is_null());
  EXPECT_GT(summary["images_per_s"].get<double>(), 0);
  EXPECT_LT(summary["input_wait"].get<double>(), 0.5);
}

TEST(Trainer, BadOptionsAreClearErrors) {
  auto message_of = [](TrainOptions o, DistributedEnv env = {}) -> std::string {
    try {
      RunTraining(o, env, nullptr);
    } catch (const std::exception& e) {
      return e.what();
    }
    return "no error";
  };
  TrainOptions o = SmallRun();
  o.precision = "fp16";
  EXPECT_NE(message_of(o).find("fp16 needs --device cuda"), std::string::npos);
  o = SmallRun();
  DistributedEnv three;
  three.world_size = 3;
  EXPECT_NE(message_of(o, three).find("multiple of the 3"), std::string::npos);
  o = SmallRun();
  o.data_dir = "/nonexistent/imgpipe";
  EXPECT_NE(message_of(o).find("/nonexistent/imgpipe"), std::string::npos);
  o = SmallRun();
  o.batch_size = 4096;
  EXPECT_NE(message_of(o).find("larger than the 48"), std::string::npos);
}

TEST(DistributedEnv, ReadsTorchrunAndSlurmVariables) {
  ::setenv("RANK", "3", 1);
  ::setenv("WORLD_SIZE", "8", 1);
  ::setenv("LOCAL_RANK", "1", 1);
  ::setenv("MASTER_ADDR", "node7", 1);
  ::setenv("MASTER_PORT", "23456", 1);
  DistributedEnv env = DistributedEnv::FromEnvironment();
  EXPECT_EQ(env.rank, 3);
  EXPECT_EQ(env.world_size, 8);
  EXPECT_EQ(env.local_rank, 1);
  EXPECT_EQ(env.master_addr, "node7");
  EXPECT_EQ(env.master_port, 23456);
  ::setenv("RANK", "8", 1);
  EXPECT_THROW(DistributedEnv::FromEnvironment(), std::invalid_argument);
  ::setenv("RANK", "x", 1);
  EXPECT_THROW(DistributedEnv::FromEnvironment(), std::invalid_argument);
  for (const char* v : {"RANK", "WORLD_SIZE", "LOCAL_RANK"}) ::unsetenv(v);
  ::setenv("SLURM_PROCID", "5", 1);
  ::setenv("SLURM_NTASKS", "6", 1);
  ::setenv("SLURM_LOCALID", "2", 1);
  env = DistributedEnv::FromEnvironment();
  EXPECT_EQ(env.rank, 5);
  EXPECT_EQ(env.world_size, 6);
  EXPECT_EQ(env.local_rank, 2);
  for (const char* v : {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "MASTER_ADDR", "MASTER_PORT"}) {
    ::unsetenv(v);
  }
  env = DistributedEnv::FromEnvironment();
  EXPECT_EQ(env.world_size, 1);
  EXPECT_EQ(env.master_addr, "127.0.0.1");
}

}  // namespace
}  // namespace imgpipe::train
