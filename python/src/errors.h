// Maps imgpipe's C++ exceptions (util/error.h) to the Python classes of
// imgpipe/errors.py, keeping path, offset, reason and errno.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "util/error.h"

namespace imgpipe::python {

// An unknown keyword, or an argument of the wrong type: Python raises
// imgpipe.ArgumentTypeError, a TypeError.
class ArgumentTypeError : public Error {
 public:
  explicit ArgumentTypeError(const std::string& message) : Error(message) {}
};

// Installs the translator: DataError -> imgpipe.DataError(path, offset, reason),
// IoError -> imgpipe.IoError(errno), InvalidArgument -> imgpipe.InvalidArgument (a
// ValueError), ArgumentTypeError -> imgpipe.ArgumentTypeError (a TypeError), any other
// imgpipe::Error -> imgpipe.Error.
void RegisterErrorTranslator();

}  // namespace imgpipe::python
