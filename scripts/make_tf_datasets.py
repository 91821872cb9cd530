#!/usr/bin/python3
"""Writes TFRecord shards the way TensorFlow's own tools lay them out, for imgpipe's tests.

Not with imgpipe's writer: tf.train.Example is built here from its .proto definition
(types made at run time with protobuf's descriptor pool), and the TFRecord framing
(length, masked CRC32C of the length, data, masked CRC32C of the data) is written here.

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

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

# tensorflow/core/example/{example,feature}.proto, the messages Example needs.
FEATURE_FIELDS = {
    "BytesList": [("value", 1, "bytes", True)],
    "FloatList": [("value", 1, "float", True)],
    "Int64List": [("value", 1, "int64", True)],
}


def example_class():
    """The tensorflow.Example message class, built from a FileDescriptorProto."""
    f = descriptor_pb2.FileDescriptorProto(name="imgpipe_test_example.proto",
                                           package="tensorflow", syntax="proto3")
    T = descriptor_pb2.FieldDescriptorProto
    types = {"bytes": T.TYPE_BYTES, "float": T.TYPE_FLOAT, "int64": T.TYPE_INT64}
    for name, fields in FEATURE_FIELDS.items():
        m = f.message_type.add(name=name)
        for fname, number, kind, repeated in fields:
            fld = m.field.add(name=fname, number=number, type=types[kind], label=T.LABEL_REPEATED)
            if kind != "bytes":
                fld.options.packed = True
    feature = f.message_type.add(name="Feature")
    feature.oneof_decl.add(name="kind")
    for i, name in enumerate(["bytes_list", "float_list", "int64_list"], start=1):
        type_name = ".tensorflow." + {"bytes_list": "BytesList", "float_list": "FloatList",
                                      "int64_list": "Int64List"}[name]
        feature.field.add(name=name, number=i, type=T.TYPE_MESSAGE, type_name=type_name,
                          label=T.LABEL_OPTIONAL, oneof_index=0)
    features = f.message_type.add(name="Features")
    entry = features.nested_type.add(name="FeatureEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=T.TYPE_STRING, label=T.LABEL_OPTIONAL)
    entry.field.add(name="value", number=2, type=T.TYPE_MESSAGE, type_name=".tensorflow.Feature",
                    label=T.LABEL_OPTIONAL)
    features.field.add(name="feature", number=1, type=T.TYPE_MESSAGE,
                       type_name=".tensorflow.Features.FeatureEntry", label=T.LABEL_REPEATED)
    example = f.message_type.add(name="Example")
    example.field.add(name="features", number=1, type=T.TYPE_MESSAGE,
                      type_name=".tensorflow.Features", label=T.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(f)
    descriptor = pool.FindMessageTypeByName("tensorflow.Example")
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(descriptor)
    return message_factory.MessageFactory(pool).GetPrototype(descriptor)


Example = example_class()


def _crc32c_table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


CRC_TABLE = _crc32c_table()


def crc32c(data):
    crc = 0xFFFFFFFF
    table = CRC_TABLE
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc(data):
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def write_tfrecord(path, records):
    """TensorFlow's framing (tensorflow/core/lib/io/record_writer.cc)."""
    with open(path, "wb") as f:
        for data in records:
            length = struct.pack("<Q", len(data))
            f.write(length + struct.pack("<I", masked_crc(length)) + data +
                    struct.pack("<I", masked_crc(data)))


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
