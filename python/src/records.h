// The record layer in Python: TFRecordReader, TFRecordWriter and parse_example over
// record/tfrecord_reader.h, record/tfrecord_writer.h and record/example.h.
#pragma once

#include <pybind11/pybind11.h>

namespace imgpipe::python {

// Registers TFRecordReader, TFRecordWriter and parse_example in `m`.
void BindRecords(pybind11::module_& m);

}  // namespace imgpipe::python
