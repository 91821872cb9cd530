// The extension module imgpipe._imgpipe: thin bindings of the libtorch-free C++
// library; python/imgpipe/__init__.py is the package users import.
#include <pybind11/pybind11.h>

#include "convert.h"
#include "errors.h"
#include "host_array.h"
#include "image.h"
#include "loader.h"
#include "records.h"
#include "util/malloc_tuning.h"

PYBIND11_MODULE(_imgpipe, m) {
  m.doc() = "imgpipe's C++ pipeline and record layer (import imgpipe instead)";
  imgpipe::python::RegisterErrorTranslator();
  imgpipe::python::BindHostArray(m);
  imgpipe::python::BindImage(m);
  imgpipe::python::BindRecords(m);
  imgpipe::python::BindLoader(m);
  imgpipe::python::BindConvert(m);
  m.def("tune_malloc_for_large_buffers", &imgpipe::TuneMallocForLargeBuffers,
        "Keeps large buffers on glibc malloc's heaps (util/malloc_tuning.h): call once, early; "
        "False where the C library is not glibc.");
}
