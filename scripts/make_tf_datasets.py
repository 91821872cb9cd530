#!/usr/bin/python3
"""Writes TFRecord shards the way TensorFlow's own tools lay them out, for imgpipe's tests.

Not with imgpipe's writer: tf.train.Example is a message class built at run time from a
descriptor with TensorFlow's field numbers (protobuf's descriptor pool, shared with
src/record/testdata_check_example.py), and the TFRecord framing (length, masked CRC32C
of the length, data, masked CRC32C of the data) is written here in Python.

  make_tf_datasets.py IMAGES_DIR OUT_DIR [--per-class N]

IMAGES_DIR has train/ and val/ folders with one sub-folder per class (hymenoptera).
Writes OUT_DIR/tf-slim (build_imagenet_data.py: train-00000-of-00002,
validation-00000-of-00001; image/class/label 1..K, synset, text) and OUT_DIR/tfds
(NAME-train.tfrecord-00000-of-00001, NAME-test.tfrecord-00000-of-00001; image, label
0-based, file_name; dataset_info.json, label.labels.txt). Run with /usr/bin/python3
(python3-protobuf).
"""
import argparse
import json
import os
import struct
import sys

# The Example message class built from a descriptor with TensorFlow's field numbers, and
# the pure-Python masked CRC32C, of the reference decoder the record tests use.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "record"))
from testdata_check_example import example_class, masked_crc32c  # noqa: E402

Example = example_class()


def write_tfrecord(path, records):
    """TensorFlow's framing (tensorflow/core/lib/io/record_writer.cc)."""
    with open(path, "wb") as f:
        for data in records:
            length = struct.pack("<Q", len(data))
            f.write(length + struct.pack("<I", masked_crc32c(length)) + data +
                    struct.pack("<I", masked_crc32c(data)))


def example(features):
    """An Example of {key: bytes | str | int | [int]}."""
    e = Example()
    for key, value in features.items():
        if isinstance(value, str):
            value = value.encode()
        if isinstance(value, bytes):
            e.features.feature[key].bytes_list.value.append(value)
        else:
            e.features.feature[key].int64_list.value.extend(value if isinstance(value, list) else [value])
    return e.SerializeToString()


def images_of(images_dir, split, per_class):
    """[(class_name, path)] of the first `per_class` JPEGs of each class, sorted."""
    root = os.path.join(images_dir, split)
    out = []
    for name in sorted(os.listdir(root)):
        files = sorted(f for f in os.listdir(os.path.join(root, name)) if f.lower().endswith((".jpg", ".jpeg")))
        out += [(name, os.path.join(root, name, f)) for f in files[:per_class]]
    return out


SYNSETS = {"ants": ("n02219486", "ant, emmet, pismire"), "bees": ("n02206856", "bee")}


def slim_record(classes, name, path):
    """build_imagenet_data.py's _convert_to_example: label 1..K (0 is background)."""
    from PIL import Image
    with Image.open(path) as im:
        width, height = im.size
    synset, text = SYNSETS.get(name, ("n%08d" % classes.index(name), name))
    data = open(path, "rb").read()
    return example({"image/height": height, "image/width": width, "image/colorspace": "RGB",
                    "image/channels": 3, "image/class/label": classes.index(name) + 1,
                    "image/class/synset": synset, "image/class/text": text,
                    "image/format": "JPEG", "image/filename": os.path.basename(path),
                    "image/encoded": data})


def write_slim(images_dir, out, per_class):
    os.makedirs(out, exist_ok=True)
    train = images_of(images_dir, "train", per_class)
    classes = sorted({c for c, _ in train})
    records = [slim_record(classes, c, p) for c, p in train]
    half = (len(records) + 1) // 2
    write_tfrecord(os.path.join(out, "train-00000-of-00002"), records[0::2][:half])
    write_tfrecord(os.path.join(out, "train-00001-of-00002"), records[1::2])
    val = images_of(images_dir, "val", max(1, per_class // 2))
    write_tfrecord(os.path.join(out, "validation-00000-of-00001"),
                   [slim_record(classes, c, p) for c, p in val])


def write_tfds(images_dir, out, per_class, name="hymenoptera"):
    os.makedirs(out, exist_ok=True)
    train = images_of(images_dir, "train", per_class)
    classes = sorted({c for c, _ in train})
    splits = {"train": train, "test": images_of(images_dir, "val", max(1, per_class // 2))}
    info_splits = []
    for split, items in splits.items():
        records = [example({"image": open(p, "rb").read(), "label": classes.index(c),
                            "file_name": os.path.basename(p)}) for c, p in items]
        write_tfrecord(os.path.join(out, "%s-%s.tfrecord-00000-of-00001" % (name, split)), records)
        info_splits.append({"name": split, "shardLengths": [str(len(records))],
                            "numBytes": str(sum(len(r) for r in records))})
    with open(os.path.join(out, "label.labels.txt"), "w") as f:
        f.write("".join(c + "\n" for c in classes))
    info = {"name": name, "version": "1.0.0", "splits": info_splits, "fileFormat": "tfrecord",
            "features": {"pythonClassName": "tensorflow_datasets.core.features.features_dict.FeaturesDict",
                         "featuresDict": {"features": {
                             "image": {"pythonClassName": "tensorflow_datasets.core.features.image_feature.Image",
                                       "image": {"shape": {"dimensions": ["-1", "-1", "3"]},
                                                 "dtype": "uint8", "encodingFormat": "jpeg"}},
                             "label": {"pythonClassName": "tensorflow_datasets.core.features.class_label_feature.ClassLabel",
                                       "classLabel": {"numClasses": str(len(classes))}},
                             "file_name": {"pythonClassName": "tensorflow_datasets.core.features.text_feature.Text",
                                           "text": {}}}}}}
    with open(os.path.join(out, "dataset_info.json"), "w") as f:
        json.dump(info, f, indent=2)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("images_dir")
    parser.add_argument("out_dir")
    parser.add_argument("--per-class", type=int, default=6, help="train images per class")
    a = parser.parse_args()
    write_slim(a.images_dir, os.path.join(a.out_dir, "tf-slim"), a.per_class)
    write_tfds(a.images_dir, os.path.join(a.out_dir, "tfds"), a.per_class)


if __name__ == "__main__":
    main()
