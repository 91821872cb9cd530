"""imgpipe in Python: the C++ input pipeline and TFRecord layer (see the README's
Python section). Everything here is the C++ library's, bound by the _imgpipe
extension; this file only gathers the names."""

from imgpipe.errors import DataError, Error, IoError
from imgpipe._imgpipe import HostArray, TFRecordReader, TFRecordWriter, parse_example

__all__ = ["DataError", "Error", "IoError", "HostArray", "TFRecordReader", "TFRecordWriter",
           "parse_example"]
