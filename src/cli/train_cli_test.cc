// imgpipe train as real processes: two ranks over Gloo on loopback against one, a rank
// killed mid-run, and SIGKILL then --resume.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "cli/cli_test_util.h"
#include "testing/nginx_test_server.h"
#include "train/checkpoint.h"
#include "train/trainer_test_util.h"

namespace imgpipe {
namespace {

using Clock = std::chrono::steady_clock;

// simple-cnn (no BatchNorm, so a split batch computes the same gradient), no
// augmentation and no shuffle: one process and two see the same 8 images per step.
std::vector<std::string> ExactRun(const std::string& checkpoints) {
  return {"train", "--data", train::SmallTrainingSet(), "--model", "simple-cnn", "--no-augment",
          "--shuffle-buffer", "0", "--image-size", "32", "--batch-size", "8", "--epochs", "1",
          "--lr", "0.05", "--seed", "3", "--threads", "1", "--intra-op-threads", "1",
          "--checkpoint-dir", checkpoints, "--json"};
}

double MaxParameterDifference(const std::string& a_path, const std::string& b_path) {
  train::Checkpoint a = train::LoadCheckpoint(a_path), b = train::LoadCheckpoint(b_path);
  EXPECT_EQ(a.model.size(), b.model.size());
  double worst = 0;
  for (size_t i = 0; i < a.model.size() && i < b.model.size(); ++i) {
    EXPECT_EQ(a.model[i].first, b.model[i].first);
    worst = std::max(worst, (a.model[i].second - b.model[i].second).abs().max().item<double>());
  }
  return worst;
}

// Tolerance: the two runs add the same gradients in a different order (two halves,
// then an all-reduce), so float32 rounding differs; 6 SGD steps keep it near 1e-6.
TEST(Train, TwoGlooProcessesMatchOneProcessWithTheSameGlobalBatch) {
  std::string one = FreshDir("one_process"), two = FreshDir("two_processes");
  Result single = RunImgpipe(ExactRun(one));
  ASSERT_EQ(single.status, 0) << single.err;
  std::vector<std::string> args = ExactRun(two);
  args.insert(args.end(), {"--nproc", "2"});
  Result pair = RunImgpipe(args);
  ASSERT_EQ(pair.status, 0) << pair.err;

  nlohmann::json summary = JsonLines(pair.out).back();
  EXPECT_EQ(summary["event"], "summary");
  EXPECT_EQ(summary["world_size"], 2);
  EXPECT_EQ(summary["replicas_identical"], true);  // both ranks' parameters, bit for bit
  EXPECT_EQ(summary["steps"], 6);
  EXPECT_EQ(summary["val_records"], 16);  // validation split over the ranks, each record once
  nlohmann::json start = JsonLines(pair.out).front();
  EXPECT_EQ(start["backend"], "gloo");
  EXPECT_EQ(start["replica_batch"], 4);

  double difference = MaxParameterDifference(JoinPath(one, "last.pt"), JoinPath(two, "last.pt"));
  std::printf("largest parameter difference, 1 vs 2 processes: %g\n", difference);
  EXPECT_LT(difference, 1e-4);
  EXPECT_NEAR(JsonLines(single.out).back()["val_loss"].get<double>(), summary["val_loss"].get<double>(), 1e-3);
}

// Waits until `path` contains `text` or `timeout` passes.
bool WaitForText(const std::string& path, const std::string& text, std::chrono::seconds timeout) {
  Clock::time_point end = Clock::now() + timeout;
  while (Clock::now() < end) {
    if (PathExists(path) && ReadFile(path).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

enum class WaitOutcome { kTextSeen, kExited, kTimedOut };

// Waits until `path` contains `text`, the process `pid` exits (reaped; its status, as
// Wait() gives it, in *exit_status) or `timeout` passes.
WaitOutcome WaitForTextOrExit(const std::string& path, const std::string& text, pid_t pid,
                              std::chrono::seconds timeout, int* exit_status) {
  Clock::time_point end = Clock::now() + timeout;
  while (Clock::now() < end) {
    if (PathExists(path) && ReadFile(path).find(text) != std::string::npos) return WaitOutcome::kTextSeen;
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      *exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return WaitOutcome::kExited;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return WaitOutcome::kTimedOut;
}

// A rank killed mid-run: the survivor fails with an error within the timeout instead
// of hanging (Gloo sees the closed connection; the collective timeout bounds the rest).
TEST(Train, KilledRankMakesTheOtherFailWithinTheTimeout) {
  std::string dir = FreshDir("killed_rank");
  std::vector<std::string> args = {"train", "--data", train::SmallTrainingSet(), "--model", "small-resnet",
                                   "--image-size", "32", "--batch-size", "8", "--epochs", "1000",
                                   "--threads", "1", "--intra-op-threads", "1", "--log-every", "1",
                                   "--collective-timeout", "30", "--json"};
  std::string port = std::to_string(FreeLoopbackPort());
  auto env = [&](int rank) {
    return EnvironmentOverrides{{"RANK", std::to_string(rank)}, {"WORLD_SIZE", "2"},
                                {"LOCAL_RANK", std::to_string(rank)}, {"MASTER_ADDR", "127.0.0.1"},
                                {"MASTER_PORT", port}};
  };
  std::string out0 = JoinPath(dir, "rank0.out"), out1 = JoinPath(dir, "rank1.out");
  pid_t rank0 = Start(args, out0, false, env(0));
  pid_t rank1 = Start(args, out1, false, env(1));
  ASSERT_TRUE(WaitForText(out0, "\"event\":\"step\"", std::chrono::seconds(120))) << ReadFile(out0 + ".err");
  ::kill(rank1, SIGKILL);
  Clock::time_point killed = Clock::now();
  int status = Wait(rank0);
  double seconds = std::chrono::duration<double>(Clock::now() - killed).count();
  EXPECT_NE(status, 0);
  EXPECT_LT(status, 128) << "rank 0 should exit with an error, not be killed";
  EXPECT_LT(seconds, 60.0);
  EXPECT_NE(ReadFile(out0 + ".err").find("error"), std::string::npos) << ReadFile(out0 + ".err");
  Wait(rank1);
}

// SIGKILL at several points of a run that checkpoints every step: every checkpoint
// under its final name loads, and --resume finishes the run. On a fast machine the
// run can end before a later kill lands; the kills that did land are what is tested,
// and at least the first must (it comes right after the first of 18 checkpoints).
TEST(Train, KilledThenResumedNeverLeavesACorruptCheckpoint) {
  std::string dir = FreshDir("killed_train");
  std::string checkpoints = JoinPath(dir, "checkpoints");
  std::vector<std::string> args = {"train", "--data", train::SmallTrainingSet(), "--model", "small-resnet",
                                   "--image-size", "32", "--batch-size", "8", "--epochs", "3",
                                   "--threads", "1", "--intra-op-threads", "1", "--checkpoint-every", "1",
                                   "--checkpoint-dir", checkpoints, "--json"};
  int kills_mid_run = 0;
  for (int delay_ms : {0, 150, 400}) {
    std::vector<std::string> run = args;
    if (PathExists(JoinPath(checkpoints, "last.pt"))) run.push_back("--resume");
    std::string out = JoinPath(dir, "run" + std::to_string(delay_ms) + ".out");
    pid_t pid = Start(run, out);
    int status = 0;
    WaitOutcome outcome =
        WaitForTextOrExit(out, "\"event\":\"checkpoint\"", pid, std::chrono::seconds(120), &status);
    ASSERT_NE(outcome, WaitOutcome::kTimedOut) << ReadFile(out + ".err");
    if (outcome == WaitOutcome::kExited) {  // the run was already complete: nothing to kill
      ASSERT_EQ(status, 0) << ReadFile(out + ".err");
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    ::kill(pid, SIGKILL);
    if (Wait(pid) == 128 + SIGKILL) ++kills_mid_run;
    for (const std::string& name : ListDirectory(checkpoints)) {
      if (name.size() > kTemporarySuffix.size() && name.ends_with(kTemporarySuffix)) continue;
      EXPECT_NO_THROW(train::LoadCheckpoint(JoinPath(checkpoints, name))) << name << " after " << delay_ms;
    }
  }
  EXPECT_GE(kills_mid_run, 1);
  args.push_back("--resume");
  Result finished = RunImgpipe(args);
  ASSERT_EQ(finished.status, 0) << finished.err;
  nlohmann::json summary = JsonLines(finished.out).back();
  EXPECT_EQ(summary["steps"], 18);
  EXPECT_EQ(train::LoadCheckpoint(JoinPath(checkpoints, "last.pt")).meta.step, 18);

  // Kills and resumes later, the model is the uninterrupted run's, bit for bit.
  std::string reference = JoinPath(dir, "reference");
  args.pop_back();
  args[std::find(args.begin(), args.end(), checkpoints) - args.begin()] = reference;
  ASSERT_EQ(RunImgpipe(args).status, 0);
  EXPECT_EQ(MaxParameterDifference(JoinPath(reference, "last.pt"), JoinPath(checkpoints, "last.pt")), 0.0);
}

// Training over http:// (nginx serving the shards, their dataset.json listing them),
// killed (SIGKILL) after its first checkpoint and resumed with --resume over the same URL,
// ends with the parameters of an uninterrupted run over the local shards, bit for bit.
TEST(Train, KilledAndResumedOverAUrlEndsAsTheLocalRun) {
  const std::string dir = FreshDir("url_train");
  const std::string shards = train::SmallTrainingSet();
  NginxTestServer server(DirName(shards), JoinPath(dir, "nginx"));
  auto args = [](const std::string& data, const std::string& checkpoints) {
    return std::vector<std::string>{"train", "--data", data, "--model", "simple-cnn", "--image-size", "32",
                                    "--batch-size", "8", "--epochs", "2", "--threads", "1",
                                    "--intra-op-threads", "1", "--checkpoint-every", "1",
                                    "--checkpoint-dir", checkpoints, "--json"};
  };
  const std::string local = JoinPath(dir, "local"), remote = JoinPath(dir, "remote");
  const Result reference = RunImgpipe(args(shards, local));
  ASSERT_EQ(reference.status, 0) << reference.err;
  const std::string url = server.Url(BaseName(shards));
  const std::string out = JoinPath(dir, "killed.out");
  const pid_t pid = Start(args(url, remote), out);
  int status = 0;
  const WaitOutcome outcome =
      WaitForTextOrExit(out, "\"event\":\"checkpoint\"", pid, std::chrono::seconds(120), &status);
  ASSERT_EQ(outcome, WaitOutcome::kTextSeen) << ReadFile(out + ".err");
  ::kill(pid, SIGKILL);
  EXPECT_EQ(Wait(pid), 128 + SIGKILL) << "the run ended before the kill (12 steps, killed after the first)";
  std::vector<std::string> resume = args(url, remote);
  resume.push_back("--resume");
  const Result resumed = RunImgpipe(resume);
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_EQ(JsonLines(resumed.out).back()["steps"], JsonLines(reference.out).back()["steps"]);
  EXPECT_EQ(MaxParameterDifference(JoinPath(local, "last.pt"), JoinPath(remote, "last.pt")), 0.0);
}

TEST(Train, HumanOutputHasProgressEpochLinesAndTheVerdict) {
  std::string dir = FreshDir("human");
  Result r = RunImgpipe({"train", "--data", train::SmallTrainingSet(), "--model", "small-resnet", "--image-size",
                         "32", "--batch-size", "8", "--epochs", "1", "--threads", "1", "--logdir", dir});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("training small-resnet on 4 classes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("epoch 1: train loss"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("val top-1"), std::string::npos) << r.out;
  EXPECT_TRUE(r.out.find("input-bound") != std::string::npos || r.out.find("compute-bound") != std::string::npos)
      << r.out;
  EXPECT_EQ(ListDirectory(dir).size(), 1u);  // one TensorBoard event file
}

// torchvision's recipe line (--auto-augment ta_wide --random-erase 0.1 --mixup-alpha 0.2
// --cutmix-alpha 1.0 --label-smoothing 0.1 --model-ema, with its crop and resize flags)
// on resnet18: the EMA is validated, the options are checkpointed, and a run stopped
// mid-epoch (step 3 of 6) then resumed ends with the uninterrupted run's weights and
// average, bit for bit.
TEST(Train, FullRecipeResumesExactly) {
  std::string dir = FreshDir("recipe");
  std::vector<std::string> args = {"train", "--data", train::SmallTrainingSet(), "--model", "resnet18",
                                   "--train-crop-size", "32", "--val-resize-size", "40", "--val-crop-size",
                                   "32", "--batch-size", "8", "--epochs", "1", "--threads", "1",
                                   "--intra-op-threads", "1", "--auto-augment", "ta_wide", "--random-erase",
                                   "0.1", "--mixup-alpha", "0.2", "--cutmix-alpha", "1.0",
                                   "--label-smoothing", "0.1", "--model-ema", "--model-ema-steps", "2",
                                   "--json", "--checkpoint-dir"};
  const std::string reference = JoinPath(dir, "reference"), resumed = JoinPath(dir, "resumed");
  std::vector<std::string> run = args;
  run.push_back(reference);
  Result whole = RunImgpipe(run);
  ASSERT_EQ(whole.status, 0) << whole.err;
  nlohmann::json summary = JsonLines(whole.out).back();
  EXPECT_TRUE(summary.contains("ema_val_top1")) << summary.dump();
  train::Checkpoint a = train::LoadCheckpoint(JoinPath(reference, "last.pt"));
  const nlohmann::json config = nlohmann::json::parse(a.meta.config_json);
  EXPECT_EQ(config["cutmix_alpha"], 1.0);
  EXPECT_EQ(config["auto_augment"], "ta_wide");
  EXPECT_EQ(config["random_erase"], 0.1);
  EXPECT_EQ(config["label_smoothing"], 0.1);
  EXPECT_EQ(config["val_resize_size"], 40);
  EXPECT_EQ(summary["steps"], 6);

  run = args;
  run.push_back(resumed);
  run.insert(run.end(), {"--max-steps", "3"});
  ASSERT_EQ(RunImgpipe(run).status, 0);
  run.back() = "0";
  run.push_back("--resume");
  ASSERT_EQ(RunImgpipe(run).status, 0);
  train::Checkpoint b = train::LoadCheckpoint(JoinPath(resumed, "last.pt"));
  EXPECT_EQ(MaxParameterDifference(JoinPath(reference, "last.pt"), JoinPath(resumed, "last.pt")), 0.0);
  ASSERT_EQ(a.model_ema.size(), b.model_ema.size());
  ASSERT_FALSE(a.model_ema.empty());
  for (size_t i = 0; i < a.model_ema.size(); ++i) {
    EXPECT_TRUE(torch::equal(a.model_ema[i].second, b.model_ema[i].second)) << a.model_ema[i].first;
  }
  EXPECT_EQ(a.model_ema_updates, b.model_ema_updates);
}

TEST(Train, BadArgumentsAreUsageErrors) {
  Result r = RunImgpipe({"train", "--data", train::SmallTrainingSet(), "--precision", "fp8"});
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("fp8"), std::string::npos) << r.err;
  r = RunImgpipe({"train", "--data", train::SmallTrainingSet(), "--precision", "fp16"});
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("fp16 needs --device cuda"), std::string::npos) << r.err;
  r = RunImgpipe({"train", "--data", train::SmallTrainingSet(), "--mixup-alpha", "-1"});
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("--mixup-alpha"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace imgpipe
