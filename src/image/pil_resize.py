#!/usr/bin/python3
"""Resizes raw 8-bit images with Pillow, for resize_test.cc's comparison with Pillow.

Usage: pil_resize.py MANIFEST. Each line of MANIFEST reads
    MODE IN_PATH WIDTH HEIGHT OUT_PATH OUT_WIDTH OUT_HEIGHT X0 Y0 X1 Y1
where MODE is "RGB" or "L", IN_PATH holds WIDTH x HEIGHT raw pixels (HWC), and the
script writes to OUT_PATH Pillow's Image.resize((OUT_WIDTH, OUT_HEIGHT),
Image.BILINEAR, box=(X0, Y0, X1, Y1)) of it, raw. Pillow's BILINEAR is antialiased (its
support widens when shrinking); torchvision's Resize on PIL images calls exactly this.
Exits non-zero on any failure.
"""
import sys

from PIL import Image


def main(manifest):
    with open(manifest) as lines:
        for line in lines:
            mode, in_path, w, h, out_path, ow, oh, x0, y0, x1, y1 = line.split()
            with open(in_path, "rb") as f:
                image = Image.frombytes(mode, (int(w), int(h)), f.read())
            box = tuple(float(v) for v in (x0, y0, x1, y1))
            resized = image.resize((int(ow), int(oh)), Image.BILINEAR, box=box)
            with open(out_path, "wb") as f:
                f.write(resized.tobytes())


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
