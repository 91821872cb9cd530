// imgpipe.Loader: the C++ image pipeline (pipeline/image_samples.h, as `imgpipe bench`
// and `imgpipe train` build it) as a Python iterable of batches whose images and
// labels are HostArrays sharing the pipeline's buffers. Every rank yields exactly
// len(loader) batches per epoch; next() runs with the GIL released; C++ threads never
// call into Python.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "loader_data.h"
#include "loader_options.h"
#include "loader_pass.h"
#include "pipeline/image_samples.h"

namespace imgpipe::python {

namespace py = pybind11;

class Loader {
 public:
  // Resolves `data`, counts its samples and builds the pipeline; throws Error for a
  // bad option or when this rank would get no batch.
  Loader(const std::string& data, LoaderOptions options);

  // Batches each rank yields per epoch.
  int64_t size() const { return plan_.batches; }
  void SetEpoch(int64_t epoch);
  int64_t epoch() const { return epoch_; }
  // How `data` was resolved: the layout's name (pipeline::LayoutName), the class names
  // (line i: class i; empty when unknown) and ResolveDataSource's description.
  std::string data_layout() const { return pipeline::LayoutName(data_.source.layout); }
  const std::vector<std::string>& class_names() const { return data_.source.class_names; }
  std::string describe_data() const { return data_.source.Describe(); }
  // A new pass over epoch `epoch()` (continuing a loaded state, when there is one): the
  // pass started ahead when it is over that epoch (see PassAhead), else a new one.
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
  // Buffers of the loader's pool, which its passes share, as of the latest pass:
  // {"allocations": allocated from the system, "reuses": handed out again} ({} before
  // the first pass).
  py::dict PoolStats();
  // Stops the latest pass's threads and the one started ahead; Iterate then throws.
  void Close();

 private:
  py::dict OptionsDict() const;
  // The epoch the iteration after this one is expected to ask for (none: start nothing
  // ahead, as with start_ahead=False): this one's again when the last two iterations
  // were over the same epoch, the next one when they differed; before a second
  // iteration, the next one when set_epoch or load_state_dict was called.
  std::optional<int64_t> ExpectedNextEpoch() const;

  LoaderOptions options_;
  LoaderData data_;
  pipeline::Pipeline<pipeline::Batch> batches_;
  RankPlan plan_;
  int64_t epoch_ = 0;
  bool epoch_chosen_ = false;              // set_epoch or load_state_dict was called
  std::optional<int64_t> previous_epoch_;  // of the latest pass handed out
  bool closed_ = false;
  std::shared_ptr<PassAhead> passes_;   // makes the passes; holds the one started ahead
  std::shared_ptr<LoaderPass> latest_;  // kept for state_dict and stats after the pass
  // A loaded state for the next pass: its pipeline state and batches already yielded.
  std::optional<pipeline::IteratorState> pending_state_;
  int64_t pending_batches_ = 0;
};

// Registers Loader, the batch class and close_all_loaders (for atexit) in `m`.
void BindLoader(py::module_& m);

}  // namespace imgpipe::python
