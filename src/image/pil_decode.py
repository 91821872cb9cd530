#!/usr/bin/python3
"""Writes Pillow's decode of image files, for decode_warnings_test.cc's comparisons.

Usage: pil_decode.py OUT_DIR FILE... For each FILE, with NAME its base name without
the extension: OUT_DIR/NAME.rgb, Image.open(FILE).convert("RGB") raw (HWC), and
NAME.txt, "WIDTH HEIGHT"; or, where Pillow refuses the file, NAME.error with its
message. Exits non-zero on anything else (a missing OUT_DIR, say).
"""
import os
import sys

from PIL import Image


def decode(path, out):
    stem = os.path.join(out, os.path.splitext(os.path.basename(path))[0])
    try:
        with Image.open(path) as image:
            rgb = image.convert("RGB")
    except (OSError, SyntaxError, ValueError) as e:
        with open(stem + ".error", "w") as f:
            f.write("%s\n" % e)
        return
    with open(stem + ".rgb", "wb") as f:
        f.write(rgb.tobytes())
    with open(stem + ".txt", "w") as f:
        f.write("%d %d\n" % (rgb.width, rgb.height))


def main(out, paths):
    for path in paths:
        decode(path, out)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
