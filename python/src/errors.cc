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

}  // namespace

void RegisterErrorTranslator() {
  py::register_exception_translator([](std::exception_ptr p) {
    if (!p) return;
    try {
      std::rethrow_exception(p);
    } catch (const DataError& e) {
      py::object offset = e.offset() ? py::object(py::int_(*e.offset())) : py::object(py::none());
      RaisePythonError("DataError", py::make_tuple(e.what(), e.path(), offset, e.reason()));
    } catch (const IoError& e) {
      RaisePythonError("IoError", py::make_tuple(e.what(), e.error_number()));
    } catch (const InvalidArgument& e) {
      RaisePythonError("InvalidArgument", py::make_tuple(e.what()));
    } catch (const ArgumentTypeError& e) {
      RaisePythonError("ArgumentTypeError", py::make_tuple(e.what()));
    } catch (const Error& e) {
      RaisePythonError("Error", py::make_tuple(e.what()));
    }
  });
}

}  // namespace imgpipe::python
