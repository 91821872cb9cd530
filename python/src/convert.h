// imgpipe.convert and imgpipe.inspect: `imgpipe convert` and `imgpipe inspect` as
// functions whose keyword arguments are the command-line options (- as _) and whose
// results are the commands' --json text (convert/summary_json.h). The work runs with
// the GIL released; C++ threads never call into Python (the convert progress callback
// is called by the calling Python thread, which polls the converter's progress).
#pragma once

#include <pybind11/pybind11.h>

namespace imgpipe::python {

// Registers _convert, _inspect and presets (the presets' mean and std) in `m`.
void BindConvert(pybind11::module_& m);

}  // namespace imgpipe::python
