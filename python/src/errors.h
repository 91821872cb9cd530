// Maps imgpipe's C++ exceptions (util/error.h) to the Python classes of
// imgpipe/errors.py, keeping path, offset, reason and errno.
#pragma once

#include <pybind11/pybind11.h>

namespace imgpipe::python {

// Installs the translator: DataError -> imgpipe.DataError(path, offset, reason),
// IoError -> imgpipe.IoError(errno), any other imgpipe::Error -> imgpipe.Error.
void RegisterErrorTranslator();

}  // namespace imgpipe::python
