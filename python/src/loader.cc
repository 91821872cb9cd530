#include "loader.h"

#include <pybind11/stl.h>

#include "host_array.h"
#include "kwargs.h"
#include "loader/loader.h"
#include "util/error.h"

namespace imgpipe::python {

namespace py = pybind11;
using loader::Loader;
using loader::LoaderBatch;
using loader::LoaderOptions;
using loader::LoaderPass;
using loader::LoaderState;

namespace {

// Every option with its default, in the order of ForEachOption.
py::dict DefaultOptions() {
  const LoaderOptions defaults;
  py::dict d;
  loader::ForEachOption(defaults, [&](const loader::OptionSpec& spec, const auto& field) { d[spec.name] = field; });
  return d;
}

// Loader(data, **options): each keyword sets the LoaderOptions field of its name.
std::unique_ptr<Loader> MakeLoader(const std::string& data, const py::kwargs& kwargs) {
  LoaderOptions o;
  KwargsReader reader("Loader", kwargs);
  loader::ForEachOption(o, [&](const loader::OptionSpec& spec, auto& field) { reader.Read(spec.name, field); });
  reader.Finish();
  py::gil_scoped_release release;  // resolving and counting may scan every file
  return std::make_unique<Loader>(data, std::move(o));
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

// The state as a dict: {version, epoch, batches, options (those that shape the
// batches), data (fingerprint), pipeline (bytes or None)}.
py::dict StateDict(Loader& l) {
  LoaderState state;
  {
    py::gil_scoped_release release;
    state = l.State();
  }
  py::dict options;
  loader::ForEachOption(state.options, [&](const loader::OptionSpec& spec, const auto& field) {
    if (spec.in_state) options[spec.name] = field;
  });
  py::dict d;
  d["version"] = LoaderState::kVersion;
  d["epoch"] = state.epoch;
  d["batches"] = state.batches;
  d["pipeline"] = state.pipeline ? py::object(py::bytes(*state.pipeline)) : py::object(py::none());
  d["options"] = options;
  d["data"] = state.data;
  return d;
}

// A state dict back (an option missing from it: the default, as states saved before
// the option existed had it).
void LoadStateDict(Loader& l, const py::dict& d) {
  for (const char* key : {"version", "epoch", "batches", "options", "data", "pipeline"}) {
    if (!d.contains(key)) throw InvalidArgument(std::string("Loader.load_state_dict: the state has no '") + key + "'");
  }
  if (d["version"].cast<int64_t>() != LoaderState::kVersion) {
    throw InvalidArgument("Loader.load_state_dict: not a state of this Loader version (version " +
                          std::to_string(LoaderState::kVersion) + " expected)");
  }
  LoaderState state;
  const py::dict options = d["options"].cast<py::dict>();
  KwargsReader reader("Loader.load_state_dict: the state's options", py::kwargs(options));
  loader::ForEachOption(state.options, [&](const loader::OptionSpec& spec, auto& field) { reader.Read(spec.name, field); });
  state.epoch = d["epoch"].cast<int64_t>();
  state.batches = d["batches"].cast<int64_t>();
  state.data = d["data"].cast<uint32_t>();
  if (!d["pipeline"].is_none()) state.pipeline = std::string(d["pipeline"].cast<py::bytes>());
  py::gil_scoped_release release;
  l.LoadState(state);
}

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

// The batch's mixing draw as a dict {kind: "mixup" or "cutmix", lambda, box: (y0, y1,
// x0, x1)}, None when mixing is off.
py::object MixOf(const LoaderBatch& b) {
  if (!b.mix) return py::none();
  py::dict d;
  d["kind"] = loader::MixKindName(b.mix->kind);
  d["lambda"] = b.mix->lambda;
  d["box"] = py::make_tuple(b.mix->y0, b.mix->y1, b.mix->x0, b.mix->x1);
  return d;
}

// The pass's next batch, waiting without the GIL; StopIteration at the end.
LoaderBatch NextBatch(LoaderPass& pass) {
  std::optional<LoaderBatch> batch;
  {
    py::gil_scoped_release release;
    batch = pass.Next();
  }
  if (!batch) throw py::stop_iteration();
  return std::move(*batch);
}

}  // namespace

void BindLoader(py::module_& m) {
  const auto no_gil = py::call_guard<py::gil_scoped_release>();
  py::class_<LoaderBatch>(m, "Batch", "A batch: images and labels share the loader's buffer.")
      .def_property_readonly("images", &ImagesOf,
                             "float32 N x 3 x S x S (normalised) or uint8 N x S x S x 3, no copy")
      .def_property_readonly("labels", &LabelsOf, "int64 N (-1: the record has no label), no copy")
      .def_property_readonly("padded", &PaddedOf,
                             "uint8 N: 1 for a sample that repeats one of this rank's (last_batch='pad') "
                             "or stands in for a record that failed to decode (error_policy='skip'), "
                             "no copy")
      .def_property_readonly("mix", &MixOf,
                             "The batch's mixup/cutmix draw: {'kind', 'lambda', 'box': (y0, y1, x0, x1)}, "
                             "applied to float32 images already, for uint8 to apply after normalising; "
                             "None when mixing is off. Labels stay the samples' own; the partners' are "
                             "the labels rolled by one")
      .def_property_readonly("mix_lambda",
                             [](const LoaderBatch& b) {
                               return b.mix ? py::object(py::float_(b.mix->lambda)) : py::object(py::none());
                             },
                             "Weight of the samples' own labels in a mixed batch; None when unmixed")
      .def("__len__", [](const LoaderBatch& b) { return b.batch->size; });

  py::class_<LoaderPass, std::shared_ptr<LoaderPass>>(m, "LoaderIterator")
      .def("__iter__", [](py::object self) { return self; })
      .def("__next__", &NextBatch)
      .def("close", &LoaderPass::Close, no_gil, "Stops this pass's threads.");

  py::class_<Loader>(m, "Loader", "The C++ image pipeline as an iterable of batches (see imgpipe.Loader).")
      .def(py::init(&MakeLoader), py::arg("data"),
           "Loader(data: what `imgpipe bench --data` accepts, **options); Loader.defaults() lists the "
           "options.")
      .def_static("defaults", &DefaultOptions, "Every option with its default (the C++ pipeline's).")
      .def("__len__", &Loader::size)
      .def("__iter__", &Loader::Iterate, no_gil)
      .def("set_epoch", &Loader::SetEpoch, py::arg("epoch"), no_gil)
      .def_property_readonly("epoch", &Loader::epoch)
      .def_property_readonly("data_layout",
                             [](const Loader& l) { return pipeline::LayoutName(l.data().source.layout); },
                             "How `data` was laid out: imgpipe, tf-slim, tfds, tfrecord or image-folder.")
      .def_property_readonly("class_names", [](const Loader& l) { return l.data().source.class_names; },
                             "Class names, item i naming label i (empty when unknown).")
      .def("describe_data", [](const Loader& l) { return l.data().source.Describe(); },
           "What was found in `data` and chosen, in words.")
      .def("memory", [](const Loader& l) {
             const loader::MemoryNeed& m = l.memory();
             py::dict d;
             d["batch_bytes"] = m.batch_bytes;
             d["batches_per_pass"] = m.batches_per_pass;
             d["shuffle_bytes"] = m.shuffle_bytes;
             d["read_ahead_bytes"] = m.read_ahead_bytes;
             d["passes"] = m.passes;
             d["minimum_bytes"] = m.minimum_bytes;
             d["budget_bytes"] = m.budget_bytes;
             d["machine_bytes"] = m.machine_bytes;
             return d;
           },
           "What the loader's buffers hold at least, and the budget and machine memory it was checked "
           "against (bytes).")
      .def("_state", &StateDict)
      .def("_load_state", &LoadStateDict, py::arg("state"))
      .def("stats",
           [](Loader& l) {
             std::vector<pipeline::StageSnapshot> stages;
             {
               py::gil_scoped_release release;
               stages = l.Stats();
             }
             py::list list;
             for (const auto& s : stages) list.append(StageDict(s));
             return list;
           },
           "Per-stage statistics of the latest pass (list of dicts).")
      .def("report", &Loader::Report, no_gil,
           "imgpipe bench's per-stage table and bottleneck line for the latest pass so far.")
      .def("pool_stats",
           [](Loader& l) {
             py::dict d;
             if (auto counters = l.PoolCounters()) {
               d["allocations"] = counters->first;
               d["reuses"] = counters->second;
             }
             return d;
           },
           "The loader's buffer pool, shared by its passes (epochs): {'allocations': buffers allocated, "
           "'reuses': buffers reused}, as of the latest pass.")
      .def("close", &Loader::Close, no_gil);

  m.def("close_all_loaders", &loader::CloseAllLoaders, no_gil,
        "Stops every live pass's threads (registered with atexit).");
}

}  // namespace imgpipe::python
