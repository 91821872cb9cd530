#include "loader.h"

#include <pybind11/stl.h>

#include "host_array.h"
#include "pipeline/stats.h"
#include "util/error.h"

namespace imgpipe::python {

namespace {

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
  d["stand_ins"] = s.stand_ins;
  d["warnings"] = s.warnings;
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
  passes_ = std::make_shared<PassAhead>(batches_, PipelineOptionsOf(options_), plan_, options_);
}

void Loader::SetEpoch(int64_t epoch) {
  if (epoch < 0) throw Error("Loader.set_epoch: epoch must be >= 0");
  if (epoch != epoch_) {  // a loaded state belongs to its own epoch: start this one afresh
    pending_state_.reset();
    pending_batches_ = 0;
  }
  epoch_ = epoch;
  epoch_chosen_ = true;
  passes_->EpochSet(epoch);  // a pass started ahead for another epoch stops now
}

std::optional<int64_t> Loader::ExpectedNextEpoch() const {
  if (!options_.start_ahead) return std::nullopt;
  const bool stepped = previous_epoch_ ? *previous_epoch_ != epoch_ : epoch_chosen_;
  return stepped ? epoch_ + 1 : epoch_;
}

std::shared_ptr<LoaderPass> Loader::Iterate() {
  if (closed_) throw Error("Loader: iterated after close()");
  const bool restoring = pending_state_ || pending_batches_ > 0;
  std::shared_ptr<LoaderPass> pass = passes_->Begin(epoch_, restoring, ExpectedNextEpoch());
  if (restoring) pass->Restore(pending_state_ ? &*pending_state_ : nullptr, pending_batches_);
  pending_state_.reset();
  pending_batches_ = 0;
  previous_epoch_ = epoch_;
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
  epoch_chosen_ = true;
  passes_->EpochSet(std::nullopt);  // the next pass continues the state: a fresh one
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
  passes_->Close();
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

// Which samples of the batch are padding or stand-ins: uint8 N, 1 for such a sample.
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
                             "uint8 N: 1 for a sample that repeats one of this rank's (last_batch='pad') "
                             "or stands in for a record that failed to decode (error_policy='skip'), "
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
           "The loader's buffer pool, shared by its passes (epochs): {'allocations': buffers allocated, "
           "'reuses': buffers reused}, as of the latest pass.")
      .def("close", &Loader::Close);

  m.def("close_all_loaders", &CloseAllLoaders, "Stops every live pass's threads (registered with atexit).");
}

}  // namespace imgpipe::python
