#!/usr/bin/python3
"""Writes TIFF and BMP variants for decode_warnings_test.cc to compare with Pillow.

Usage: pil_tiff_bmp.py OUT_DIR. Writes into OUT_DIR:
- orient-N.tif, N = 1..8: an RGB TIFF with Orientation N (and orient-N-gray.tif, L,
  orient-N-RGBA.tif, orient-N-I16.tif, orient-N-F.tif);
- tiff-MODE-COMPRESSION[-tiled|-strips|-pred|-be].tif: Pillow's TIFF writer for modes
  1, L, LA, P, RGB, RGBA, CMYK, I;16, F and compressions raw, tiff_lzw, tiff_deflate,
  tiff_adobe_deflate, packbits, jpeg (where Pillow writes them), tiled, several strips,
  a horizontal predictor, big-endian ("MM");
- bmp-*.bmp: Pillow's BMP writer (1, 4 via P with 16 colours, 8, 24, 32 bits) and
  hand-written ones (16-bit 5-5-5, BITFIELDS 5-6-5 and 8-8-8-8, RLE8, RLE4, top-down,
  V4 and V5 headers).
Then, for decode_warnings_test.cc, pil_decode.py's outputs of each (NAME.rgb, NAME.txt
or NAME.error). Exits non-zero on any failure.
"""
import os
import struct
import sys

from PIL import Image, TiffImagePlugin

import pil_decode

W, H = 37, 23  # odd sizes: no row ends on a byte, strip or tile boundary


def gradient(mode):
    rgb = Image.new("RGB", (W, H))
    rgb.putdata([((x * 7) % 256, (y * 11) % 256, (x * y * 3 + 40) % 256)
                 for y in range(H) for x in range(W)])
    if mode == "RGB":
        return rgb
    if mode == "RGBA":
        rgba = rgb.convert("RGBA")
        rgba.putalpha(Image.new("L", (W, H), 200))
        return rgba
    if mode == "LA":
        la = rgb.convert("LA")
        la.putalpha(Image.new("L", (W, H), 120))
        return la
    if mode == "P":
        return rgb.quantize(64)
    if mode == "I;16":
        image = Image.new("I;16", (W, H))
        image.putdata([(x * 9 + y * 3) % 300 for y in range(H) for x in range(W)])
        return image
    if mode == "F":
        image = Image.new("F", (W, H))
        image.putdata([x * 7.3 - 20 + y for y in range(H) for x in range(W)])
        return image
    return rgb.convert(mode)


def write_orientations(out):
    for n in range(1, 9):
        ifd = TiffImagePlugin.ImageFileDirectory_v2()
        ifd[274] = n
        gradient("RGB").save(os.path.join(out, "orient-%d.tif" % n), tiffinfo=ifd)
        ifd = TiffImagePlugin.ImageFileDirectory_v2()
        ifd[274] = n
        gradient("L").save(os.path.join(out, "orient-%d-gray.tif" % n), tiffinfo=ifd,
                           compression="tiff_lzw")
        for mode in ("RGBA", "I;16", "F"):
            ifd = TiffImagePlugin.ImageFileDirectory_v2()
            ifd[274] = n
            name = "orient-%d-%s.tif" % (n, mode.replace(";", ""))
            gradient(mode).save(os.path.join(out, name), tiffinfo=ifd)


def write_tiffs(out):
    compressions = ["raw", "tiff_lzw", "tiff_deflate", "tiff_adobe_deflate", "packbits"]
    for mode in ["1", "L", "LA", "P", "RGB", "RGBA", "CMYK", "I;16", "F"]:
        for compression in compressions + (["jpeg"] if mode in ("L", "RGB") else []):
            name = "tiff-%s-%s" % (mode.replace(";", ""), compression)
            gradient(mode).save(os.path.join(out, name + ".tif"), compression=compression)
    rgb = gradient("RGB")
    rgb.save(os.path.join(out, "tiff-RGB-tiled.tif"), tiled=True, tile_width=16,
             tile_height=16, compression="tiff_deflate")
    rgb.save(os.path.join(out, "tiff-RGB-strips.tif"), strip_size=3 * W * 5)
    rgb.save(os.path.join(out, "tiff-RGB-pred.tif"), compression="tiff_lzw",
             tiffinfo={317: 2})
    write_big_endian_tiff(os.path.join(out, "tiff-RGB-be.tif"), rgb)


def write_big_endian_tiff(path, rgb):
    """An uncompressed RGB TIFF in big-endian ("MM") byte order, by hand."""
    data = rgb.tobytes()
    entries = [(256, 3, W), (257, 3, H), (258, 3, 8), (259, 3, 1), (262, 3, 2),
               (273, 4, 8), (277, 3, 3), (278, 3, H), (279, 4, len(data))]
    ifd = struct.pack(">H", len(entries))
    for tag, kind, value in entries:
        ifd += struct.pack(">HHI", tag, kind, 1)
        ifd += struct.pack(">HH", value, 0) if kind == 3 else struct.pack(">I", value)
    ifd += struct.pack(">I", 0)
    with open(path, "wb") as f:
        f.write(b"MM\0\x2a" + struct.pack(">I", 8 + len(data)) + data + ifd)


def bmp(out, name, bits, rows, palette=b"", compression=0, dib=40, masks=None,
        top_down=False):
    """Writes a BMP by hand: `rows` the pixel data as stored (bottom-up unless top_down,
    each row padded to 4 bytes, or an RLE stream)."""
    data = b"".join(rows) if isinstance(rows, list) else rows
    header = struct.pack("<IiiHHIIiiII", dib, W, -H if top_down else H, 1, bits, compression,
                         len(data), 2835, 2835, len(palette) // 4, 0)
    if dib >= 52:
        header += struct.pack("<III", *(masks or (0, 0, 0)))
    if dib >= 56:
        header += struct.pack("<I", masks[3] if masks and len(masks) > 3 else 0)
    if dib >= 108:
        header += b"BGRs" + bytes(36) + bytes(12)
    if dib >= 124:
        header += struct.pack("<IIII", 4, 0, 0, 0)
    extra = b""
    if dib == 40 and masks:
        extra = struct.pack("<III", *masks[:3])
    offset = 14 + len(header) + len(extra) + len(palette)
    with open(os.path.join(out, name + ".bmp"), "wb") as f:
        f.write(b"BM" + struct.pack("<IHHI", offset + len(data), 0, 0, offset))
        f.write(header + extra + palette + data)


def pad(row):
    return row + bytes(-len(row) % 4)


def write_bmps(out):
    for mode, name in [("1", "bmp-1"), ("L", "bmp-8"), ("RGB", "bmp-24"), ("RGBA", "bmp-32")]:
        gradient(mode).save(os.path.join(out, name + ".bmp"))
    rgb = gradient("RGB")
    pixels = [[rgb.getpixel((x, y)) for x in range(W)] for y in range(H)]
    order = list(range(H - 1, -1, -1))
    # 16-bit 5-5-5 (BI_RGB), 5-6-5 and 8-8-8-8 (BI_BITFIELDS), top-down 24-bit, V4, V5.
    rows555 = [pad(b"".join(struct.pack("<H", (r >> 3) << 10 | (g >> 3) << 5 | b >> 3)
                            for r, g, b in pixels[y])) for y in order]
    bmp(out, "bmp-16-555", 16, rows555)
    rows565 = [pad(b"".join(struct.pack("<H", (r >> 3) << 11 | (g >> 2) << 5 | b >> 3)
                            for r, g, b in pixels[y])) for y in order]
    bmp(out, "bmp-16-565-bitfields", 16, rows565, compression=3,
        masks=(0xF800, 0x07E0, 0x001F))
    rows8888 = [b"".join(struct.pack("<I", r << 16 | g << 8 | b | 0xFF000000)
                         for r, g, b in pixels[y]) for y in order]
    bmp(out, "bmp-32-bitfields", 32, rows8888, compression=3,
        masks=(0xFF0000, 0xFF00, 0xFF))
    rows24 = [pad(b"".join(bytes((b, g, r)) for r, g, b in pixels[y])) for y in range(H)]
    bmp(out, "bmp-24-topdown", 24, rows24, top_down=True)
    rows24 = [pad(b"".join(bytes((b, g, r)) for r, g, b in pixels[y])) for y in order]
    bmp(out, "bmp-24-v4", 24, rows24, dib=108)
    bmp(out, "bmp-24-v5", 24, rows24, dib=124)
    # 4-bit and 8-bit palettes, stored plain and RLE-compressed.
    palette = b"".join(bytes((i * 16 % 256, 255 - i * 16 % 256, i * 5, 0)) for i in range(16))
    index = [[(x // 3 + y // 4) % 16 for x in range(W)] for y in range(H)]
    bmp(out, "bmp-4", 4, [pad(bytes(index[y][x] << 4 | (index[y][x + 1] if x + 1 < W else 0)
                                    for x in range(0, W, 2))) for y in order], palette)
    bmp(out, "bmp-8-palette", 8, [pad(bytes(index[y])) for y in order], palette)
    bmp(out, "bmp-rle8", 8, rle(index, order, lambda i: i), palette, compression=1)
    bmp(out, "bmp-rle4", 4, rle(index, order, lambda i: i << 4 | i), palette, compression=2)


def rle(index, order, code):
    """BMP RLE data of the rows `order` of `index`: runs (count, code(index)), an
    end-of-line after each row, end-of-bitmap after the last."""
    data = b""
    for y in order:
        x = 0
        while x < W:
            run = 1
            while x + run < W and run < 255 and index[y][x + run] == index[y][x]:
                run += 1
            data += bytes((run, code(index[y][x])))
            x += run
        data += b"\0\0"
    return data[:-2] + b"\0\1"


def main(out):
    write_orientations(out)
    write_tiffs(out)
    write_bmps(out)
    names = sorted(n for n in os.listdir(out) if n.endswith((".tif", ".bmp")))
    pil_decode.main(out, [os.path.join(out, n) for n in names])


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
