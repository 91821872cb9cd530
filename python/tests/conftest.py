"""Shared fixtures: the test data folder (../shared/testdata, IMGPIPE_TESTDATA_DIR under
CTest) and a small TFRecord data set written with imgpipe's own writer from real JPEGs."""

import os
import pathlib
import subprocess
import sys

import pytest

import imgpipe

TESTDATA = pathlib.Path(os.environ.get(
    "IMGPIPE_TESTDATA_DIR", pathlib.Path(__file__).resolve().parents[2] / ".." / "shared" / "testdata"))

# Records in the shards fixture: two files of 12; each record's label is its index, so
# a label names the sample it came from.
SHARD_FILES = 2
RECORDS_PER_FILE = 12


def shared_path(relative):
    return TESTDATA / relative


@pytest.fixture(scope="session")
def shards(tmp_path_factory):
    """A folder of TFRecord shards of real photos (hymenoptera/val), image/class/label
    = the record's index 0..23."""
    photos = sorted(shared_path("images/hymenoptera/val").glob("*/*.jpg"))[:SHARD_FILES * RECORDS_PER_FILE]
    folder = tmp_path_factory.mktemp("shards")
    for f in range(SHARD_FILES):
        with imgpipe.TFRecordWriter(str(folder / f"train-{f:05d}-of-{SHARD_FILES:05d}.tfrecord")) as w:
            for i in range(f * RECORDS_PER_FILE, (f + 1) * RECORDS_PER_FILE):
                w.write(imgpipe.serialize_example({"image/encoded": photos[i].read_bytes(),
                                                   "image/class/label": [i]}))
    return folder


@pytest.fixture(scope="session")
def photos_by_class():
    return shared_path("images/photos-by-class")


@pytest.fixture(scope="session")
def tf_datasets(tmp_path_factory):
    """TF-slim- and TFDS-style shards (tf-slim/, tfds/) of scripts/make_tf_datasets.py:
    the CTest fixture tf_datasets's folder (IMGPIPE_TF_DATASETS_DIR), else written here."""
    if "IMGPIPE_TF_DATASETS_DIR" in os.environ:
        return pathlib.Path(os.environ["IMGPIPE_TF_DATASETS_DIR"])
    out = tmp_path_factory.mktemp("tf-datasets")
    script = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "make_tf_datasets.py"
    subprocess.run([sys.executable, str(script), str(shared_path("images/hymenoptera")), str(out)], check=True)
    return out
