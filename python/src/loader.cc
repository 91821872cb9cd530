#include "loader.h"

#include <pybind11/stl.h>

#include <chrono>

#include "host_array.h"
#include "pipeline/stats.h"
#include "util/error.h"

namespace imgpipe::python {

using pipeline::Batch;
using pipeline::PipelineIterator;

// One pass over an epoch: the pipeline's iterator, stopped after `limit` batches.
// Next runs without the GIL; Close may come from another thread (or atexit).
class LoaderPass {
 public:
  LoaderPass(const pipeline::Pipeline<Batch>& batches, const pipeline::PipelineOptions& options,
             int64_t epoch, int64_t limit, OutputLayout layout, int image_size)
      : epoch_(epoch), limit_(limit), layout_(layout), image_size_(image_size),
        start_(std::chrono::steady_clock::now()) {
    it_ = std::make_unique<PipelineIterator<Batch>>(batches.MakeIterator(options, static_cast<uint64_t>(epoch)));
  }

  // Continues after `batches` batches, from the pipeline's saved `state` (null: the
  // pass had ended, so nothing is left to yield); call before Next.
  void Restore(const pipeline::IteratorState* state, int64_t batches) {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mu_);
    if (state) it_->Restore(*state);
    yielded_ = batches;
  }

  // The next batch (StopIteration after `limit` batches); Error when the pipeline ends
  // first (records skipped as bad under the skip policy).
  LoaderBatch Next() {
    std::optional<Batch> batch;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mu_);
      if (it_ && yielded_ < limit_) batch = it_->Next();
      if (!batch) {
        const bool short_pass = it_ && yielded_ < limit_;
        EndLocked();  // the pass is over: its threads stop and its buffers go back
        if (short_pass) {
          throw Error("the pipeline ended after " + std::to_string(yielded_) + " of the " +
                      std::to_string(limit_) + " batches this rank must yield (bad records "
                      "skipped? see Loader.stats())");
        }
      } else {
        ++yielded_;
      }
    }
    if (!batch) throw py::stop_iteration();
    return LoaderBatch{std::make_shared<Batch>(std::move(*batch)), layout_, image_size_};
  }

  int64_t epoch() const { return epoch_; }

  // The pipeline's state (empty once the pass is over) and batches yielded so far.
  std::pair<std::optional<std::string>, int64_t> Save() {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mu_);
    if (!it_) return {std::nullopt, yielded_};
    return {it_->Save().Serialize(), yielded_};
  }

  // The stages' statistics now (or as the pass ended).
  std::vector<pipeline::StageSnapshot> Stats() {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mu_);
    if (!it_) return stats_at_end_;
    return it_->Stats();
  }

  // `imgpipe bench`'s report over this pass so far: the per-stage table, then
  // "bottleneck: ..." naming the stage that limits throughput.
  std::string Report() {
    const std::vector<pipeline::StageSnapshot> after = Stats();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    return pipeline::StatsTable({}, after, seconds) + "bottleneck: " +
           pipeline::BottleneckReport({}, after, seconds) + "\n";
  }

  // Stops the pipeline's threads (waiting for a Next in progress); Next then stops.
  void Close() {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mu_);
    EndLocked();
  }

 private:
  // Keeps the final statistics and stops the pipeline. Needs mu_.
  void EndLocked() {
    if (it_) stats_at_end_ = it_->Stats();
    it_.reset();
  }

  std::mutex mu_;
  std::unique_ptr<PipelineIterator<Batch>> it_;  // guarded by mu_; null once over
  int64_t yielded_ = 0;                          // guarded by mu_
  std::vector<pipeline::StageSnapshot> stats_at_end_;  // guarded by mu_
  const int64_t epoch_;
  const int64_t limit_;
  const OutputLayout layout_;
  const int image_size_;
  const std::chrono::steady_clock::time_point start_;
};

namespace {

// Every pass made, so that close_all_loaders (atexit) stops the live ones' threads
// before the interpreter and the C++ runtime shut down.
std::mutex registry_mu;
std::vector<std::weak_ptr<LoaderPass>> registry;  // guarded by registry_mu

// Adds `pass` to the registry, dropping the entries of passes already freed.
void RegisterPass(const std::shared_ptr<LoaderPass>& pass) {
  std::lock_guard<std::mutex> lock(registry_mu);
  std::erase_if(registry, [](const std::weak_ptr<LoaderPass>& p) { return p.expired(); });
  registry.push_back(pass);
}

// Closes every live pass (their threads are joined); the registry is left empty.
void CloseAllLoaders() {
  std::vector<std::shared_ptr<LoaderPass>> live;
  {
    std::lock_guard<std::mutex> lock(registry_mu);
    for (const auto& p : registry) {
      if (auto pass = p.lock()) live.push_back(std::move(pass));
    }
    registry.clear();
  }
  for (const auto& pass : live) pass->Close();
}

// Throws Error naming the first option that is out of range.
void CheckOptions(const LoaderOptions& o) {
  auto fail = [](const std::string& what) { throw Error("Loader: " + what); };
  if (o.batch_size == 0) fail("batch_size must be positive");
  if (o.preset != "train" && o.preset != "eval") fail("preset must be 'train' or 'eval', not '" + o.preset + "'");
  if (o.image_size < 8 || o.image_size > 4096) fail("image_size must be in [8, 4096]");
  if (o.threads < 0) fail("threads must be 0 (all CPUs) or positive");
  ParseOutputLayout(o.layout);     // throws for an unknown layout
  ParseErrorPolicy(o.error_policy);  // and policy
  if (o.world_size < 1 || o.rank < 0 || o.rank >= o.world_size) {
    fail("rank " + std::to_string(o.rank) + " is outside world_size " + std::to_string(o.world_size));
  }
  if (o.last_batch == "partial" && o.world_size > 1) {
    fail("last_batch='partial' with world_size > 1 is not implemented yet (issue 11): use 'drop'");
  }
  if (o.last_batch != "drop" && o.last_batch != "partial") {
    fail("last_batch must be 'drop' or 'partial' ('pad' is not implemented yet), not '" + o.last_batch + "'");
  }
}

// The pipeline `imgpipe bench`/`train` build for these options, over this rank's shard.
pipeline::Pipeline<Batch> BuildBatches(const LoaderData& data, const LoaderOptions& o) {
  pipeline::ImagePipelineConfig config;
  config.patterns = data.paths;
  config.schema = data.source.schema;
  config.batch_size = o.batch_size;
  config.drop_remainder = o.last_batch == "drop";
  config.shuffle_buffer = o.shuffle_buffer;
  config.num_shards = o.world_size;
  config.shard_index = o.rank;
  config.shard_policy = pipeline::ShardPolicy::kData;  // every record once, even counts
  const OutputLayout layout = ParseOutputLayout(o.layout);
  if (o.preset == "eval") return pipeline::EvalPipeline(config, EvalPresetForCrop(o.image_size, layout));
  TrainPreset preset;
  preset.size = o.image_size;
  preset.layout = layout;
  return pipeline::TrainPipeline(config, preset);
}

// Batches every rank yields: the smallest shard (samples / world_size, rounded down;
// shards differ by at most one) in whole batches, or with the last partial one.
int64_t BatchesPerEpoch(const LoaderData& data, const LoaderOptions& o) {
  const int64_t shard = data.samples / o.world_size;
  const auto b = static_cast<int64_t>(o.batch_size);
  const int64_t n = o.last_batch == "drop" ? shard / b : (shard + b - 1) / b;
  if (n == 0) {
    throw Error("Loader: batch_size " + std::to_string(b) + " is larger than the " + std::to_string(shard) +
                " samples rank " + std::to_string(o.rank) + " gets (" + std::to_string(data.samples) +
                " in all, world_size " + std::to_string(o.world_size) + ")");
  }
  return n;
}

// The pipeline-wide options (tf.data's Options) of these loader options.
pipeline::PipelineOptions PipelineOptionsOf(const LoaderOptions& o) {
  pipeline::PipelineOptions options;
  options.deterministic = o.deterministic;
  options.cpu_budget = o.threads;
  options.ram_budget_bytes = o.ram_budget_bytes;
  options.seed = o.seed;
  options.error_policy = ParseErrorPolicy(o.error_policy);
  return options;
}

// The data-source options (pipeline::DataSourceOptions) of these loader options.
pipeline::DataSourceOptions DataSourceOptionsOf(const LoaderOptions& o) {
  pipeline::DataSourceOptions options;
  options.image_key = o.image_key.value_or(options.image_key);
  options.label_key = o.label_key.value_or(options.label_key);
  options.label_offset = o.label_offset;
  return options;
}

// Every option with its default, in the order of ForEachOption.
py::dict DefaultOptions() {
  const LoaderOptions defaults;
  py::dict d;
  ForEachOption(defaults, [&](const char* name, const auto& field, bool) { d[name] = field; });
  return d;
}

// One stage's statistics as `imgpipe bench --json` names them (times in seconds).
py::dict StageDict(const pipeline::StageSnapshot& s) {
  py::dict d;
  d["name"] = s.name;
  d["depth"] = s.depth;
  d["elements"] = s.elements;
  d["bytes"] = s.bytes;
  d["busy_s"] = s.busy_ns / 1e9;
  d["input_wait_s"] = s.input_wait_ns / 1e9;
  d["output_wait_s"] = s.output_wait_ns / 1e9;
  d["errors"] = s.errors;
  d["parallelism"] = s.parallelism;
  d["buffer_fill"] = s.buffer_fill;
  d["buffer_capacity"] = s.buffer_capacity;
  return d;
}

}  // namespace

Loader::Loader(const std::string& data, LoaderOptions options)
    : options_(std::move(options)), batches_(nullptr) {
  CheckOptions(options_);
  {
    py::gil_scoped_release release;  // resolving and counting may scan every file
    data_ = ResolveLoaderData(data, DataSourceOptionsOf(options_), options_.split,
                              ParseErrorPolicy(options_.error_policy));
  }
  batches_per_epoch_ = BatchesPerEpoch(data_, options_);
  batches_ = BuildBatches(data_, options_);
}

void Loader::SetEpoch(int64_t epoch) {
  if (epoch < 0) throw Error("Loader.set_epoch: epoch must be >= 0");
  if (epoch != epoch_) {  // a loaded state belongs to its own epoch: start this one afresh
    pending_state_.reset();
    pending_batches_ = 0;
  }
  epoch_ = epoch;
}

std::shared_ptr<LoaderPass> Loader::Iterate() {
  if (closed_) throw Error("Loader: iterated after close()");
  std::shared_ptr<LoaderPass> pass;
  {
    py::gil_scoped_release release;
    pass = std::make_shared<LoaderPass>(batches_, PipelineOptionsOf(options_), epoch_, batches_per_epoch_,
                                        ParseOutputLayout(options_.layout), options_.image_size);
  }
  if (pending_state_ || pending_batches_ > 0) {
    pass->Restore(pending_state_ ? &*pending_state_ : nullptr, pending_batches_);
  }
  pending_state_.reset();
  pending_batches_ = 0;
  RegisterPass(pass);
  latest_ = pass;
  return pass;
}

py::dict Loader::OptionsDict() const {
  py::dict d;
  ForEachOption(options_, [&](const char* name, const auto& field, bool in_state) {
    if (in_state) d[name] = field;
  });
  return d;
}

py::dict Loader::State() {
  py::dict state;
  state["version"] = 1;
  state["epoch"] = epoch_;
  state["batches"] = 0;
  state["pipeline"] = py::none();
  if (latest_ && latest_->epoch() == epoch_) {  // else epoch_ has not started yet
    auto [pipeline_state, batches] = latest_->Save();
    state["batches"] = batches;
    if (pipeline_state) state["pipeline"] = py::bytes(*pipeline_state);
  }
  state["options"] = OptionsDict();
  state["data"] = DataFingerprint(data_);
  return state;
}

void Loader::LoadState(const py::dict& state) {
  for (const char* key : {"version", "epoch", "batches", "options", "data", "pipeline"}) {
    if (!state.contains(key)) throw Error(std::string("Loader.load_state_dict: the state has no '") + key + "'");
  }
  if (state["version"].cast<int>() != 1) {
    throw Error("Loader.load_state_dict: not a state of this Loader version (version 1 expected)");
  }
  const py::dict saved = state["options"].cast<py::dict>();
  const py::dict mine = OptionsDict();
  for (auto [key, value] : mine) {
    if (!saved.contains(key) || !py::object(saved[key]).equal(py::reinterpret_borrow<py::object>(value))) {
      throw Error("Loader.load_state_dict: the state was made with " + py::str(key).cast<std::string>() + "=" +
                  (saved.contains(key) ? py::repr(saved[key]).cast<std::string>() : std::string("(unset)")) +
                  ", this loader has " + py::repr(value).cast<std::string>());
    }
  }
  if (state["data"].cast<uint32_t>() != DataFingerprint(data_)) {
    throw Error("Loader.load_state_dict: the state was made from other data (files, sizes or sample "
                "count differ)");
  }
  const int64_t batches = state["batches"].cast<int64_t>();
  if (batches < 0 || batches > batches_per_epoch_) throw Error("Loader.load_state_dict: bad batch count");
  if (state["pipeline"].is_none() && batches != 0 && batches != batches_per_epoch_) {
    throw Error("Loader.load_state_dict: the state has no pipeline position (it was taken after close())");
  }
  epoch_ = state["epoch"].cast<int64_t>();
  pending_batches_ = batches;
  pending_state_.reset();
  if (!state["pipeline"].is_none()) {
    pending_state_ = pipeline::IteratorState::Deserialize(std::string(state["pipeline"].cast<py::bytes>()));
  }
}

py::list Loader::Stats() {
  py::list stages;
  if (const auto& pass = latest_) {
    for (const auto& s : pass->Stats()) stages.append(StageDict(s));
  }
  return stages;
}

std::string Loader::Report() {
  return latest_ ? latest_->Report() : std::string();
}

void Loader::Close() {
  closed_ = true;
  if (latest_) latest_->Close();
}

namespace {

// The batch's pixels in its layout's shape; Error when the samples' size disagrees.
HostArray ImagesOf(const LoaderBatch& b) {
  const auto n = static_cast<int64_t>(b.batch->size);
  const int64_t s = b.image_size;
  if (b.batch->sample_bytes != OutputBytes(b.layout, b.image_size)) {
    throw Error("batch samples of " + std::to_string(b.batch->sample_bytes) + " bytes do not match the layout");
  }
  if (b.layout == OutputLayout::kUint8Nhwc) {
    return HostArray(b.batch, b.batch->data.data(), ElementType::kUint8, {n, s, s, 3});
  }
  return HostArray(b.batch, b.batch->data.data(), ElementType::kFloat32, {n, 3, s, s});
}

// The batch's labels, one int64 per sample.
HostArray LabelsOf(const LoaderBatch& b) {
  return HostArray(b.batch, b.batch->labels.data(), ElementType::kInt64,
                   {static_cast<int64_t>(b.batch->labels.size())});
}

// Loader(data, **options): each keyword sets the LoaderOptions field of its name;
// an unknown name or a value of the wrong type throws Error.
std::unique_ptr<Loader> MakeLoader(const std::string& data, const py::kwargs& options) {
  LoaderOptions o;
  size_t used = 0;
  ForEachOption(o, [&](const char* name, auto& field, bool) {
    if (!options.contains(name)) return;
    try {
      field = options[name].template cast<std::decay_t<decltype(field)>>();
    } catch (const py::cast_error&) {
      throw Error(std::string("Loader: option ") + name + "=" + py::repr(options[name]).template cast<std::string>() +
                  " has the wrong type (default: " + py::repr(py::cast(field)).template cast<std::string>() + ")");
    }
    ++used;
  });
  if (used != options.size()) {
    const py::dict known = DefaultOptions();
    for (auto [key, value] : options) {
      if (!known.contains(key)) {
        throw Error("Loader: unknown option '" + py::str(key).cast<std::string>() + "' (options: " +
                    py::str(py::list(known)).cast<std::string>() + ")");
      }
    }
  }
  return std::make_unique<Loader>(data, std::move(o));
}

}  // namespace

void BindLoader(py::module_& m) {
  py::class_<LoaderBatch>(m, "Batch", "A batch: images and labels share the loader's buffer.")
      .def_property_readonly("images", &ImagesOf,
                             "float32 N x 3 x S x S (normalised) or uint8 N x S x S x 3, no copy")
      .def_property_readonly("labels", &LabelsOf, "int64 N (-1: the record has no label), no copy")
      .def("__len__", [](const LoaderBatch& b) { return b.batch->size; });

  py::class_<LoaderPass, std::shared_ptr<LoaderPass>>(m, "LoaderIterator")
      .def("__iter__", [](py::object self) { return self; })
      .def("__next__", &LoaderPass::Next)
      .def("close", &LoaderPass::Close, "Stops this pass's threads.");

  py::class_<Loader>(m, "Loader", "The C++ image pipeline as an iterable of batches (see imgpipe.Loader).")
      .def(py::init(&MakeLoader), py::arg("data"),
           "Loader(data: what `imgpipe bench --data` accepts, **options); Loader.defaults() lists the "
           "options.")
      .def_static("defaults", &DefaultOptions, "Every option with its default (the C++ pipeline's).")
      .def("__len__", &Loader::size)
      .def("__iter__", &Loader::Iterate)
      .def("set_epoch", &Loader::SetEpoch, py::arg("epoch"))
      .def_property_readonly("epoch", &Loader::epoch)
      .def_property_readonly("data_layout", &Loader::data_layout,
                             "How `data` was laid out: imgpipe, tf-slim, tfds, tfrecord or image-folder.")
      .def_property_readonly("class_names", &Loader::class_names,
                             "Class names, item i naming label i (empty when unknown).")
      .def("describe_data", &Loader::describe_data, "What was found in `data` and chosen, in words.")
      .def("_state", &Loader::State)
      .def("_load_state", &Loader::LoadState, py::arg("state"))
      .def("stats", &Loader::Stats, "Per-stage statistics of the latest pass (list of dicts).")
      .def("report", &Loader::Report,
           "imgpipe bench's per-stage table and bottleneck line for the latest pass so far.")
      .def("close", &Loader::Close);

  m.def("close_all_loaders", &CloseAllLoaders, "Stops every live pass's threads (registered with atexit).");
}

}  // namespace imgpipe::python
