#!/usr/bin/python3
"""Writes Pillow's decode of image files, for decode_warnings_test.cc's comparisons.

Usage: pil_decode.py OUT_DIR FILE... For each FILE, with NAME its base name without
the extension: OUT_DIR/NAME.rgb, Image.open(FILE).convert("RGB") raw (HWC), and
NAME.txt, "WIDTH HEIGHT"; or, where Pillow refuses the file, NAME.error with its
message. Exits non-zero on anything else (a missing OUT_DIR, say).

Integer gray of more than 8 bits (Pillow's modes "I;16..." and "I") is the one
exception, as in python/tests/test_decode_parity.py: Pillow's convert clips each value
to 255; imgpipe keeps the top 8 bits (docs/image-formats.md), so the reference is
Pillow's value >> (bits - 8), negatives 0, with bits a TIFF's BitsPerSample (12, 16,
32), else 16.
"""
import os
import sys

from PIL import Image


def integer_bits(image):
    """Bits of an integer gray image's samples: a TIFF's BitsPerSample, else 16."""
    bits = getattr(image, "tag_v2", {}).get(258, 16)
    return bits[0] if isinstance(bits, tuple) else bits


def decode(path, out):
    stem = os.path.join(out, os.path.splitext(os.path.basename(path))[0])
    try:
        with Image.open(path) as image:
            if image.mode.startswith("I;16") or image.mode == "I":
                shift = integer_bits(image) - 8
                high = [max(0, min(v >> shift, 255)) for v in image.getdata()]
                gray = Image.new("L", image.size)
                gray.putdata(high)
                rgb = gray.convert("RGB")
            else:
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
