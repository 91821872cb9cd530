#include "train/trainer.h"

#include <torch/torch.h>

#include <cmath>
#include <sstream>

#include "env/gpu_sampler.h"
#include "image/presets.h"
#include "loader/loader.h"
#include "monitor/tensorboard_writer.h"
#include "pipeline/data_source.h"
#include "record/crc32c.h"
#include "train/autocast.h"
#include "train/batch_tensors.h"
#include "train/checkpoint.h"
#include "train/distributed.h"
#include "train/loss_scaler.h"
#include "train/model_ema.h"
#include "train/models.h"
#include "util/error.h"
#include "util/file.h"
#include "util/logging.h"
#include "util/thread_pool.h"
#include "util/trace.h"

namespace imgpipe::train {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// ---------------------------------------------------------------------------------
// The data set: --data resolved by pipeline::ResolveDataSource.

struct DataSet {
  pipeline::DataSource source;   // resolved once, for the train and validation loaders
  std::string validation_split;  // "validation" or "test"; "": no validation files
  std::vector<std::string> class_names;
  pipeline::RecordSchema schema;
  std::string description;  // what was found and chosen (printed once, by rank 0)
};

// The train files (split train; every file when no name says a split), the validation
// files (split validation, else test), the classes and the schema of `data`. The model
// needs the class count: when no file beside the data gives it, every record's label is
// read (once: cached, pipeline/label_census.h). `classes` > 0 (--num-classes) sets it,
// checked against those labels: a label outside [0, classes) throws LabelOutOfRange
// naming it, its file and record, before the first step.
DataSet FindDataSet(const std::string& data, pipeline::DataSourceOptions options, int64_t classes) {
  options.scan_labels = true;
  pipeline::DataSource source = pipeline::ResolveDataSource(data, options);
  if (source.layout == pipeline::DataLayout::kImageFolder) {
    throw Error(data + ": an image folder; imgpipe train reads TFRecord shards (make them with "
                "imgpipe convert --input " + data + ")");
  }
  if (source.schema.label_key.empty()) throw Error(data + ": the records have no labels (--label-key)");
  if (classes > 0) source.SetClassCount(classes, "--num-classes");
  DataSet d;
  d.source = source;
  if (source.HasSplit("validation")) d.validation_split = "validation";
  else if (source.HasSplit("test")) d.validation_split = "test";
  d.class_names = source.class_names;
  d.schema = source.schema;
  d.description = source.Describe();
  return d;
}

// ---------------------------------------------------------------------------------
// Options.

void Validate(const TrainOptions& o, const DistributedEnv& env) {
  auto fail = [](const std::string& m) { throw std::invalid_argument(m); };
  if (o.precision != "fp32" && o.precision != "bf16" && o.precision != "fp16") {
    fail("--precision must be fp32, bf16 or fp16, not '" + o.precision + "'");
  }
  if (o.device != "cpu" && o.device != "cuda") fail("--device must be cpu or cuda, not '" + o.device + "'");
  if (o.precision == "fp16" && o.device == "cpu") {
    fail("--precision fp16 needs --device cuda (CPUs have no fast fp16; use bf16)");
  }
  if (o.device == "cuda" && !torch::cuda::is_available()) {
    fail("--device cuda: no CUDA device is usable (imgpipe doctor says why)");
  }
  if (o.optimizer != "sgd" && o.optimizer != "adamw") fail("--optimizer must be sgd or adamw");
  if (o.epochs < 1) fail("--epochs must be at least 1");
  if (o.batch_size < env.world_size || o.batch_size % env.world_size != 0) {
    fail("--batch-size " + std::to_string(o.batch_size) + " is global and must be a multiple of the " +
         std::to_string(env.world_size) + " processes");
  }
  if (o.loader.image_size < 32) fail("--image-size must be at least 32");
  if (o.resume && o.checkpoint_dir.empty()) fail("--resume needs --checkpoint-dir");
  if (o.data_dir.empty() && !o.synthetic) fail("--data is required (or --synthetic)");
  CheckModelEmaOptions(o.ema);
}

// CRC32C of every parameter's bytes, in order: equal on every rank of a healthy run.
uint32_t ParametersCrc32c(torch::nn::Module& model) {
  uint32_t crc = 0;
  for (const torch::Tensor& p : model.parameters()) {
    torch::Tensor c = p.detach().cpu().contiguous();
    crc = crc32c::Extend(crc, static_cast<const char*>(c.data_ptr()), c.numel() * c.element_size());
  }
  return crc;
}

// Model parameters whose layout benefits from channels-last (the 4-D ones).
void ToChannelsLast(torch::nn::Module& model) {
  torch::NoGradGuard no_grad;
  for (auto& p : model.parameters()) {
    if (p.dim() == 4) p.set_data(p.data().contiguous(torch::MemoryFormat::ChannelsLast));
  }
}

std::unique_ptr<torch::optim::Optimizer> MakeOptimizer(const TrainOptions& o,
                                                       std::vector<torch::Tensor> params) {
  if (o.optimizer == "adamw") {
    return std::make_unique<torch::optim::AdamW>(
        params, torch::optim::AdamWOptions(o.lr).weight_decay(o.weight_decay));
  }
  return std::make_unique<torch::optim::SGD>(
      params, torch::optim::SGDOptions(o.lr).momentum(0.9).weight_decay(o.weight_decay));
}

void SetLearningRate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

std::string OptimizerBytes(torch::optim::Optimizer& optimizer) {
  torch::serialize::OutputArchive archive;
  optimizer.save(archive);
  std::ostringstream out;
  archive.save_to(out);
  return out.str();
}

void LoadOptimizer(torch::optim::Optimizer& optimizer, const std::string& bytes) {
  if (bytes.empty()) return;
  torch::serialize::InputArchive archive;
  std::istringstream in(bytes);
  archive.load_from(in);
  optimizer.load(archive);
}

json OptionsJson(const TrainOptions& o) {
  return {{"data", o.data_dir},          {"model", o.model},
          {"epochs", o.epochs},          {"batch_size", o.batch_size},
          {"image_size", o.loader.image_size},  {"precision", o.precision},
          {"optimizer", o.optimizer},    {"lr", o.lr},
          {"weight_decay", o.weight_decay}, {"warmup_epochs", o.warmup_epochs},
          {"label_smoothing", o.label_smoothing}, {"mixup_alpha", o.loader.mixup_alpha},
          {"cutmix_alpha", o.loader.cutmix_alpha}, {"model_ema", o.ema.enabled},
          {"model_ema_decay", o.ema.decay}, {"model_ema_steps", o.ema.steps}, {"seed", o.loader.seed},
          {"deterministic", o.loader.deterministic}, {"synthetic", o.synthetic},
          {"augment", o.augment}, {"auto_augment", o.loader.augment.auto_augment},
          {"ra_num_ops", o.loader.augment.ra_num_ops}, {"ra_magnitude", o.loader.augment.ra_magnitude},
          {"random_erase", o.loader.augment.random_erase}, {"val_resize_size", o.val_resize_size},
          {"val_crop_size", o.val_crop_size}, {"shuffle_buffer", o.loader.shuffle_buffer}};
}

// ---------------------------------------------------------------------------------
// One run.

// The steps since the last step event: their images/s and input wait.
struct StepWindow {
  double wait = 0;     // seconds waiting for input
  double seconds = 0;  // seconds in all
  int64_t images = 0;  // over all ranks
};

class Trainer {
 public:
  Trainer(const TrainOptions& options, const DistributedEnv& env, const TrainEventSink& sink)
      : o_(options), env_(env), sink_(sink),
        device_(options.device == "cuda" ? torch::Device(torch::kCUDA, env.local_rank)
                                         : torch::Device(torch::kCPU)) {}

  json Run();

 private:
  void Emit(json event) {
    if (sink_) sink_(event);
  }
  void Message(const std::string& text) { Emit({{"event", "message"}, {"rank", env_.rank}, {"text", text}}); }

  void SetUp();
  // The options of the training and the validation loaders (this rank's shard).
  loader::LoaderOptions LoaderOptionsFor(const std::string& split) const;
  loader::LoaderOptions TrainLoaderOptions() const;
  void Resume();
  // The checkpoint's average of the weights (--model-ema), when it has one.
  void ResumeEma(const Checkpoint& c, const std::string& path);
  // `batch` (uint8 NHWC, `size` square) as tensors on this run's device, normalised with
  // the presets' mean and std (the train and eval presets share ImageNet's).
  TensorBatch Tensors(const pipeline::Batch& batch, int size) const;
  // The next training batch as tensors, mixed as the loader drew (uint8 batches are
  // mixed here, after normalising); the synthetic batch on synthetic runs.
  TensorBatch NextTrainBatch();
  // The forward pass and the loss (two-label cross-entropy for a mixed batch).
  torch::Tensor ForwardLoss(const TensorBatch& batch);
  // Adds `model`'s summed loss, top-1 and top-5 hits on `batch` to sums[0..2].
  void ScoreBatch(ImageClassifierImpl& model, const TensorBatch& batch, double* sums);
  // One random batch on the device, trained on over and over (--synthetic).
  TensorBatch SyntheticBatch() const;
  // The start event: the job's size, model, batches and threads.
  void EmitStart();
  // Trains `epoch` (from the resumed step in the first), validates, emits the epoch
  // event and writes the epoch's checkpoint; returns false when --max-steps stopped
  // the training first (nothing after it done).
  bool RunEpoch(int64_t epoch, json* last_eval);
  // Runs steps [first_step, steps_per_epoch) of `epoch`; returns the mean loss.
  double TrainSteps(int64_t epoch, int64_t first_step, bool* stopped);
  // Forward, backward, all-reduce and optimizer step (at `lr`) on `batch`, then the
  // EMA's update; returns the loss.
  double OptimizerStep(const TensorBatch& batch, double lr, int64_t epoch, int64_t step_in_epoch);
  // The step event (mean loss over the ranks, the window's images/s and input wait)
  // and its TensorBoard scalars.
  void EmitStepEvent(int64_t epoch, int64_t step_in_epoch, double loss, double lr, const StepWindow& window);
  // The summary event of a run started at `run_start`: throughput against the model's
  // own rate, validation, bad records, whether every replica holds the same parameters.
  json Summary(Clock::time_point run_start, int64_t epochs_run, const json& last_eval);
  json Evaluate();
  void SaveCheckpointFile(int64_t epoch, int64_t step_in_epoch, bool epoch_end);
  // Sum of `values` over the ranks.
  std::vector<double> SumOverRanks(std::vector<double> values);

  const TrainOptions& o_;
  const DistributedEnv env_;
  const TrainEventSink& sink_;
  torch::Device device_;
  c10::ScalarType autocast_dtype_ = torch::kFloat32;
  bool autocast_ = false;

  DataSet data_;
  int64_t num_classes_ = 0;
  int64_t replica_batch_ = 0;
  int64_t steps_per_epoch_ = 0;
  int64_t total_steps_ = 0;
  int64_t warmup_steps_ = 0;

  std::unique_ptr<ProcessGroup> group_;
  ImageClassifier model_;
  std::vector<torch::Tensor> params_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  std::unique_ptr<DynamicLossScaler> scaler_;
  std::unique_ptr<ModelEma> ema_;  // --model-ema
  std::unique_ptr<TensorBoardWriter> tensorboard_;
  env::DlopenLibraryLoader nvml_loader_;
  std::unique_ptr<env::GpuSampler> gpu_sampler_;  // on CUDA devices, when NVML answers

  // The input: a Loader over this rank's shard of the training files, one pass per
  // epoch (the next one started before this one ends), and one over the validation
  // files, made at the first evaluation.
  std::unique_ptr<loader::Loader> train_loader_;
  std::shared_ptr<loader::LoaderPass> train_pass_;  // the epoch being trained
  std::unique_ptr<loader::Loader> validation_loader_;
  uint64_t bad_records_ = 0;  // over the training passes that ended
  uint64_t stand_ins_ = 0;
  TensorBatch synthetic_;

  int64_t step_ = 0;         // optimizer steps taken in all
  int64_t start_epoch_ = 0;  // from a checkpoint
  int64_t start_step_in_epoch_ = 0;

  // Totals for the summary.
  double wait_seconds_ = 0;
  double step_seconds_ = 0;
  int64_t images_ = 0;
  double last_loss_ = NAN;
};

loader::LoaderOptions Trainer::LoaderOptionsFor(const std::string& split) const {
  loader::LoaderOptions lo = o_.loader;  // train's Loader flags
  lo.batch_size = static_cast<size_t>(replica_batch_);
  lo.layout = OutputLayoutName(OutputLayout::kUint8Nhwc);  // normalised by ToTensors
  lo.rank = env_.rank;
  lo.world_size = env_.world_size;
  lo.split = split;
  loader::SetDataSourceOptions(o_.source, lo);
  // The processes on this machine share its cores.
  lo.threads = std::max(1, AvailableCpus() / env_.local_world_size);
  if (split != "train") {  // validation: unaugmented, unmixed, in order (the Loader's defaults)
    const loader::LoaderOptions unset;
    lo.augment = unset.augment;
    lo.mixup_alpha = unset.mixup_alpha;
    lo.cutmix_alpha = unset.cutmix_alpha;
    lo.deterministic = unset.deterministic;
    lo.shuffle_buffer = unset.shuffle_buffer;
  }
  return lo;
}

loader::LoaderOptions Trainer::TrainLoaderOptions() const {
  loader::LoaderOptions lo = LoaderOptionsFor("train");
  lo.preset = o_.augment ? "train" : "eval";  // the Loader refuses a policy or erasing with "eval"
  lo.shuffle = true;
  lo.last_batch = "drop";  // every rank the same steps
  return lo;
}

void Trainer::SetUp() {
  // 1. Threads, seeds, precision.
  // The processes on this machine share its cores.
  const int cores = std::max(1, AvailableCpus() / env_.local_world_size);
  int threads = o_.intra_op_threads > 0 ? o_.intra_op_threads : cores;
  at::set_num_threads(threads);
  torch::manual_seed(o_.loader.seed);
  autocast_ = o_.precision != "fp32";
  autocast_dtype_ = o_.precision == "fp16" ? torch::kFloat16 : torch::kBFloat16;

  // 2. Data and its size: every rank runs the same number of steps per epoch.
  replica_batch_ = o_.batch_size / env_.world_size;
  if (o_.synthetic) {
    num_classes_ = o_.classes > 0 ? o_.classes : 10;
    steps_per_epoch_ = o_.max_steps > 0 ? o_.max_steps : 20;
  } else {
    data_ = FindDataSet(o_.data_dir, o_.source, o_.classes);
    if (env_.rank == 0) LogInfo(data_.description);
    num_classes_ = data_.schema.num_classes;
    if (num_classes_ < 2) {
      throw std::invalid_argument("'" + o_.data_dir + "' has " + std::to_string(num_classes_) +
                                  " class(es) (its class names, or every record's label); training needs 2 "
                                  "or more (--num-classes)");
    }
    train_loader_ = std::make_unique<loader::Loader>(data_.source, TrainLoaderOptions());
    train_loader_->SetEpochLimit(o_.epochs);  // the last epoch starts no pass ahead
    steps_per_epoch_ = train_loader_->size();
  }
  total_steps_ = steps_per_epoch_ * o_.epochs;
  warmup_steps_ = static_cast<int64_t>(std::llround(o_.warmup_epochs * steps_per_epoch_));

  // 3. Model, the same on every rank (rank 0's weights).
  model_ = MakeImageClassifier(o_.model, num_classes_);
  model_->to(device_);
  if (o_.model != "simple-cnn") ToChannelsLast(*model_);
  if (env_.world_size > 1) {
    group_ = std::make_unique<ProcessGroup>(env_, device_, o_.collective_timeout);
    BroadcastModel(*group_, *model_);
  }
  params_ = model_->parameters();
  optimizer_ = MakeOptimizer(o_, params_);
  scaler_ = std::make_unique<DynamicLossScaler>(o_.precision == "fp16");
  if (o_.ema.enabled) {
    ema_ = std::make_unique<ModelEma>(o_.model, num_classes_, *model_,
                                      EmaDecayPerUpdate(o_.ema, o_.batch_size, o_.epochs), o_.ema.steps);
  }
  if (env_.rank == 0 && !o_.logdir.empty()) tensorboard_ = std::make_unique<TensorBoardWriter>(o_.logdir);
  if (device_.is_cuda()) gpu_sampler_ = std::make_unique<env::GpuSampler>(nvml_loader_);
  if (env_.rank == 0 && !o_.checkpoint_dir.empty()) MakeDirectories(o_.checkpoint_dir);
}

void Trainer::Resume() {
  std::string path = JoinPath(o_.checkpoint_dir, "last.pt");
  if (!PathExists(path)) {
    Message("--resume: no checkpoint at " + path + " yet; starting from scratch");
    return;
  }
  Checkpoint c = LoadCheckpoint(path);
  if (c.meta.model != o_.model || c.meta.num_classes != num_classes_) {
    throw DataError(path, std::nullopt,
                    "checkpoint is of " + c.meta.model + " with " + std::to_string(c.meta.num_classes) +
                        " classes; this run trains " + o_.model + " with " + std::to_string(num_classes_));
  }
  LoadModelState(*model_, c.model, path);
  LoadOptimizer(*optimizer_, c.optimizer);
  if (ema_) ResumeEma(c, path);
  scaler_->set_scale(c.loss_scale);
  step_ = c.meta.step;
  start_epoch_ = c.meta.epoch;
  start_step_in_epoch_ = c.meta.step_in_epoch;
  if (!o_.synthetic && train_loader_) {
    if (c.pipeline_states.size() != static_cast<size_t>(env_.world_size)) {
      Message("checkpoint was written by " + std::to_string(c.pipeline_states.size()) +
              " processes, this run has " + std::to_string(env_.world_size) +
              ": the input pipeline starts the epoch afresh");
    } else {
      try {
        train_loader_->LoadState(loader::DeserializeLoaderState(c.pipeline_states[env_.rank]));
      } catch (const Error& e) {  // an older checkpoint's, or another loader's state
        Message(std::string("the checkpoint's input position cannot be used (") + e.what() +
                "): the input pipeline starts the epoch afresh");
      }
    }
  }
  Message("resumed from " + path + " at epoch " + std::to_string(start_epoch_) + ", step " +
          std::to_string(step_));
}

std::vector<double> Trainer::SumOverRanks(std::vector<double> values) {
  if (!group_) return values;
  std::vector<torch::Tensor> t{torch::tensor(values, torch::kFloat64)};
  group_->AllReduceSum(t);
  auto acc = t[0].accessor<double, 1>();
  for (size_t i = 0; i < values.size(); ++i) values[i] = acc[i];
  return values;
}

double Trainer::TrainSteps(int64_t epoch, int64_t first_step, bool* stopped) {
  model_->train();
  double loss_sum = 0;
  int64_t loss_count = 0;
  StepWindow window;
  for (int64_t s = first_step; s < steps_per_epoch_; ++s) {
    if (o_.max_steps > 0 && step_ >= o_.max_steps) {
      *stopped = true;
      break;
    }
    // 1. The input, then one optimizer step on it.
    Clock::time_point start = Clock::now();
    TensorBatch batch = NextTrainBatch();
    Clock::time_point got_input = Clock::now();
    const double lr = LearningRateAt(step_, total_steps_, warmup_steps_, o_.lr);
    const double loss_value = OptimizerStep(batch, lr, epoch, s);
    Clock::time_point end = Clock::now();

    // 2. The step's time and images, in the run's totals and the window's.
    double wait = Seconds(got_input - start), seconds = Seconds(end - start);
    int64_t images = batch.labels.size(0) * env_.world_size;
    wait_seconds_ += wait;
    step_seconds_ += seconds;
    images_ += images;
    window.wait += wait;
    window.seconds += seconds;
    window.images += images;
    loss_sum += loss_value;
    ++loss_count;

    // 3. The step event every --log-every steps, a checkpoint every --checkpoint-every.
    bool last = s + 1 == steps_per_epoch_;
    if (o_.log_every > 0 && (step_ % o_.log_every == 0 || last)) {
      EmitStepEvent(epoch, s, loss_value, lr, window);
      window = StepWindow{};
    }
    if (o_.checkpoint_every > 0 && step_ % o_.checkpoint_every == 0 && !last) {
      SaveCheckpointFile(epoch, s + 1, /*epoch_end=*/false);
    }
  }
  last_loss_ = loss_count ? loss_sum / loss_count : NAN;
  return last_loss_;
}

double Trainer::OptimizerStep(const TensorBatch& batch, double lr, int64_t epoch, int64_t step_in_epoch) {
  torch::Tensor loss = ForwardLoss(batch);
  optimizer_->zero_grad();
  {
    trace::ScopedTrace range("backward");
    scaler_->Scale(loss).backward();
  }
  if (group_) {
    trace::ScopedTrace range("all-reduce");
    AllReduceGradients(*group_, params_);
  }
  {
    trace::ScopedTrace range("optimizer");
    bool finite = scaler_->UnscaleAndCheck(params_);
    if (finite) {
      SetLearningRate(*optimizer_, lr);
      optimizer_->step();
    }
    scaler_->Update(finite);
  }
  ++step_;
  if (ema_) ema_->AfterStep(*model_, step_in_epoch, epoch, o_.warmup_epochs);
  return loss.item<double>();
}

void Trainer::EmitStepEvent(int64_t epoch, int64_t step_in_epoch, double loss, double lr,
                            const StepWindow& window) {
  std::vector<double> sums = SumOverRanks({loss});
  double mean_loss = sums[0] / env_.world_size;
  double rate = window.images / std::max(window.seconds, 1e-9);
  double input_wait = window.wait / std::max(window.seconds, 1e-9);
  Emit({{"event", "step"}, {"rank", env_.rank}, {"epoch", epoch}, {"step", step_},
        {"step_in_epoch", step_in_epoch + 1}, {"steps_per_epoch", steps_per_epoch_}, {"loss", mean_loss},
        {"lr", lr}, {"images_per_s", rate}, {"input_wait", input_wait},
        {"loss_scale", scaler_->scale()}});
  if (!tensorboard_) return;
  tensorboard_->AddScalar("train/loss", mean_loss, step_);
  tensorboard_->AddScalar("train/lr", lr, step_);
  tensorboard_->AddScalar("train/images_per_s", rate, step_);
  tensorboard_->AddScalar("train/input_wait", input_wait, step_);
  // This rank's GPU (NVML numbers devices as CUDA does unless CUDA_VISIBLE_DEVICES
  // reorders them).
  if (gpu_sampler_) {
    if (std::optional<env::GpuSample> gpu = gpu_sampler_->Sample(device_.index())) {
      tensorboard_->AddScalar("gpu/utilization_percent", gpu->utilization_percent, step_);
      tensorboard_->AddScalar("gpu/memory_used_mib", gpu->memory_used / double(1 << 20), step_);
    }
  }
}

json Trainer::Evaluate() {
  if (o_.synthetic || data_.validation_split.empty()) return json::object();
  if (!validation_loader_) {
    loader::LoaderOptions lo = LoaderOptionsFor(data_.validation_split);
    lo.preset = "eval";
    if (o_.val_crop_size > 0) lo.image_size = o_.val_crop_size;
    lo.resize_size = o_.val_resize_size;  // 0: the crop's * 256 / 224
    lo.last_batch = "partial";  // every record exactly once
    lo.stand_ins = false;       // a bad record is left out of the figures, not counted twice
    lo.start_ahead = false;     // the next evaluation is an epoch of training away
    validation_loader_ = std::make_unique<loader::Loader>(data_.source, lo);
  }
  std::shared_ptr<loader::LoaderPass> batches = validation_loader_->Iterate();

  model_->eval();
  torch::NoGradGuard no_grad;
  std::vector<ImageClassifierImpl*> models = {model_.get()};
  if (ema_) models.push_back(&ema_->model());
  std::vector<double> sums(3 * models.size() + 1, 0.0);  // per model: loss, top-1, top-5; then records
  while (std::optional<loader::LoaderBatch> next = batches->Next()) {
    TensorBatch batch = Tensors(*next->batch, next->image_size);
    for (size_t m = 0; m < models.size(); ++m) ScoreBatch(*models[m], batch, &sums[3 * m]);
    sums.back() += static_cast<double>(next->batch->size);
  }
  sums = SumOverRanks(sums);
  const double count = sums.back();
  if (count == 0) return json::object();
  json scores = {{"val_records", static_cast<int64_t>(count)}};
  for (size_t m = 0; m < models.size(); ++m) {  // the model's, then the average's (ema_val_*)
    const std::string prefix = m == 0 ? "val_" : "ema_val_";
    scores[prefix + "loss"] = sums[3 * m] / count;
    scores[prefix + "top1"] = sums[3 * m + 1] / count;
    scores[prefix + "top5"] = sums[3 * m + 2] / count;
  }
  return scores;
}

void Trainer::ScoreBatch(ImageClassifierImpl& model, const TensorBatch& batch, double* sums) {
  torch::Tensor logits;
  {
    AutocastScope autocast(device_.type(), autocast_dtype_, autocast_);
    logits = model.forward(batch.images).to(torch::kFloat32);
  }
  namespace F = torch::nn::functional;
  sums[0] += F::cross_entropy(logits, batch.labels, F::CrossEntropyFuncOptions().reduction(torch::kSum))
                 .item<double>();
  const int64_t k = std::min<int64_t>(5, num_classes_);
  torch::Tensor hits = std::get<1>(logits.topk(k, 1)).eq(batch.labels.unsqueeze(1));
  sums[1] += hits.select(1, 0).sum().item<double>();
  sums[2] += hits.any(1).sum().item<double>();
}

TensorBatch Trainer::Tensors(const pipeline::Batch& batch, int size) const {
  const EvalPreset preset;
  return ToTensors(batch, size, num_classes_, device_, preset.mean, preset.std);
}

TensorBatch Trainer::NextTrainBatch() {
  trace::ScopedTrace range("input");
  if (o_.synthetic) return synthetic_;
  std::optional<loader::LoaderBatch> next = train_pass_->Next();
  if (!next) throw std::runtime_error("the training pipeline ended early");
  TensorBatch batch = Tensors(*next->batch, o_.loader.image_size);
  if (next->mix) {
    MixImages(batch.images, *next->mix);
    batch.mix = next->mix;
  }
  return batch;
}

torch::Tensor Trainer::ForwardLoss(const TensorBatch& batch) {
  trace::ScopedTrace range("forward");
  torch::Tensor logits;
  {
    AutocastScope autocast(device_.type(), autocast_dtype_, autocast_);
    logits = model_->forward(batch.images);
  }
  return MixedCrossEntropy(logits.to(torch::kFloat32), batch.labels, batch.mix, o_.label_smoothing);
}

void Trainer::ResumeEma(const Checkpoint& c, const std::string& path) {
  if (c.model_ema.empty()) {
    Message(path + " holds no model EMA: the average starts from the resumed model");
    return;
  }
  ema_->Load(c.model_ema, c.model_ema_updates, path);
}

void Trainer::SaveCheckpointFile(int64_t epoch, int64_t step_in_epoch, bool epoch_end) {
  if (o_.checkpoint_dir.empty()) return;
  // 1. Every rank's pipeline position (rank 0 collects them).
  std::string state = train_loader_ ? loader::SerializeLoaderState(train_loader_->State()) : std::string();
  std::vector<std::string> states = group_ ? group_->GatherBytes("pipeline_state", state)
                                           : std::vector<std::string>{state};
  if (env_.rank != 0) return;
  // 2. One file, written atomically: last.pt, and at epoch ends epoch-NNN.pt too.
  Checkpoint c;
  c.meta.model = o_.model;
  c.meta.num_classes = num_classes_;
  c.meta.image_size = o_.loader.image_size;
  c.meta.class_names = data_.class_names;
  c.meta.epoch = epoch_end ? epoch + 1 : epoch;
  c.meta.step = step_;
  c.meta.step_in_epoch = epoch_end ? 0 : step_in_epoch;
  c.meta.config_json = OptionsJson(o_).dump();
  c.model = ModelState(*model_);
  c.optimizer = OptimizerBytes(*optimizer_);
  c.loss_scale = scaler_->scale();
  if (ema_) {
    c.model_ema = ema_->State();
    c.model_ema_updates = ema_->updates();
  }
  if (!o_.synthetic) c.pipeline_states = std::move(states);
  std::string path = JoinPath(o_.checkpoint_dir, "last.pt");
  SaveCheckpoint(path, c);
  if (epoch_end) {
    char name[32];
    std::snprintf(name, sizeof(name), "epoch-%03lld.pt", static_cast<long long>(epoch + 1));
    SaveCheckpoint(JoinPath(o_.checkpoint_dir, name), c);
  }
  Emit({{"event", "checkpoint"}, {"rank", 0}, {"path", path}, {"step", step_}, {"epoch", c.meta.epoch}});
}

TensorBatch Trainer::SyntheticBatch() const {
  torch::Tensor images = torch::randn({replica_batch_, 3, o_.loader.image_size, o_.loader.image_size}, device_)
                             .contiguous(torch::MemoryFormat::ChannelsLast);
  return {images,
          torch::randint(num_classes_, {replica_batch_}, torch::TensorOptions(device_).dtype(torch::kInt64)),
          std::nullopt};
}

void Trainer::EmitStart() {
  Emit({{"event", "start"}, {"rank", env_.rank}, {"world_size", env_.world_size},
        {"backend", group_ ? group_->backend() : "none"}, {"device", device_.str()},
        {"model", o_.model}, {"classes", num_classes_}, {"global_batch", o_.batch_size},
        {"replica_batch", replica_batch_}, {"steps_per_epoch", steps_per_epoch_},
        {"train_records", train_loader_ ? train_loader_->data().samples : 0}, {"precision", o_.precision},
        {"intra_op_threads", at::get_num_threads()}, {"start_step", step_}});
}

bool Trainer::RunEpoch(int64_t epoch, json* last_eval) {
  Clock::time_point epoch_start = Clock::now();
  double wait_before = wait_seconds_, seconds_before = step_seconds_;
  int64_t images_before = images_;
  // 1. Training: the epoch's pass (a resumed epoch continues the loaded state), its
  //    steps, and the bad records the pass met.
  if (train_loader_) {
    train_loader_->SetEpoch(epoch);
    train_pass_ = train_loader_->Iterate();
  }
  int64_t first = epoch == start_epoch_ ? start_step_in_epoch_ : 0;
  bool stopped = false;
  double train_loss = TrainSteps(epoch, first, &stopped);
  const std::vector<pipeline::StageSnapshot> stats =
      train_pass_ ? train_pass_->Stats() : std::vector<pipeline::StageSnapshot>{};
  for (const pipeline::StageSnapshot& s : stats) {
    bad_records_ += s.errors;
    stand_ins_ += s.stand_ins;
  }
  if (stopped) return false;
  // 2. The epoch event: throughput, the input pipeline's share of the step time, and
  //    its slowest stage.
  double seconds = step_seconds_ - seconds_before;
  double input_wait = (wait_seconds_ - wait_before) / std::max(seconds, 1e-9);
  json event = {{"event", "epoch"}, {"rank", env_.rank}, {"epoch", epoch + 1}, {"step", step_},
                {"train_loss", train_loss},
                {"images_per_s", (images_ - images_before) / std::max(seconds, 1e-9)},
                {"input_wait", input_wait}};
  if (train_pass_ && input_wait > 0.2) {
    event["bottleneck"] = "input pipeline: the model waited " + std::to_string(std::lround(input_wait * 100)) +
                          "% of the time. " +
                          pipeline::BottleneckReport({}, stats, Seconds(Clock::now() - epoch_start));
  }
  // 3. Validation.
  *last_eval = Evaluate();
  event.update(*last_eval);
  Emit(event);
  if (tensorboard_) {
    for (const char* key : {"val_top1", "val_top5", "val_loss"}) {
      if (last_eval->contains(key)) tensorboard_->AddScalar(std::string("val/") + (key + 4), (*last_eval)[key], step_);
    }
    tensorboard_->Flush();
  }
  // 4. The epoch's checkpoint.
  SaveCheckpointFile(epoch, 0, /*epoch_end=*/true);
  return true;
}

json Trainer::Summary(Clock::time_point run_start, int64_t epochs_run, const json& last_eval) {
  // 1. Throughput against the model's own rate (step time less input wait).
  double rate = images_ / std::max(step_seconds_, 1e-9);
  double compute_seconds = step_seconds_ - wait_seconds_;
  double model_rate = images_ / std::max(compute_seconds, 1e-9);
  double input_wait = wait_seconds_ / std::max(step_seconds_, 1e-9);
  json summary = {{"event", "summary"}, {"rank", env_.rank}, {"world_size", env_.world_size},
                  {"model", o_.model}, {"precision", o_.precision}, {"steps", step_},
                  {"epochs", epochs_run}, {"train_loss", last_loss_}, {"images_per_s", rate},
                  {"model_images_per_s", model_rate}, {"input_wait", input_wait},
                  {"seconds", Seconds(Clock::now() - run_start)},
                  {"skipped_steps", scaler_->skipped_steps()},
                  {"val_top1", nullptr}, {"val_top5", nullptr}, {"val_loss", nullptr}};
  summary.update(last_eval);
  // 2. Bad records met by this rank's training pipeline: errors counted, and the
  //    stand-ins that kept its batches full (docs/bad-data.md).
  summary["bad_records"] = bad_records_;
  summary["stand_ins"] = stand_ins_;
  // 3. Every replica must hold the same parameters: rank 0 compares all ranks' CRCs.
  uint32_t crc = ParametersCrc32c(*model_);
  summary["parameters_crc32c"] = crc;
  bool identical = true;
  if (group_) {
    for (const std::string& other : group_->GatherBytes("parameters_crc32c", std::to_string(crc))) {
      identical = identical && other == std::to_string(crc);
    }
  }
  summary["replicas_identical"] = identical;
  // 4. The verdict: input-bound or compute-bound.
  if (!o_.synthetic && images_ > 0) {
    summary["verdict"] = input_wait > 0.1
        ? "input-bound: " + std::to_string(std::lround(100 * rate / model_rate)) +
              "% of the model's rate (" + std::to_string(std::lround(model_rate)) + " images/s without waiting)"
        : "compute-bound: the model waited for input " + std::to_string(std::lround(100 * input_wait)) +
              "% of the time";
  }
  return summary;
}

json Trainer::Run() {
  Clock::time_point run_start = Clock::now();
  // 1. Model, data and optimizer (SetUp); the input: the training loader, or one
  //    synthetic batch over and over; the checkpoint's state.
  SetUp();
  if (o_.synthetic) synthetic_ = SyntheticBatch();
  if (o_.resume) Resume();
  EmitStart();
  // 2. The epochs: train, validate, checkpoint; --max-steps may stop one part way.
  json last_eval = json::object();
  bool stopped = false;
  int64_t epochs_run = 0;
  for (int64_t epoch = start_epoch_; epoch < o_.epochs && !stopped; ++epoch) {
    stopped = !RunEpoch(epoch, &last_eval);
    if (!stopped) ++epochs_run;
  }
  // 3. A run cut short by --max-steps still leaves a checkpoint to resume from.
  if (stopped && !o_.synthetic) {
    int64_t epoch = step_ / steps_per_epoch_;
    SaveCheckpointFile(epoch, step_ % steps_per_epoch_, /*epoch_end=*/false);
  }
  if (tensorboard_) tensorboard_->Flush();
  // 4. The summary.
  json summary = Summary(run_start, epochs_run, last_eval);
  Emit(summary);
  return summary;
}

}  // namespace

json RunTraining(const TrainOptions& options, const DistributedEnv& env, const TrainEventSink& sink) {
  Validate(options, env);
  Trainer trainer(options, env, sink);
  return trainer.Run();
}

}  // namespace imgpipe::train
