#include "records.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>

#include "record/example.h"
#include "record/tfrecord_reader.h"
#include "record/tfrecord_writer.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe::python {
namespace py = pybind11;

namespace {

// Python's compression argument (None, "", "none", "gzip", "zlib", any case) as the
// library's; unset means detect (reader) or none (writer).
std::optional<Compression> CompressionArg(const std::optional<std::string>& name) {
  if (!name) return std::nullopt;
  return ParseCompression(*name);
}

// Iterates the records of one file as bytes; a corrupt record raises DataError(path,
// offset). Reads release the GIL.
class PyTfRecordReader {
 public:
  PyTfRecordReader(std::string path, std::optional<std::string> compression, bool verify_crc) {
    TfRecordReaderOptions options;
    options.compression = CompressionArg(compression);
    options.verify_data_crc = verify_crc;
    reader_ = std::make_unique<TfRecordReader>(std::move(path), options);
  }

  // The next record's bytes; StopIteration at the end or after close().
  py::bytes Next() {
    if (!reader_) throw py::stop_iteration();
    std::string record;
    bool more;
    {
      py::gil_scoped_release release;
      more = reader_->Next(&record);
    }
    if (!more) throw py::stop_iteration();
    return py::bytes(record);
  }

  uint64_t offset() const { return reader_ ? reader_->record_offset() : 0; }
  std::string compression() const { return reader_ ? CompressionName(reader_->compression()) : ""; }
  void Close() { reader_.reset(); }

 private:
  std::unique_ptr<TfRecordReader> reader_;
};

// Writes records to `path` atomically: the file appears under its name on close();
// leaving a `with` block by an exception (or never closing) leaves no file.
class PyTfRecordWriter {
 public:
  PyTfRecordWriter(std::string path, std::optional<std::string> compression)
      : file_(std::make_unique<AtomicFileWriter>(std::move(path))),
        writer_(std::make_unique<TfRecordWriter>(file_->file(),
                                                 CompressionArg(compression).value_or(Compression::kNone))) {}

  // Appends one record; returns its offset in the uncompressed stream.
  uint64_t Write(const py::bytes& data) {
    if (!writer_) throw Error("TFRecordWriter: write after close()");
    return writer_->Write(std::string_view(data)).offset;
  }

  // Ends the stream and commits the file under its name; a second call does nothing.
  void Close() {
    if (!writer_) return;
    writer_->Close();
    file_->Commit();
    writer_.reset();
    file_.reset();
  }

  // Drops the temporary file without committing.
  void Abort() {
    writer_.reset();
    file_.reset();
  }

 private:
  std::unique_ptr<AtomicFileWriter> file_;
  std::unique_ptr<TfRecordWriter> writer_;
};

// One feature's values: int64 or float32 NumPy arrays, a list of bytes, or [] when unset.
py::object FeatureValues(const tf::Feature& feature) {
  switch (feature.kind_case()) {
    case tf::Feature::kInt64List: {
      const auto& v = feature.int64_list().value();
      return py::array_t<int64_t>(v.size(), v.data());
    }
    case tf::Feature::kFloatList: {
      const auto& v = feature.float_list().value();
      return py::array_t<float>(v.size(), v.data());
    }
    case tf::Feature::kBytesList: {
      py::list values;
      for (const std::string& b : feature.bytes_list().value()) values.append(py::bytes(b));
      return values;
    }
    default:
      return py::list();
  }
}

// A serialized tf.train.Example as {key: values} (see FeatureValues); DataError when
// `data` is not an Example.
py::dict ParseExampleToDict(const py::bytes& data) {
  Example example = ParseExample(std::string_view(data), "<parse_example bytes>", 0);
  py::dict out;
  for (const auto& [key, feature] : example.features().feature()) out[py::str(key)] = FeatureValues(feature);
  return out;
}

// Adds `values` to `features` under `key`: bytes or a list of bytes as a bytes feature,
// else anything NumPy converts to integers (int64) or floats (float32).
void AddFeature(Features* features, const std::string& key, const py::handle& values) {
  if (py::isinstance<py::bytes>(values)) return AddBytesFeature(features, key, values.cast<std::string>());
  if (py::isinstance<py::list>(values) && py::len(values) > 0 && py::isinstance<py::bytes>(values[py::int_(0)])) {
    for (const py::handle& v : values) AddBytesFeature(features, key, v.cast<std::string>());
    return;
  }
  py::array array = py::module_::import("numpy").attr("ravel")(values);
  const char kind = array.dtype().kind();
  if (kind == 'i' || kind == 'u' || kind == 'b') {
    for (int64_t v : array.attr("astype")("int64").cast<std::vector<int64_t>>()) AddInt64Feature(features, key, v);
  } else if (kind == 'f') {
    for (float v : array.attr("astype")("float32").cast<std::vector<float>>()) AddFloatFeature(features, key, v);
  } else {
    throw Error("serialize_example: feature '" + key + "' is neither bytes, integers nor floats");
  }
}

// {key: values} (see AddFeature) as a serialized tf.train.Example, keys sorted.
py::bytes SerializeExampleFromDict(const py::dict& features) {
  Example example;
  for (const auto& [key, values] : features) {
    AddFeature(example.mutable_features(), key.cast<std::string>(), values);
  }
  return py::bytes(SerializeExample(example));
}

}  // namespace

void BindRecords(py::module_& m) {
  py::class_<PyTfRecordReader>(m, "TFRecordReader",
                               "Iterates the records (bytes) of a TFRecord file: plain, GZIP or "
                               "ZLIB, CRCs checked; a bad record raises DataError(path, offset).")
      .def(py::init<std::string, std::optional<std::string>, bool>(), py::arg("path"),
           py::arg("compression") = py::none(), py::arg("verify_crc") = TfRecordReaderOptions{}.verify_data_crc,
           "Opens `path`; compression None detects it from the first bytes.")
      .def("__iter__", [](py::object self) { return self; })
      .def("__next__", &PyTfRecordReader::Next)
      .def_property_readonly("offset", &PyTfRecordReader::offset,
                             "Uncompressed offset of the record returned last.")
      .def_property_readonly("compression", &PyTfRecordReader::compression)
      .def("close", &PyTfRecordReader::Close)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyTfRecordReader& r, py::args) { r.Close(); });

  py::class_<PyTfRecordWriter>(m, "TFRecordWriter",
                               "Writes a TFRecord file (compression None, 'gzip' or 'zlib'), "
                               "atomically: the file appears on close().")
      .def(py::init<std::string, std::optional<std::string>>(), py::arg("path"),
           py::arg("compression") = py::none())
      .def("write", &PyTfRecordWriter::Write, py::arg("record"),
           "Appends one record (bytes); returns its offset in the uncompressed stream.")
      .def("close", &PyTfRecordWriter::Close, "Ends the stream and commits the file.")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyTfRecordWriter& w, py::object type, py::object, py::object) {
        if (type.is_none()) {
          w.Close();
        } else {
          w.Abort();
        }
      });

  m.def("parse_example", &ParseExampleToDict, py::arg("data"),
        "A serialized tf.train.Example as a dict: int64 and float32 NumPy arrays, lists of "
        "bytes. Raises DataError when the bytes are not an Example.");
  m.def("serialize_example", &SerializeExampleFromDict, py::arg("features"),
        "A dict {key: bytes | [bytes] | integers | floats} as a serialized tf.train.Example "
        "(integers as int64, floats as float32; deterministic bytes).");
}

}  // namespace imgpipe::python
