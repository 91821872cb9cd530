"""Decodes a TensorBoard event file independently of imgpipe.

Usage: /usr/bin/python3 check_events.py FILE

Parses the TFRecord framing here (checking the masked CRC32C of each length and data),
decodes each record with an Event class built at run time from a descriptor declaring
tensorflow.Event / Summary / Summary.Value with TensorFlow's field numbers, and prints
a JSON list: {"wall_time", "step", "file_version"} or {"wall_time", "step", "tag",
"simple_value"} per event value. Exits non-zero on any problem.
"""
import json
import os
import struct
import sys

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "record"))
from testdata_check_example import masked_crc32c as masked_crc  # noqa: E402  (one CRC for both)


def event_class():
    F = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(name="check_event.proto", package="tensorflow", syntax="proto3")
    summary = proto.message_type.add(name="Summary")
    value = summary.nested_type.add(name="Value")
    value.field.add(name="tag", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    value.field.add(name="simple_value", number=2, type=F.TYPE_FLOAT, label=F.LABEL_OPTIONAL)
    summary.field.add(name="value", number=1, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED,
                      type_name=".tensorflow.Summary.Value")
    event = proto.message_type.add(name="Event")
    event.field.add(name="wall_time", number=1, type=F.TYPE_DOUBLE, label=F.LABEL_OPTIONAL)
    event.field.add(name="step", number=2, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    event.field.add(name="file_version", number=3, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    event.field.add(name="summary", number=5, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL,
                    type_name=".tensorflow.Summary")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return message_factory.MessageFactory(pool).GetPrototype(pool.FindMessageTypeByName("tensorflow.Event"))


def main():
    Event = event_class()
    data = open(sys.argv[1], "rb").read()
    out, offset = [], 0
    while offset < len(data):
        header = data[offset:offset + 12]
        (length,) = struct.unpack("<Q", header[:8])
        if masked_crc(header[:8]) != struct.unpack("<I", header[8:12])[0]:
            sys.exit(f"length CRC mismatch at {offset}")
        body = data[offset + 12:offset + 12 + length]
        (crc,) = struct.unpack("<I", data[offset + 12 + length:offset + 16 + length])
        if masked_crc(body) != crc:
            sys.exit(f"data CRC mismatch at {offset}")
        event = Event()
        event.ParseFromString(body)
        if event.file_version:
            out.append({"wall_time": event.wall_time, "step": event.step, "file_version": event.file_version})
        for v in event.summary.value:
            out.append({"wall_time": event.wall_time, "step": event.step, "tag": v.tag,
                        "simple_value": v.simple_value})
        offset += 16 + length
    print(json.dumps(out))


if __name__ == "__main__":
    main()
