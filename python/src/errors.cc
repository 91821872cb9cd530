#include "errors.h"

#include "util/error.h"

namespace imgpipe::python {
namespace py = pybind11;

namespace {

// Raises imgpipe.errors.<name>(*args) as the current Python exception.
void RaisePythonError(const char* name, const py::tuple& args) {
  py::object type = py::module_::import("imgpipe.errors").attr(name);
  py::object error = type(*args);
  PyErr_SetObject(type.ptr(), error.ptr());
}

// A message as Python text: bytes a reason quotes from a file (a WebP's chunk name, a PNM
// token) need not be UTF-8, and pybind11's conversion would raise UnicodeDecodeError
// instead of the error; they become U+FFFD.
py::str Text(const std::string& s) {
  return py::reinterpret_steal<py::str>(PyUnicode_DecodeUTF8(s.data(), s.size(), "replace"));
}

}  // namespace

void RegisterErrorTranslator() {
  py::register_exception_translator([](std::exception_ptr p) {
    if (!p) return;
    try {
      std::rethrow_exception(p);
    } catch (const DataError& e) {
      py::object offset = e.offset() ? py::object(py::int_(*e.offset())) : py::object(py::none());
      RaisePythonError("DataError",
                       py::make_tuple(Text(e.what()), e.path(), offset, Text(e.reason())));
    } catch (const IoError& e) {
      RaisePythonError("IoError", py::make_tuple(Text(e.what()), e.error_number()));
    } catch (const InvalidArgument& e) {
      RaisePythonError("InvalidArgument", py::make_tuple(Text(e.what())));
    } catch (const ArgumentTypeError& e) {
      RaisePythonError("ArgumentTypeError", py::make_tuple(Text(e.what())));
    } catch (const Error& e) {
      RaisePythonError("Error", py::make_tuple(Text(e.what())));
    }
  });
}

}  // namespace imgpipe::python
