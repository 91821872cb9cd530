#include "loader.h"

#include <pybind11/stl.h>

#include <chrono>

#include "host_array.h"
#include "pipeline/stats.h"
#include "util/error.h"

namespace imgpipe::python {

using pipeline::Batch;
using pipeline::PipelineIterator;

// One pass over an epoch: the pipeline's iterator, stopped after `plan.batches`
// batches. Next runs without the GIL; Close may come from another thread (or atexit).
class LoaderPass {
 public:
  LoaderPass(const pipeline::Pipeline<Batch>& batches, const pipeline::PipelineOptions& options,
             int64_t epoch, const RankPlan& plan, const LoaderOptions& o)
      : epoch_(epoch), limit_(plan.batches), plan_(plan), batch_size_(static_cast<int64_t>(o.batch_size)),
        layout_(ParseOutputLayout(o.layout)), image_size_(o.image_size), start_(std::chrono::steady_clock::now()) {
    it_ = std::make_unique<PipelineIterator<Batch>>(batches.MakeIterator(options, static_cast<uint64_t>(epoch)));
    pool_ = &it_->pool();
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
    std::shared_ptr<std::vector<uint8_t>> padded;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mu_);
      if (it_ && yielded_ < limit_) batch = it_->Next();
      if (batch) {
        CheckPaddingLocked(*batch);
        padded = std::make_shared<std::vector<uint8_t>>(PaddedMarksLocked(*batch));
        ++yielded_;
      } else {
        const bool short_pass = it_ && yielded_ < limit_;
        EndLocked();  // the pass is over: its threads stop and its buffers go back
        if (short_pass) {
          throw Error("the pipeline ended after " + std::to_string(yielded_) + " of the " +
                      std::to_string(limit_) + " batches this rank must yield (bad records "
                      "skipped? see Loader.stats())");
        }
      }
    }
    if (!batch) throw py::stop_iteration();
    return LoaderBatch{std::make_shared<Batch>(std::move(*batch)), std::move(padded), layout_, image_size_};
  }

  int64_t epoch() const { return epoch_; }

  // The pool's counters (as it ended, once the pass is over).
  std::pair<size_t, size_t> PoolCounters() {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mu_);
    if (it_) pool_counters_ = {pool_->allocations(), pool_->reuses()};
    return pool_counters_;
  }

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
    if (it_) {
      stats_at_end_ = it_->Stats();
      pool_counters_ = {pool_->allocations(), pool_->reuses()};
    }
    it_.reset();
  }

  // Under last_batch="pad" the padding starts at position plan_.samples of the pass,
  // which holds only while no record was skipped: throws Error (the pass ends) when a
  // batch is short or a stage counted a skipped record. Needs mu_.
  void CheckPaddingLocked(const Batch& batch) {
    if (plan_.pad_to == 0) return;
    int64_t skipped = 0;
    for (const auto& s : it_->Stats()) skipped += s.errors;
    if (skipped == 0 && static_cast<int64_t>(batch.size) == batch_size_) return;
    EndLocked();
    throw Error("last_batch='pad': " + std::to_string(skipped) + " bad record(s) were skipped, so the padded "
                "samples cannot be marked; use error_policy='fail' or last_batch='drop' or 'partial'");
  }

  // 1 for each sample of `batch`, the pass's batch number yielded_, that is padding.
  // Needs mu_.
  std::vector<uint8_t> PaddedMarksLocked(const Batch& batch) const {
    std::vector<uint8_t> marks(batch.size, 0);
    if (plan_.pad_to == 0) return marks;
    const int64_t first = yielded_ * batch_size_;  // position of the batch's first sample
    for (size_t i = 0; i < batch.size; ++i) marks[i] = first + static_cast<int64_t>(i) >= plan_.samples;
    return marks;
  }

  std::mutex mu_;
  std::unique_ptr<PipelineIterator<Batch>> it_;  // guarded by mu_; null once over
  int64_t yielded_ = 0;                          // guarded by mu_
  std::vector<pipeline::StageSnapshot> stats_at_end_;  // guarded by mu_
  const pipeline::BufferPool* pool_ = nullptr;  // the iterator's; read under mu_ while it_ lives
  std::pair<size_t, size_t> pool_counters_;      // guarded by mu_; as the pass ended
  const int64_t epoch_;
  const int64_t limit_;
  const RankPlan plan_;
  const int64_t batch_size_;
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
  plan_ = PlanRank(data_, options_);
  batches_ = BuildBatches(data_, options_, plan_);
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
    pass = std::make_shared<LoaderPass>(batches_, PipelineOptionsOf(options_), epoch_, plan_, options_);
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
  if (batches < 0 || batches > plan_.batches) throw Error("Loader.load_state_dict: bad batch count");
  if (state["pipeline"].is_none() && batches != 0 && batches != plan_.batches) {
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

py::dict Loader::PoolStats() {
  py::dict d;
  if (latest_) {
    auto [allocations, reuses] = latest_->PoolCounters();
    d["allocations"] = allocations;
    d["reuses"] = reuses;
  }
  return d;
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

// Which samples of the batch are padding: uint8 N, 1 for a padded sample.
HostArray PaddedOf(const LoaderBatch& b) {
  return HostArray(b.padded, b.padded->data(), ElementType::kUint8, {static_cast<int64_t>(b.padded->size())});
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
      .def_property_readonly("padded", &PaddedOf,
                             "uint8 N: 1 for a sample that repeats one of this rank's (last_batch='pad'), "
                             "no copy")
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
      .def("pool_stats", &Loader::PoolStats,
           "The latest pass's buffer pool: {'allocations': buffers allocated, 'reuses': buffers reused}.")
      .def("close", &Loader::Close);

  m.def("close_all_loaders", &CloseAllLoaders, "Stops every live pass's threads (registered with atexit).");
}

}  // namespace imgpipe::python
