"""The record layer: TFRecordReader, TFRecordWriter, parse_example, serialize_example."""

import numpy as np
import pytest

import imgpipe
from conftest import shared_path


@pytest.mark.parametrize("compression", [None, "gzip", "zlib"])
def test_writer_reader_round_trip(tmp_path, compression):
    records = [b"", b"x", bytes(range(256)) * 40]
    path = str(tmp_path / "r.tfrecord")
    with imgpipe.TFRecordWriter(path, compression=compression) as w:
        offsets = [w.write(r) for r in records]
    assert offsets[0] == 0 and offsets == sorted(offsets)
    reader = imgpipe.TFRecordReader(path)  # compression detected
    assert list(reader) == records
    assert reader.compression == (compression or "none")


def test_writer_leaves_no_file_when_the_block_raises(tmp_path):
    path = tmp_path / "r.tfrecord"
    with pytest.raises(KeyError):
        with imgpipe.TFRecordWriter(str(path)) as w:
            w.write(b"abc")
            raise KeyError("stop")
    assert list(tmp_path.iterdir()) == []


def test_reads_tensorflow_files():
    records = list(imgpipe.TFRecordReader(str(shared_path("tfrecord/pytorch-data/example.tfrecord"))))
    assert len(records) == 4
    first = imgpipe.parse_example(records[0])
    assert first["x_int"].dtype == np.int64 and list(first["x_int"][:3]) == [0, 10, 20]
    assert first["x_float"].dtype == np.float32 and first["x_float"].shape == (10,)
    assert len(first["x_byte"]) == 1 and len(first["x_byte"][0]) == 8

    mnist = list(imgpipe.TFRecordReader(str(shared_path("tfrecord/tfx/mnist.tfrecord"))))
    assert len(mnist) == 1000
    example = imgpipe.parse_example(mnist[0])
    assert list(example["image_class"]) == [9] and example["image_floats"].shape == (784,)

    penguins = imgpipe.TFRecordReader(str(shared_path("tfrecord/tfx/penguin-train-00000-of-00001.gz")))
    assert sum(1 for _ in penguins) == 234 and penguins.compression == "gzip"


def test_serialize_parse_round_trip():
    data = imgpipe.serialize_example({"b": [b"one", b"two"], "i": [1, -2, 3], "f": np.array([0.5, 2.0])})
    parsed = imgpipe.parse_example(data)
    assert parsed["b"] == [b"one", b"two"]
    assert parsed["i"].tolist() == [1, -2, 3] and parsed["i"].dtype == np.int64
    assert parsed["f"].tolist() == [0.5, 2.0] and parsed["f"].dtype == np.float32


def test_parse_example_rejects_garbage():
    with pytest.raises(imgpipe.DataError) as e:
        imgpipe.parse_example(b"\xff\xff\xff")
    assert e.value.offset == 0 and "Example" in str(e.value)


def test_corrupt_record_raises_data_error_with_path_and_offset(tmp_path):
    path = tmp_path / "r.tfrecord"
    with imgpipe.TFRecordWriter(str(path)) as w:
        offsets = [w.write(bytes([i]) * 100) for i in range(4)]
    data = bytearray(path.read_bytes())
    data[offsets[2] + 12 + 50] ^= 0xFF  # a data byte of record 2 (after length and its CRC)
    path.write_bytes(bytes(data))
    reader = imgpipe.TFRecordReader(str(path))
    assert next(reader) == bytes([0]) * 100 and next(reader) == bytes([1]) * 100
    with pytest.raises(imgpipe.DataError) as e:
        next(reader)
    assert e.value.path == str(path) and e.value.offset == offsets[2]
    assert isinstance(e.value, imgpipe.Error)


def test_missing_file_raises_io_error(tmp_path):
    with pytest.raises(imgpipe.IoError) as e:
        imgpipe.TFRecordReader(str(tmp_path / "missing.tfrecord"))
    assert "missing.tfrecord" in str(e.value)
