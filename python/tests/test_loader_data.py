"""imgpipe.Loader's `data`: resolved as `imgpipe bench/train --data` are
(pipeline::ResolveDataSource): TF-slim and TFDS shards, splits, keys, label offsets,
class names, and input that is all bad."""

import time

import numpy as np
import pytest

import imgpipe

SMALL = dict(image_size=32, threads=2)
# make_tf_datasets.py's default: 6 train images per class, 3 validation/test; 2 classes.
TRAIN, HELD_OUT = 12, 6


def all_labels(loader):
    return sorted(int(x) for b in loader for x in np.asarray(b.labels))


def test_tf_slim_shards_have_0_based_labels_and_class_names(tf_datasets):
    loader = imgpipe.Loader(str(tf_datasets / "tf-slim"), batch_size=4, **SMALL)
    assert loader.data_layout == "tf-slim"
    assert loader.class_names == ["ant, emmet, pismire", "bee"]
    assert len(loader) == TRAIN // 4  # split train: 2 files
    assert all_labels(loader) == [0] * 6 + [1] * 6  # stored 1..2, shifted by 1
    held_out = imgpipe.Loader(str(tf_datasets / "tf-slim"), batch_size=3, split="validation",
                              preset="eval", **SMALL)
    assert all_labels(held_out) == [0, 0, 0, 1, 1, 1]


def test_tfds_shards_use_their_keys_splits_and_labels_file(tf_datasets):
    loader = imgpipe.Loader(str(tf_datasets / "tfds"), batch_size=3, split="test", preset="eval", **SMALL)
    assert loader.data_layout == "tfds"
    assert loader.class_names == ["ants", "bees"]
    assert all_labels(loader) == [0, 0, 0, 1, 1, 1]
    assert "layout tfds" in loader.describe_data()
    with pytest.raises(imgpipe.Error, match="splits found: test, train"):
        imgpipe.Loader(str(tf_datasets / "tfds"), batch_size=3, split="validation", **SMALL)


def test_the_cli_options_override_detection(tf_datasets):
    slim = str(tf_datasets / "tf-slim")
    unshifted = imgpipe.Loader(slim, batch_size=4, label_offset=0, image_key="image/encoded", **SMALL)
    assert all_labels(unshifted) == [1] * 6 + [2] * 6
    unlabelled = imgpipe.Loader(slim, batch_size=4, label_key="none", **SMALL)
    assert all_labels(unlabelled) == [-1] * TRAIN
    assert imgpipe.Loader.defaults()["split"] == "train"
    assert imgpipe.Loader.defaults()["image_key"] is None


def test_a_wrong_image_key_lists_the_keys_found(tf_datasets):
    with pytest.raises(imgpipe.Error, match="image/encoded") as e:
        imgpipe.Loader(str(tf_datasets / "tf-slim"), batch_size=4, image_key="jpeg_bytes", **SMALL)
    assert "--image-key" in str(e.value) and "image/class/label" in str(e.value)


def test_shards_of_only_corrupt_images_end_iteration_with_an_error(tmp_path):
    for f in range(2):
        with imgpipe.TFRecordWriter(str(tmp_path / f"train-{f:05d}-of-00002.tfrecord")) as w:
            for i in range(20):
                w.write(imgpipe.serialize_example({"image/encoded": b"not an image %d" % i,
                                                   "image/class/label": [i % 2]}))
    loader = imgpipe.Loader(str(tmp_path), batch_size=4, error_policy="skip", **SMALL)
    start = time.monotonic()
    with pytest.raises(imgpipe.Error, match="elements skipped"):  # the stop rule
        for _ in loader:
            pass
    assert time.monotonic() - start < 30
