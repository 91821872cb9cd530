#!/usr/bin/python3
"""Writes TIFFs of every layout Pillow 9.4 reads, for tiff_decoder_test.cc.

Usage: pil_tiff_layouts.py OUT_DIR. Writes OUT_DIR/layout-*.tif:
- by hand (uncompressed, either byte order): bilevel and 2/4/8-bit gray, MinIsBlack
  and MinIsWhite, FillOrder 1 and 2; 12-bit gray; 16-bit gray (both byte orders,
  signed); 32-bit integer and float gray (float MinIsWhite too); 2/4/8-bit palette;
  RGB, RGBA (associated and unassociated alpha) and CMYK at 8 and 16 bits; RGB in
  separate planes; YCbCr; Orientation 3, 6 and 8 on some of them;
- with libtiff's tiffcp (libtiff-tools) from those: LZW, Deflate, PackBits and JPEG
  compression (JPEG: YCbCr, RGB, gray and CMYK), tiles, FillOrder 2 of compressed data,
  BigTIFF, separate planes compressed; and bigtiff-be-rgb16.tif, a big-endian BigTIFF
  (which Pillow 9.4 does not identify);
then pil_decode.py's outputs of each (NAME.rgb and NAME.txt, or NAME.error). Exits
non-zero on any failure.
"""
import os
import struct
import subprocess
import sys

import numpy as np

import pil_decode

W, H = 37, 23  # odd sizes: rows end mid-byte, strips and tiles are cut


def grid(scale):
    """A W x H pattern of integers 0..scale - 1 that varies along both axes and, for
    large scales, spans the range."""
    y, x = np.mgrid[0:H, 0:W]
    return (x * 7 + y * 13 + x * y) * (scale // 1024 + 1) % scale


def pack_bits(values, bits):
    """Rows of `bits`-bit integers packed most significant bit first, each row padded
    to a byte."""
    out = b""
    for row in values:
        acc, n, data = 0, 0, bytearray()
        for v in row:
            acc = acc << bits | int(v)
            n += bits
            while n >= 8:
                data.append(acc >> (n - 8) & 0xFF)
                n -= 8
        if n:
            data.append(acc << (8 - n) & 0xFF)
        out += bytes(data)
    return out


REVERSED = bytes(int("{:08b}".format(i)[::-1], 2) for i in range(256))


def write_tiff(path, tags, data, big_endian=False):
    """An uncompressed TIFF: `tags` {tag: (type, [values])} besides the size, strip and
    compression tags, which this adds; `data` the pixels, one strip, or a list of
    strips (one per plane)."""
    e = ">" if big_endian else "<"
    strips = data if isinstance(data, list) else [data]
    tags = dict(tags)
    tags.setdefault(256, (4, [W]))
    tags.setdefault(257, (4, [H]))
    tags[259] = (3, [1])
    tags[273] = (4, [0] * len(strips))  # offsets set below, once the layout is known
    tags[278] = (4, [H])
    tags[279] = (4, [len(s) for s in strips])
    codes = {3: "H", 4: "I"}

    def blob(tag):
        kind, values = tags[tag]
        return struct.pack(e + codes[kind] * len(values), *values)

    extra_at = 8 + 2 + 12 * len(tags) + 4
    data_at = extra_at + sum(len(blob(t)) for t in tags if len(blob(t)) > 4)
    offsets, at = [], data_at
    for strip in strips:
        offsets.append(at)
        at += len(strip)
    tags[273] = (4, offsets)
    entries, extra = b"", b""
    for tag in sorted(tags):
        kind, values = tags[tag]
        value = blob(tag)
        entries += struct.pack(e + "HHI", tag, kind, len(values))
        if len(value) <= 4:
            entries += value + bytes(4 - len(value))
        else:
            entries += struct.pack(e + "I", extra_at + len(extra))
            extra += value
    header = (b"MM\0\x2a" if big_endian else b"II\x2a\0") + struct.pack(e + "I", 8)
    ifd = struct.pack(e + "H", len(tags)) + entries + struct.pack(e + "I", 0)
    with open(path, "wb") as f:
        f.write(header + ifd + extra + b"".join(strips))


def samples(values, dtype, big_endian=False):
    return np.asarray(values).astype(np.dtype(dtype).newbyteorder(">" if big_endian else "<")).tobytes()


def write_gray(out):
    for bits in (1, 2, 4, 8):
        values = grid(1 << bits)
        for photometric in (0, 1):
            for fill in (1, 2):
                if bits == 8 and photometric == 0 and fill == 2:
                    continue  # Pillow 9.4 has no unpacker for it ("L;IR")
                data = pack_bits(values, bits)
                if fill == 2:
                    data = data.translate(REVERSED)
                name = "layout-gray%d-pm%d-fill%d.tif" % (bits, photometric, fill)
                write_tiff(os.path.join(out, name),
                           {258: (3, [bits]), 262: (3, [photometric]), 266: (3, [fill])}, data)
    write_tiff(os.path.join(out, "layout-gray12.tif"), {258: (3, [12]), 262: (3, [1])},
               pack_bits(grid(4096) * 17 % 4096, 12))
    v16 = grid(65536) * 331 % 65536
    for big in (False, True):
        write_tiff(os.path.join(out, "layout-gray16%s.tif" % ("-be" if big else "")),
                   {258: (3, [16]), 262: (3, [1])}, samples(v16, "u2", big), big)
    write_tiff(os.path.join(out, "layout-gray16-signed.tif"),
               {258: (3, [16]), 262: (3, [1]), 339: (3, [2])}, samples(v16 - 32768, "i2"))
    v32 = grid(1 << 20) * 2654435761 % (1 << 31)
    write_tiff(os.path.join(out, "layout-gray32.tif"), {258: (3, [32]), 262: (3, [1])},
               samples(v32, "u4"))
    write_tiff(os.path.join(out, "layout-gray32-signed.tif"),
               {258: (3, [32]), 262: (3, [1]), 339: (3, [2])}, samples(v32 - (1 << 30), "i4"))
    floats = grid(400) * 0.77 - 30.5
    for photometric in (0, 1):
        write_tiff(os.path.join(out, "layout-float32-pm%d.tif" % photometric),
                   {258: (3, [32]), 262: (3, [photometric]), 339: (3, [3])},
                   samples(floats, "f4"))
    write_tiff(os.path.join(out, "layout-float32-be.tif"),
               {258: (3, [32]), 262: (3, [1]), 339: (3, [3])}, samples(floats, "f4", True), True)


def colour_grid(channels, scale):
    return np.stack([(grid(scale) * (c * 2 + 3) + c * 5) % scale for c in range(channels)],
                    axis=2)


def write_colour(out):
    for bits in (2, 4, 8):
        colormap = [(i * 4099 + c * 20000) % 65536 for c in range(3) for i in range(1 << bits)]
        write_tiff(os.path.join(out, "layout-palette%d.tif" % bits),
                   {258: (3, [bits]), 262: (3, [3]), 320: (3, colormap)},
                   pack_bits(grid(1 << bits), bits))
    for bits, dtype in ((8, "u1"), (16, "u2")):
        scale = 1 << bits
        for big in (False, True) if bits == 16 else (False,):
            suffix = "%d%s" % (bits, "-be" if big else "")
            rgb = colour_grid(3, scale)
            write_tiff(os.path.join(out, "layout-rgb%s.tif" % suffix),
                       {258: (3, [bits] * 3), 262: (3, [2]), 277: (3, [3])},
                       samples(rgb, dtype, big), big)
        rgba = colour_grid(4, scale)
        rgba[:, :, 3] = np.maximum(rgba[:, :, 3], scale // 4)
        for extra in (1, 2):
            stored = rgba.copy()
            if extra == 1:  # associated: colour premultiplied
                stored[:, :, :3] = stored[:, :, :3] * stored[:, :, 3:] // (scale - 1)
            write_tiff(os.path.join(out, "layout-rgba%d-extra%d.tif" % (bits, extra)),
                       {258: (3, [bits] * 4), 262: (3, [2]), 277: (3, [4]), 338: (3, [extra])},
                       samples(stored, dtype))
        write_tiff(os.path.join(out, "layout-cmyk%d.tif" % bits),
                   {258: (3, [bits] * 4), 262: (3, [5]), 277: (3, [4])},
                   samples(colour_grid(4, scale), dtype))
    rgb = colour_grid(3, 256)
    write_tiff(os.path.join(out, "layout-rgb8-planar.tif"),
               {258: (3, [8] * 3), 262: (3, [2]), 277: (3, [3]), 284: (3, [2])},
               [samples(rgb[:, :, c], "u1") for c in range(3)])
    # YCbCr without subsampling (Pillow reads it through libtiff only when compressed).
    write_tiff(os.path.join(out, "ycbcr-raw.tif"),
               {258: (3, [8] * 3), 262: (3, [6]), 277: (3, [3]), 530: (3, [1, 1])},
               samples(colour_grid(3, 256), "u1"))


def write_oriented(out):
    for source, orientation in (("layout-gray4-pm0-fill1", 6), ("layout-rgb16", 3),
                                ("layout-palette4", 8), ("layout-float32-pm1", 5)):
        path = os.path.join(out, source + ".tif")
        target = os.path.join(out, "%s-orient%d.tif" % (source, orientation))
        tiffcp(["-c", "lzw"], path, target)
        subprocess.run(["tiffset", "-s", "274", str(orientation), target], check=True)


def tiffcp(options, source, target):
    subprocess.run(["tiffcp"] + options + [source, target], check=True)


def write_tiffcp_variants(out):
    def src(name):
        return os.path.join(out, name + ".tif")

    def dst(name):
        return os.path.join(out, "layout-" + name + ".tif")

    for c in ("lzw", "zip", "packbits"):
        for name in ("gray1-pm0-fill1", "gray2-pm1-fill1", "gray4-pm0-fill1", "gray12",
                     "gray16", "float32-pm1", "palette4", "rgb16", "rgba8-extra1",
                     "rgba16-extra1", "cmyk16", "rgb8-planar"):
            tiffcp(["-c", c], src("layout-" + name), dst("%s-%s" % (name, c)))
    for name in ("gray2-pm0-fill1", "gray4-pm1-fill1", "rgb8"):
        tiffcp(["-c", "lzw", "-f", "lsb2msb"], src("layout-" + name), dst(name + "-lzw-fill2"))
    for name in ("gray1-pm1-fill1", "gray8-pm1-fill1", "gray16", "palette8", "rgb8", "rgba16-extra2",
                 "cmyk8", "float32-pm1", "rgb8-planar"):
        tiffcp(["-c", "zip", "-t", "-w", "16", "-l", "16"], src("layout-" + name),
               dst(name + "-tiled"))
        tiffcp(["-8", "-c", "lzw"], src("layout-" + name), dst(name + "-bigtiff"))
    # Big-endian BigTIFF, which Pillow 9.4 cannot identify: not a layout-* file.
    tiffcp(["-8", "-B"], src("layout-rgb16-be"), src("bigtiff-be-rgb16"))
    tiffcp(["-c", "jpeg"], src("layout-rgb8"), dst("rgb8-jpeg-ycbcr"))
    tiffcp(["-c", "jpeg", "-t", "-w", "16", "-l", "16"], src("layout-rgb8"),
           dst("rgb8-jpeg-ycbcr-tiled"))
    tiffcp(["-c", "jpeg:r"], src("layout-rgb8"), dst("rgb8-jpeg-rgb"))
    tiffcp(["-c", "jpeg"], src("layout-gray8-pm1-fill1"), dst("gray8-jpeg"))
    tiffcp(["-c", "jpeg", "-r", "8"], src("layout-cmyk8"), dst("cmyk8-jpeg"))
    tiffcp(["-c", "lzw"], src("ycbcr-raw"), dst("ycbcr-lzw"))
    os.remove(src("ycbcr-raw"))


def main(out):
    write_gray(out)
    write_colour(out)
    write_tiffcp_variants(out)
    write_oriented(out)
    names = sorted(n for n in os.listdir(out) if n.endswith(".tif"))
    pil_decode.main(out, [os.path.join(out, n) for n in names])


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
