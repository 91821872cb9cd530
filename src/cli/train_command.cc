// imgpipe train: the options of train::TrainOptions, each declared once here (its Loader
// options in loader/loader_options.h, added by AddLoaderFlags), and the
// local launcher (--nproc) that starts one worker process per replica.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/model_commands.h"
#include "cli/data_options.h"
#include "cli/loader_flags.h"
#include "cli/progress_bar.h"
#include "train/model_names.h"
#include "train/trainer.h"
#include "util/subprocess.h"

namespace imgpipe::cli {
namespace {

struct TrainFlags {
  train::TrainOptions options;
  int nproc = 1;
  bool json = false;
  double collective_timeout_s = 300;
};

// Starts `nproc` workers on this machine (this command line without --nproc) with
// torchrun's variables; fails naming the first worker that failed.
void LaunchLocalWorkers(int nproc) {
  const int port = FreeLoopbackPort();
  const std::vector<std::string> argv = CommandLineWithout(OwnCommandLine(), {"--nproc"});
  LocalWorkers workers(0, nproc, [&](int i) {
    return WorkerLaunch{argv,
                        {{"RANK", std::to_string(i)},
                         {"LOCAL_RANK", std::to_string(i)},
                         {"WORLD_SIZE", std::to_string(nproc)},
                         {"LOCAL_WORLD_SIZE", std::to_string(nproc)},
                         {"MASTER_ADDR", "127.0.0.1"},
                         {"MASTER_PORT", std::to_string(port)}},
                        ""};
  });
  const std::string failure = FirstWorkerFailure(workers.Wait(WhenOneFails::kStopTheOthers), nproc);
  if (!failure.empty()) throw std::runtime_error(failure);
}

// Human-readable events on rank 0: a progress bar per epoch, a line per epoch, the summary.
class TrainConsole {
 public:
  void operator()(const nlohmann::json& e) {
    const std::string& kind = e["event"].get_ref<const std::string&>();
    if (kind == "start") {
      std::printf("training %s on %lld classes: %lld process(es) (%s), global batch %lld = %lld per replica, "
                  "%lld steps per epoch, %s, %d intra-op threads\n",
                  e["model"].get<std::string>().c_str(), e["classes"].get<long long>(),
                  e["world_size"].get<long long>(), e["backend"].get<std::string>().c_str(),
                  e["global_batch"].get<long long>(), e["replica_batch"].get<long long>(),
                  e["steps_per_epoch"].get<long long>(), e["precision"].get<std::string>().c_str(),
                  e["intra_op_threads"].get<int>());
    } else if (kind == "step") {
      if (!bar_) bar_ = std::make_unique<ProgressBar>("step");
      char detail[96];
      std::snprintf(detail, sizeof(detail), "epoch %lld loss %.4f %.0f img/s wait %.0f%%",
                    e["epoch"].get<long long>() + 1, e["loss"].get<double>(), e["images_per_s"].get<double>(),
                    100 * e["input_wait"].get<double>());
      bar_->Update(e["step_in_epoch"].get<uint64_t>(), e["steps_per_epoch"].get<uint64_t>(), 0, detail);
    } else if (kind == "epoch") {
      if (bar_) bar_->Finish();
      bar_.reset();
      std::printf("epoch %lld: train loss %.4f, %.0f images/s, input wait %.0f%%",
                  e["epoch"].get<long long>(), e["train_loss"].get<double>(), e["images_per_s"].get<double>(),
                  100 * e["input_wait"].get<double>());
      if (e.contains("val_top1")) {
        std::printf(", val top-1 %.2f%% top-5 %.2f%% loss %.4f", 100 * e["val_top1"].get<double>(),
                    100 * e["val_top5"].get<double>(), e["val_loss"].get<double>());
      }
      if (e.contains("ema_val_top1")) std::printf(", EMA top-1 %.2f%%", 100 * e["ema_val_top1"].get<double>());
      std::printf("\n");
      if (e.contains("bottleneck")) std::printf("  %s\n", e["bottleneck"].get<std::string>().c_str());
      std::fflush(stdout);
    } else if (kind == "message") {
      std::printf("%s\n", e["text"].get<std::string>().c_str());
    } else if (kind == "summary") {
      if (bar_) bar_->Finish();
      std::printf("done: %lld steps, %.1f images/s (model alone %.1f), input wait %.0f%%",
                  e["steps"].get<long long>(), e["images_per_s"].get<double>(),
                  e["model_images_per_s"].get<double>(), 100 * e["input_wait"].get<double>());
      if (!e["val_top1"].is_null()) {
        std::printf(", val top-1 %.2f%% top-5 %.2f%%", 100 * e["val_top1"].get<double>(),
                    100 * e["val_top5"].get<double>());
      }
      std::printf("\n");
      if (e.contains("verdict")) std::printf("%s\n", e["verdict"].get<std::string>().c_str());
    }
  }

 private:
  std::unique_ptr<ProgressBar> bar_;
};

void RunTrain(const TrainFlags& flags) {
  train::DistributedEnv env = train::DistributedEnv::FromEnvironment();
  train::TrainOptions options = flags.options;
  if (env.rank == 0) options.source.scan_progress = LabelScanProgressBar();
  if (flags.nproc > 1 && std::getenv("RANK") == nullptr) {
    // Labels that must be read whole are read here once, and cached, not by every worker.
    if (!options.synthetic && !options.data_dir.empty()) {
      pipeline::DataSourceOptions scan = options.source;
      scan.scan_labels = true;
      pipeline::ResolveDataSource(options.data_dir, scan);
    }
    LaunchLocalWorkers(flags.nproc);
    return;
  }
  options.collective_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(flags.collective_timeout_s * 1000));
  TrainConsole console;
  auto sink = [&](const nlohmann::json& event) {
    if (env.rank != 0) return;  // rank 0 speaks for the job
    if (flags.json) {
      std::printf("%s\n", event.dump().c_str());
      std::fflush(stdout);
    } else {
      console(event);
    }
  };
  train::RunTraining(options, env, sink);
}

// Adds --threads, the deprecated name of --decode-threads, bound to `decode_threads`:
// it says so on stderr (imgpipe.Loader's `threads` is the CPU budget, as bench's).
void AddDeprecatedThreadsFlag(CLI::App* cmd, int& decode_threads) {
  cmd->add_option("--threads", decode_threads,
                  "Deprecated: the old name of --decode-threads (--threads is the CPU budget in bench and "
                  "imgpipe.Loader)")
      ->check(CLI::NonNegativeNumber)
      ->each([](const std::string&) {
        std::fprintf(stderr, "imgpipe train: --threads is deprecated: it sets --decode-threads (decode threads); "
                             "use --decode-threads\n");
      });
}

}  // namespace

void AddTrainCommand(CLI::App& app) {
  auto flags = std::make_shared<TrainFlags>();
  train::TrainOptions& o = flags->options;
  CLI::App* cmd = app.add_subcommand("train", ModelCommandDescription("train"));
  cmd->add_option("--data", o.data_dir,
                  std::string(kDataDoc) + "; trains on split train, evaluates on validation (else test)");
  AddDataSourceOptions(cmd, o.source);
  AddStorageCacheOptions(cmd);
  // --image-size (torchvision's --train-crop-size; validation's too unless --val-crop-size),
  // --seed (the model's too), --shuffle-buffer, --decode-threads, the augmentation,
  // --mixup-alpha and --cutmix-alpha (one of the two per batch when both are set).
  AddLoaderFlags(cmd, loader::kTrain, o.loader, {{"image_size", ",--train-crop-size"}});
  cmd->add_option("--model", o.model, "Model")
      ->check(CLI::IsMember(train::ImageClassifierNames()))
      ->capture_default_str();
  cmd->add_option("--epochs", o.epochs, "Epochs")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--batch-size", o.batch_size, "Global batch size (split over the processes)")
      ->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--val-resize-size", o.val_resize_size,
                  "Validation: resize the shorter side to this, then centre-crop (0: the crop * 256 / 224)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--val-crop-size", o.val_crop_size, "Validation: the centre crop's size (0: --image-size)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--precision", o.precision, "fp32, bf16 (autocast, CPU or GPU) or fp16 (GPU, loss scaling)")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}))->capture_default_str();
  cmd->add_option("--optimizer", o.optimizer, "sgd (momentum 0.9) or adamw")
      ->check(CLI::IsMember({"sgd", "adamw"}))->capture_default_str();
  cmd->add_option("--lr", o.lr, "Peak learning rate, for the global batch")->capture_default_str();
  cmd->add_option("--weight-decay", o.weight_decay, "Weight decay")->capture_default_str();
  cmd->add_option("--warmup-epochs", o.warmup_epochs, "Linear warm-up epochs, then cosine decay")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  cmd->add_option("--label-smoothing", o.label_smoothing, "Label smoothing of the loss")
      ->check(CLI::Range(0.0, 1.0))->capture_default_str();
  cmd->add_flag("--model-ema", o.ema.enabled,
                "Keep an exponential moving average of the weights: validated too (ema_val_*), checkpointed");
  cmd->add_option("--model-ema-decay", o.ema.decay,
                  "EMA decay, adjusted to the global batch, the epochs and --model-ema-steps as torchvision does")
      ->check(CLI::Range(0.0, 1.0))->capture_default_str();
  cmd->add_option("--model-ema-steps", o.ema.steps, "Update the EMA every N steps")
      ->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--logdir", o.logdir, "TensorBoard event files go here");
  cmd->add_option("--checkpoint-dir", o.checkpoint_dir, "Checkpoints (last.pt, epoch-NNN.pt) go here");
  cmd->add_option("--checkpoint-every", o.checkpoint_every, "Also checkpoint every N steps (0: epoch ends)")
      ->capture_default_str();
  cmd->add_flag("--resume", o.resume, "Continue from CHECKPOINT_DIR/last.pt (mid-epoch included)");
  cmd->add_option("--nproc", flags->nproc, "Start N local worker processes (one per replica)")
      ->check(CLI::Range(1, 1024))->capture_default_str();
  cmd->add_option("--device", o.device, "cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}))->capture_default_str();
  cmd->add_flag("!--no-augment", o.augment,
                "Train on the eval preprocessing (resize, center crop) instead of random crops and flips");
  cmd->add_flag("--synthetic", o.synthetic, "Random batches made once in memory: the model's own rate");
  cmd->add_option("--num-classes,--classes", o.classes,
                  "The model's classes (default: the data's class names, else every record's label read "
                  "once and cached; checked against those labels before the first step; synthetic: 10)")
      ->check(CLI::NonNegativeNumber);
  AddDeprecatedThreadsFlag(cmd, o.loader.decode_threads);
  cmd->add_option("--intra-op-threads", o.intra_op_threads, "libtorch's threads (0: the CPUs available)")
      ->capture_default_str();
  cmd->add_option("--max-steps", o.max_steps, "Stop after N steps in all (0: no limit)")->capture_default_str();
  cmd->add_option("--log-every", o.log_every, "Steps between progress events")->capture_default_str();
  cmd->add_flag("!--nondeterministic", o.loader.deterministic,
                "Let parallel pipeline stages yield out of order (faster; no exact resume)");
  cmd->add_option("--collective-timeout", flags->collective_timeout_s,
                  "Seconds a collective waits for a peer before failing")->capture_default_str();
  cmd->add_flag("--json", flags->json, "JSON lines: one per event, the summary last");
  cmd->callback([flags] { RunTrain(*flags); });
}

}  // namespace imgpipe::cli
