// imgpipe.Loader: the C++ image pipeline (pipeline/image_samples.h, as `imgpipe bench`
// and `imgpipe train` build it) as a Python iterable of batches whose images and
// labels are HostArrays sharing the pipeline's buffers. Every rank yields exactly
// len(loader) batches per epoch; next() runs with the GIL released; C++ threads never
// call into Python.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "image/presets.h"
#include "loader_data.h"
#include "pipeline/image_samples.h"

namespace imgpipe::python {

namespace py = pybind11;

// The Loader's options; the defaults are the C++ pipeline's (the structs they name).
struct LoaderOptions {
  size_t batch_size = pipeline::ImagePipelineConfig{}.batch_size;
  std::string preset = "train";  // "train" or "eval"
  int image_size = TrainPreset{}.size;
  std::string layout = OutputLayoutName(TrainPreset{}.layout);
  uint64_t seed = pipeline::PipelineOptions{}.seed;
  bool deterministic = pipeline::PipelineOptions{}.deterministic;
  size_t shuffle_buffer = pipeline::ImagePipelineConfig{}.shuffle_buffer;
  int threads = pipeline::PipelineOptions{}.cpu_budget;
  uint64_t ram_budget_bytes = pipeline::PipelineOptions{}.ram_budget_bytes;
  std::string error_policy = ErrorPolicyName(pipeline::PipelineOptions{}.error_policy);
  int rank = 0;
  int world_size = 1;
  std::string last_batch = "drop";  // "drop" or "partial" (one rank only, for now)
  // How `data` is read, as the CLI's --image-key, --label-key and --label-offset
  // (cli/data_options.cc); unset: pipeline::DataSourceOptions's default (detected).
  std::optional<std::string> image_key;
  std::optional<std::string> label_key;  // "none": no labels
  std::optional<int64_t> label_offset = pipeline::DataSourceOptions{}.label_offset;
  // The files of this split (train, validation, test; "" or unsplit data: every file).
  std::string split = "train";
};

// Calls f(name, field, in_state) for every option: the one list of their Python names.
// in_state: the option shapes the batches, so a saved state records it and a loader
// with another value refuses that state.
template <typename Options, typename F>
void ForEachOption(Options& o, F&& f) {
  f("batch_size", o.batch_size, true);
  f("preset", o.preset, true);
  f("image_size", o.image_size, true);
  f("layout", o.layout, true);
  f("seed", o.seed, true);
  f("deterministic", o.deterministic, true);
  f("shuffle_buffer", o.shuffle_buffer, true);
  f("threads", o.threads, false);
  f("ram_budget_bytes", o.ram_budget_bytes, false);
  f("error_policy", o.error_policy, true);
  f("rank", o.rank, true);
  f("world_size", o.world_size, true);
  f("last_batch", o.last_batch, true);
  f("image_key", o.image_key, true);
  f("label_key", o.label_key, true);
  f("label_offset", o.label_offset, true);
  f("split", o.split, true);
}

// One batch: the pipeline's Batch, shared by the arrays exported from it.
struct LoaderBatch {
  std::shared_ptr<pipeline::Batch> batch;
  OutputLayout layout;
  int image_size;
};

class LoaderPass;

class Loader {
 public:
  // Resolves `data`, counts its samples and builds the pipeline; throws Error for a
  // bad option or when this rank would get no batch.
  Loader(const std::string& data, LoaderOptions options);

  // Batches each rank yields per epoch.
  int64_t size() const { return batches_per_epoch_; }
  void SetEpoch(int64_t epoch);
  int64_t epoch() const { return epoch_; }
  // How `data` was resolved: the layout's name (pipeline::LayoutName), the class names
  // (line i: class i; empty when unknown) and ResolveDataSource's description.
  std::string data_layout() const { return pipeline::LayoutName(data_.source.layout); }
  const std::vector<std::string>& class_names() const { return data_.source.class_names; }
  std::string describe_data() const { return data_.source.Describe(); }
  // A new pass over epoch `epoch()` (continuing a loaded state, when there is one).
  std::shared_ptr<LoaderPass> Iterate();
  // The latest pass's position as {epoch, batches, options, data, pipeline (bytes)}.
  py::dict State();
  // Continues from `state` at the next Iterate; throws Error naming the differing
  // option (or the data) when `state` was made by another loader.
  void LoadState(const py::dict& state);
  // Per-stage statistics of the latest pass (empty before the first).
  py::list Stats();
  // `imgpipe bench`'s table and bottleneck line for the latest pass ("" before one).
  std::string Report();
  // Stops the latest pass's threads; Iterate then throws.
  void Close();

 private:
  py::dict OptionsDict() const;

  LoaderOptions options_;
  LoaderData data_;
  pipeline::Pipeline<pipeline::Batch> batches_;
  int64_t batches_per_epoch_ = 0;
  int64_t epoch_ = 0;
  bool closed_ = false;
  std::shared_ptr<LoaderPass> latest_;  // kept for state_dict and stats after the pass
  // A loaded state for the next pass: its pipeline state and batches already yielded.
  std::optional<pipeline::IteratorState> pending_state_;
  int64_t pending_batches_ = 0;
};

// Registers Loader, the batch class and close_all_loaders (for atexit) in `m`.
void BindLoader(py::module_& m);

}  // namespace imgpipe::python
