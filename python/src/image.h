// The image decoder in Python: decode_image over image/codec.h's DecodeImage.
#pragma once

#include <pybind11/pybind11.h>

namespace imgpipe::python {

// Registers decode_image in `m`.
void BindImage(pybind11::module_& m);

}  // namespace imgpipe::python
