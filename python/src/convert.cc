#include "convert.h"

#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "convert/converter.h"
#include "convert/summary_json.h"
#include "convert/tfrecord_inspector.h"
#include "image/presets.h"
#include "util/error.h"
#include "util/error_policy.h"
#include "kwargs.h"

namespace imgpipe::python {
namespace py = pybind11;

namespace {

// ConvertOptions from `imgpipe convert`'s options as keywords; defaults: the struct's.
ConvertOptions ConvertOptionsOf(const std::string& input, const std::string& output, const py::kwargs& kwargs) {
  ConvertOptions o;
  o.input = input;
  o.output = output;
  KwargsReader r("imgpipe.convert", kwargs);
  r.ReadParsed<std::string>("split", o.plan.splits, ParseSplits);
  r.ReadParsed<std::string>("shard_size", o.plan.shard_bytes, ParseByteSize);
  r.Read("min_shards", o.plan.min_shards);
  r.Read("threads", o.threads);
  r.Read("seed", o.plan.seed);
  r.ReadParsed<std::string>("verify", o.image.verify, ParseVerifyMode);
  r.ReadParsed<std::string>("non_jpeg", o.image.non_jpeg, ParseNonJpegPolicy);
  r.Read("jpeg_quality", o.image.jpeg_quality);
  r.Read("jpeg_restart_interval", o.image.jpeg_restart_interval);
  r.Read("max_pixels", o.image.max_pixels);
  r.Read("max_resolution", o.image.max_resolution);
  r.Read("resume", o.resume);
  r.Read("worker", o.worker);
  r.Read("num_workers", o.num_workers);
  r.Read("finalize", o.finalize);
  r.Read("staging_dir", o.staging_dir);
  r.Finish();
  return o;
}

// What the converter's progress hook last reported, and whether it has finished.
struct ConvertWatch {
  std::mutex mu;
  std::condition_variable changed;
  ConvertProgress progress;  // guarded by mu
  bool fresh = false;        // guarded by mu; progress not yet handed to Python
  bool done = false;         // guarded by mu
};

// Runs RunConvert on a C++ thread while this (Python) thread waits without the GIL and
// calls `progress(done, total, bytes_done, bytes_total)` at most every 100 ms and once
// at the end; the converter's exception is rethrown here. Returns the --json summary.
std::string Convert(const std::string& input, const std::string& output, const py::object& progress,
                    const py::kwargs& kwargs) {
  const ConvertOptions options = ConvertOptionsOf(input, output, kwargs);
  ConvertWatch watch;
  ConvertSummary summary;
  std::exception_ptr error;
  std::thread worker([&] {
    try {
      summary = RunConvert(options, [&watch](const ConvertProgress& p) {
        std::lock_guard<std::mutex> lock(watch.mu);
        watch.progress = p;
        watch.fresh = true;
      });
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(watch.mu);
    watch.done = true;
    watch.changed.notify_all();
  });
  for (bool done = false; !done;) {
    ConvertProgress p;
    bool fresh = false;
    {
      py::gil_scoped_release release;
      std::unique_lock<std::mutex> lock(watch.mu);
      watch.changed.wait_for(lock, std::chrono::milliseconds(100), [&] { return watch.done; });
      done = watch.done;
      p = watch.progress;
      std::swap(fresh, watch.fresh);
    }
    if (fresh && !progress.is_none()) {
      try {
        progress(p.done, p.total, p.bytes_done, p.bytes_total);
      } catch (...) {  // the conversion cannot be stopped midway: finish it, then raise
        py::gil_scoped_release release;
        worker.join();
        throw;
      }
    }
  }
  worker.join();
  if (error) std::rethrow_exception(error);
  return ConvertSummaryJson(summary);
}

// `imgpipe inspect --json`'s lines for `files` (a data folder's description, then one
// line per TFRecord file), with --on-error and the data-source options as keywords.
std::vector<std::string> Inspect(const std::vector<std::string>& files, const py::kwargs& kwargs) {
  InspectOptions options;
  pipeline::DataSourceOptions source;
  KwargsReader r("imgpipe.inspect", kwargs);
  r.ReadParsed<std::string>("on_error", options.policy, ParseErrorPolicy);
  r.Read("image_key", source.image_key);
  r.Read("label_key", source.label_key);
  r.Read("label_offset", source.label_offset);
  r.Finish();
  py::gil_scoped_release release;
  std::vector<std::string> lines;
  std::vector<std::string> paths;
  for (const std::string& arg : files) {
    InspectTarget target = ResolveInspectTarget(arg, source);
    if (target.source) lines.push_back(DataSourceJson(*target.source));
    paths.insert(paths.end(), target.files.begin(), target.files.end());
  }
  for (const std::string& path : paths) lines.push_back(InspectionJson(InspectTfRecordFile(path, options)));
  return lines;
}

// {"train": {"mean": [...], "std": [...]}, "eval": {...}}: the presets' normalisation.
py::dict Presets() {
  py::dict d;
  d["train"] = py::dict(py::arg("mean") = TrainPreset{}.mean, py::arg("std") = TrainPreset{}.std);
  d["eval"] = py::dict(py::arg("mean") = EvalPreset{}.mean, py::arg("std") = EvalPreset{}.std);
  return d;
}

}  // namespace

void BindConvert(py::module_& m) {
  m.def("_convert", &Convert, py::arg("input"), py::arg("output"), py::arg("progress") = py::none(),
        "imgpipe convert's --json summary; see imgpipe.convert.");
  m.def("_inspect", &Inspect, py::arg("files"), "imgpipe inspect's --json lines; see imgpipe.inspect.");
  m.def("presets", &Presets,
        "The train and eval presets' per-channel mean and std (image/presets.h): the float32 "
        "layout's normalisation, (x / 255 - mean) / std.");
}

}  // namespace imgpipe::python
