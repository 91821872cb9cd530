"""Decodes a TFRecord file of tf.train.Example records independently of imgpipe.

Usage: /usr/bin/python3 testdata_check_example.py FILE [none|gzip|zlib]

Parses the TFRecord framing here (checking both masked CRC32C values with a pure-Python
CRC), decodes each record with a message class built at run time from a descriptor that
declares tensorflow.Example and its parts with TensorFlow's field numbers, and prints the
records as JSON: a list of {key: {"kind": K, "values": [...]}}, where bytes values are
hex strings, float values the hex of their little-endian float32 bits, int64 values
numbers. Exits non-zero on any problem (including a missing google.protobuf).
"""
import gzip
import json
import struct
import sys
import zlib

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory


def crc32c_table():
    table = []
    for b in range(256):
        crc = b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
        table.append(crc)
    return table


TABLE = crc32c_table()


def masked_crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc = TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    crc ^= 0xFFFFFFFF
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def records(data):
    offset = 0
    while offset < len(data):
        if offset + 12 > len(data):
            raise ValueError(f"offset {offset}: truncated header")
        (length,) = struct.unpack_from("<Q", data, offset)
        (length_crc,) = struct.unpack_from("<I", data, offset + 8)
        if masked_crc32c(data[offset:offset + 8]) != length_crc:
            raise ValueError(f"offset {offset}: length CRC mismatch")
        end = offset + 12 + length
        if end + 4 > len(data):
            raise ValueError(f"offset {offset}: truncated record")
        record = data[offset + 12:end]
        (data_crc,) = struct.unpack_from("<I", data, end)
        if masked_crc32c(record) != data_crc:
            raise ValueError(f"offset {offset}: data CRC mismatch")
        yield record
        offset = end + 4


def example_class():
    F = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(
        name="independent_tensorflow_example.proto", package="tensorflow", syntax="proto3")

    def message(name, fields, nested=()):
        m = proto.message_type.add(name=name)
        for field_name, number, label, kind, type_name, oneof in fields:
            f = m.field.add(name=field_name, number=number, label=label, type=kind)
            if type_name:
                f.type_name = type_name
            if oneof is not None:
                f.oneof_index = oneof
        for n in nested:
            m.nested_type.add().CopyFrom(n)
        return m

    rep, opt = F.LABEL_REPEATED, F.LABEL_OPTIONAL
    message("BytesList", [("value", 1, rep, F.TYPE_BYTES, None, None)])
    message("FloatList", [("value", 1, rep, F.TYPE_FLOAT, None, None)])
    message("Int64List", [("value", 1, rep, F.TYPE_INT64, None, None)])
    feature = message("Feature", [
        ("bytes_list", 1, opt, F.TYPE_MESSAGE, ".tensorflow.BytesList", 0),
        ("float_list", 2, opt, F.TYPE_MESSAGE, ".tensorflow.FloatList", 0),
        ("int64_list", 3, opt, F.TYPE_MESSAGE, ".tensorflow.Int64List", 0),
    ])
    feature.oneof_decl.add(name="kind")
    entry = descriptor_pb2.DescriptorProto(name="FeatureEntry")
    entry.field.add(name="key", number=1, label=opt, type=F.TYPE_STRING)
    entry.field.add(name="value", number=2, label=opt, type=F.TYPE_MESSAGE,
                    type_name=".tensorflow.Feature")
    entry.options.map_entry = True
    message("Features", [("feature", 1, rep, F.TYPE_MESSAGE, ".tensorflow.Features.FeatureEntry",
                          None)], nested=[entry])
    message("Example", [("features", 1, opt, F.TYPE_MESSAGE, ".tensorflow.Features", None)])

    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    descriptor = pool.FindMessageTypeByName("tensorflow.Example")
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(descriptor)
    return message_factory.MessageFactory(pool).GetPrototype(descriptor)


def describe(example):
    out = {}
    for key, feature in example.features.feature.items():
        kind = feature.WhichOneof("kind")
        if kind == "bytes_list":
            out[key] = {"kind": "bytes", "values": [v.hex() for v in feature.bytes_list.value]}
        elif kind == "float_list":
            out[key] = {"kind": "float",
                        "values": [struct.pack("<f", v).hex() for v in feature.float_list.value]}
        elif kind == "int64_list":
            out[key] = {"kind": "int64", "values": list(feature.int64_list.value)}
        else:
            out[key] = {"kind": "empty", "values": []}
    return out


def main():
    path = sys.argv[1]
    compression = sys.argv[2] if len(sys.argv) > 2 else "none"
    with open(path, "rb") as f:
        data = f.read()
    if compression == "gzip":
        data = gzip.decompress(data)
    elif compression == "zlib":
        data = zlib.decompress(data)
    example_type = example_class()
    decoded = []
    for record in records(data):
        example = example_type()
        example.ParseFromString(record)
        decoded.append(describe(example))
    json.dump(decoded, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
