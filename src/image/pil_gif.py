#!/usr/bin/python3
"""Writes GIFs with Pillow and Pillow's decode of their first frames, for
gif_decoder_test.cc's comparison with Pillow.

Usage: pil_gif.py OUT_DIR [GIF...]. Writes into OUT_DIR animated.gif (3 frames, the
later ones smaller than the screen), interlaced.gif, transparent.gif (with a
transparent index) and gray.gif (a grayscale image); then, for each of those and each GIF given, NAME.rgb: Pillow's
Image.open(path).convert("RGB") of frame 0, raw (HWC), and NAME.txt: "WIDTH HEIGHT
FRAMES". Exits non-zero on any failure.
"""
import os
import sys

from PIL import Image


def gradient(width, height, shift):
    image = Image.new("RGB", (width, height))
    image.putdata([((x * 7 + shift) % 256, (y * 11) % 256, (x * y + shift) % 256)
                   for y in range(height) for x in range(width)])
    return image


def write_gifs(out):
    frames = [gradient(37, 29, s).quantize(64) for s in (0, 80, 160)]
    frames[0].save(os.path.join(out, "animated.gif"), save_all=True,
                   append_images=frames[1:], duration=50, loop=0)
    gradient(40, 33, 5).quantize(200).save(os.path.join(out, "interlaced.gif"), interlace=True)
    canvas = Image.new("P", (31, 23), 3)
    canvas.putpalette([v for i in range(256) for v in (i, 255 - i, (i * 3) % 256)])
    for y in range(5, 17):
        for x in range(4, 20):
            canvas.putpixel((x, y), (x * y) % 256)
    canvas.save(os.path.join(out, "transparent.gif"), transparency=3, optimize=False)
    gradient(21, 17, 9).convert("L").save(os.path.join(out, "gray.gif"))
    return [os.path.join(out, n) for n in
            ("animated.gif", "interlaced.gif", "transparent.gif", "gray.gif")]


def main(out, given):
    for path in write_gifs(out) + given:
        image = Image.open(path)
        frames = getattr(image, "n_frames", 1)
        rgb = image.convert("RGB")
        stem = os.path.join(out, os.path.splitext(os.path.basename(path))[0])
        with open(stem + ".rgb", "wb") as f:
            f.write(rgb.tobytes())
        with open(stem + ".txt", "w") as f:
            f.write("%d %d %d\n" % (rgb.width, rgb.height, frames))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
