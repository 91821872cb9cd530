#include "image.h"

#include <pybind11/numpy.h>

#include <string>
#include <string_view>

#include "image/codec.h"

namespace py = pybind11;

namespace imgpipe::python {
namespace {

// The pipeline's decoder (DecodeImage, RGB output): a uint8 array of shape
// (height, width, 3). Bad data raises imgpipe.DataError (path is `path`).
py::array_t<uint8_t> DecodeImageToArray(const py::bytes& data, const std::string& path,
                                        uint64_t max_pixels) {
  std::string_view bytes = data;
  Image image;
  {
    py::gil_scoped_release release;
    DecodeOptions options;
    options.channels = 3;
    options.max_pixels = max_pixels;
    image = DecodeImage(bytes, path, options);
  }
  py::array_t<uint8_t> out({image.height, image.width, image.channels});
  std::copy(image.pixels.begin(), image.pixels.end(), out.mutable_data());
  return out;
}

}  // namespace

void BindImage(py::module_& m) {
  m.def("decode_image", &DecodeImageToArray, py::arg("data"), py::arg("path") = "<bytes>",
        py::arg("max_pixels") = kDefaultMaxPixels,
        "Decodes an encoded image (JPEG, PNG, GIF, BMP, TIFF, WebP, ... as imgpipe's "
        "pipeline does, EXIF orientation applied) to a uint8 numpy array of shape "
        "(height, width, 3), RGB. `path` only names the data in errors. Bad or "
        "unsupported data raises imgpipe.DataError.");
}

}  // namespace imgpipe::python
