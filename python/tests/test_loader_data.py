"""imgpipe.Loader's `data`: resolved as `imgpipe bench/train --data` are
(pipeline::ResolveDataSource): TF-slim and TFDS shards, splits, keys, label offsets,
class names, and input that is all bad."""

import io
import time

import numpy as np
import pytest
from PIL import Image

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


# Issue 44: 40 TFRecord files without labels.txt, dataset.json or dataset_info.json
# whose first 51 records (what the resolver samples of each: 2,048 / 40) hold neither
# label 0 nor the highest, 9, each with image/class/text: records not yet read could
# contradict any class count or offset the sample suggested.
FILES, PER_FILE, CLASSES = 40, 60, 10
EXTREMES = {(7, 57): CLASSES - 1, (3, 58): 0}  # (file, record) -> label


def stored_label(f, r):
    return EXTREMES.get((f, r), 1 + (f * PER_FILE + r) % (CLASSES - 2))


@pytest.fixture(scope="module")
def label_less(tmp_path_factory):
    folder = tmp_path_factory.mktemp("label_less")
    jpeg = io.BytesIO()
    Image.new("RGB", (8, 8), (128, 128, 128)).save(jpeg, "JPEG")
    for f in range(FILES):
        with imgpipe.TFRecordWriter(str(folder / f"train-{f:05d}-of-{FILES:05d}.tfrecord")) as w:
            for r in range(PER_FILE):
                label = stored_label(f, r)
                w.write(imgpipe.serialize_example({"image/encoded": jpeg.getvalue(), "image/class/label": [label],
                                                   "image/class/text": b"class-%d" % label}))
    return folder


def test_labels_without_metadata_are_yielded_as_stored(label_less):
    expected = sorted(stored_label(f, r) for f in range(FILES) for r in range(PER_FILE))
    for policy in ("fail", "skip"):
        loader = imgpipe.Loader(str(label_less), batch_size=48, preset="eval", error_policy=policy, **SMALL)
        assert loader.class_names == []  # unknown, not guessed
        assert "classes: unknown" in loader.describe_data()
        assert all_labels(loader) == expected
    from imgpipe import torch as itorch  # the loader (this file needs no torch otherwise)
    with itorch.Loader(str(label_less), batch_size=48, preset="eval", **SMALL) as loader:
        assert sorted(int(x) for _, labels in loader for x in labels) == expected
    assert not (label_less / "labels.scan.json").exists()  # the Loader reads no more than the sample


def test_a_given_label_offset_applies_and_a_label_below_it_names_file_and_offset(label_less):
    loader = imgpipe.Loader(str(label_less), batch_size=48, preset="eval", label_offset=1,
                            error_policy="skip", **SMALL)
    with pytest.raises(imgpipe.Error, match=r"train-00003-of-00040.tfrecord: offset \d+: label 0 "
                                            r"\(image/class/label, label offset 1\) is below the label offset"):
        all_labels(loader)
