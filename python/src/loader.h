// imgpipe.Loader: the library's loader::Loader (loader/loader.h; the one `imgpipe
// train` and `bench` use) bound to Python: options from keywords (kwargs.h), states as
// dicts, batches whose images and labels are HostArrays sharing the pipeline's buffers.
// Every call that may wait on the pipeline runs with the GIL released; C++ threads
// never call into Python.
#pragma once

#include <pybind11/pybind11.h>

namespace imgpipe::python {

// Registers Loader, the batch class, the iterator and close_all_loaders (for atexit)
// in `m`.
void BindLoader(pybind11::module_& m);

}  // namespace imgpipe::python
