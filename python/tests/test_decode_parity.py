"""Decode parity with Pillow (issue 25, "nothing lost"): every image Pillow decodes,
imgpipe.decode_image (the pipeline's DecodeImage, RGB) decodes too, to the pixels of
Pillow's convert("RGB").

The images: every file under the shared test data that Pillow decodes (the rest, such
as image_list.txt or the lossless JPEGs Pillow refuses, are skipped), plus files this
test writes with Pillow in each format and mode Pillow can write (animated WebP and
GIF, read to their first frame, the GIF's second frame damaged; DIB), plus small files
written here byte by byte for formats Pillow reads but cannot write (PSD, Sun raster,
XPM) and for RLE BMPs whose runs overflow a row or the image or lack the end code, and a
cursor whose directory gives its image's size as 0.

The reference is Pillow's convert("RGB"), except:
- JPEG (and MPO, JPEG with more frames): ImageOps.exif_transpose first.
  imgpipe applies the EXIF orientation (it feeds a model what a viewer shows); Pillow's
  convert does not, so the oriented reference is the comparable one.
- 16-bit gray (PNG, TIFF, PGM; Pillow's modes "I;16" and "I"): Pillow's convert clips
  each value to 255 (65535 -> 255, but also 300 -> 255), which keeps no image
  information; imgpipe keeps the high byte (libpng's and libtiff's 16-to-8 strip, as
  OpenCV reads them to 8 bits). The reference is Pillow's own 16-bit values, v >> 8,
  difference 0.
No other bound is needed: the lossless formats must match exactly, and so must JPEG
(Pillow and imgpipe both run Debian's libjpeg-turbo with its default islow IDCT and
fancy upsampling) and lossy WebP (both run libwebp's own YUV to RGB conversion).
HEIF and AVIF are not compared here: Pillow 9.4 has no reader for them (their C++
tests, heif_decoder_test.cc, round-trip libheif's own encoders instead).
"""

import collections
import io
import os
import struct
import warnings

import numpy as np
import pytest
from PIL import Image, ImageOps

import imgpipe
from conftest import TESTDATA

# Formats (Pillow's names) whose every Pillow-decodable file imgpipe must decode.
MUST_DECODE = {"JPEG", "MPO", "PNG", "GIF", "BMP", "DIB", "TIFF", "WEBP", "TGA", "ICO", "CUR",
               "PSD", "PCX", "DCX", "SGI", "SUN", "PPM", "XBM", "XPM"}
# TIFF is not here: Pillow 9.4 applies a TIFF's Orientation tag when it loads the file
# (exif_transpose would turn it a second time), as imgpipe does (ParseTiff).
ORIENTED = {"JPEG", "MPO"}


def pillow_rgb(data):
    """Pillow's reference pixels for `data` (see the module docstring), with its format
    name; None when Pillow cannot decode it."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            im = Image.open(io.BytesIO(data))
            im.load()
            fmt = im.format
            if fmt in ORIENTED:
                im = ImageOps.exif_transpose(im)
            if im.mode in ("I;16", "I;16B", "I;16L", "I"):
                gray = (np.asarray(im).astype(np.int64) >> 8).clip(0, 255).astype(np.uint8)
                return fmt, np.repeat(gray[:, :, None], 3, axis=2)
            return fmt, np.asarray(im.convert("RGB"))
    except Exception:  # Pillow refuses it: not an image for this test
        return None


# ---- Files written with Pillow -------------------------------------------------------

def _picture(mode, size=(37, 23)):
    """A test picture in `mode`: gradients in each channel, so a swap or flip shows."""
    w, h = size
    y, x = np.mgrid[0:h, 0:w]
    rgb = np.stack([(x * 255 // (w - 1)), (y * 255 // (h - 1)), ((x + y) * 7) % 256], axis=2)
    base = Image.fromarray(rgb.astype(np.uint8), "RGB")
    if mode == "RGB":
        return base
    if mode == "RGBA":
        im = base.copy()
        im.putalpha(Image.fromarray(((x * 3 + y * 5) % 256).astype(np.uint8), "L"))
        return im
    if mode == "LA":
        return base.convert("LA")
    if mode == "P":
        return base.quantize(64)
    if mode == "PT":  # palette with a transparent index
        im = base.quantize(64)
        im.info["transparency"] = 3
        return im
    if mode in ("I;16", "I"):
        im = Image.fromarray((x * 65535 // (w - 1)).astype(np.uint16) | (y * 3).astype(np.uint16))
        return im if mode == "I;16" else im.convert("I")
    return base.convert(mode)  # L, 1, CMYK


def _save(im, fmt, **options):
    out = io.BytesIO()
    if "transparency" in im.info and fmt in ("PNG", "GIF", "TGA"):
        options.setdefault("transparency", im.info["transparency"])
    im.save(out, fmt, **options)
    return out.getvalue()


def _exif_jpeg(orientation):
    exif = Image.Exif()
    exif[0x0112] = orientation
    return _save(_picture("RGB", (40, 24)), "JPEG", quality=92, exif=exif.tobytes())


def pillow_written_files():
    """(name, bytes) for each format and mode Pillow writes."""
    modes = {
        "PNG": ["1", "L", "LA", "P", "PT", "RGB", "RGBA", "I;16"],
        "JPEG": ["L", "RGB", "CMYK"],
        "BMP": ["1", "L", "P", "RGB", "RGBA"],
        "GIF": ["L", "P", "PT", "RGB"],
        "TIFF": ["1", "L", "LA", "P", "RGB", "RGBA", "CMYK", "I;16"],
        "WEBP": ["RGB", "RGBA"],
        "TGA": ["L", "LA", "P", "RGB", "RGBA"],
        "ICO": ["RGB", "RGBA"],
        "PCX": ["1", "L", "P", "RGB"],
        "SGI": ["L", "RGB", "RGBA"],
        "PPM": ["1", "L", "RGB", "I"],
        "XBM": ["1"],
        # Pillow reads these, imgpipe names and refuses them (counted, not required).
        "IM": ["L", "RGB"],
        "DDS": ["RGB", "RGBA"],
        "ICNS": ["RGBA"],
        "BLP": ["P"],
        "MSP": ["1"],
    }
    files = []
    for fmt, fmt_modes in modes.items():
        for mode in fmt_modes:
            size = (64, 64) if fmt == "ICNS" else (37, 23)
            try:
                data = _save(_picture(mode, size), fmt)
            except (OSError, ValueError, KeyError):  # this Pillow cannot write that mode
                continue
            files.append((f"pil-{fmt}-{mode}", data))
    files.append(("pil-WEBP-lossless", _save(_picture("RGB"), "WEBP", lossless=True)))
    files.append(("pil-TGA-rle", _save(_picture("RGB"), "TGA", compression="tga_rle")))
    files.append(("pil-TGA-rle-P", _save(_picture("P"), "TGA", compression="tga_rle")))
    files.append(("pil-TIFF-lzw", _save(_picture("RGB"), "TIFF", compression="tiff_lzw")))
    files.append(("pil-JPEG-progressive", _save(_picture("RGB"), "JPEG", progressive=True)))
    files.append(("pil-ICO-bmp-entries",
                  _save(_picture("RGBA", (48, 48)), "ICO", sizes=[(16, 16), (32, 32), (48, 48)],
                        bitmap_format="bmp")))
    files.append(("pil-ICO-png-entries",
                  _save(_picture("RGBA", (48, 48)), "ICO", sizes=[(16, 16), (48, 48), (32, 32)])))
    for orientation in range(1, 9):
        files.append((f"pil-JPEG-exif-orientation-{orientation}", _exif_jpeg(orientation)))
    # First frames (issue 44): animated WebP and GIF, the GIF's second frame damaged.
    frames = [_picture("RGB"), _picture("RGB").rotate(180), _picture("RGBA")]
    for name, options in (("", {}), ("-lossless", {"lossless": True})):
        files.append((f"pil-WEBP-animated{name}",
                      _save(frames[2], "WEBP", save_all=True, append_images=frames[:2], **options)))
    gif = _save(_picture("P"), "GIF", save_all=True, append_images=[_picture("P").rotate(180)])
    second = _gif_second_descriptor(gif)
    files.append(("pil-GIF-second-frame-cut", gif[:second + 5]))
    files.append(("pil-GIF-second-frame-garbage", gif[:second + 1] + b"\xff" * 8 + gif[second + 9:]))
    # DIB: Pillow writes the BMP's info header, palette and pixels without the file header.
    for mode in ("1", "L", "P", "RGB", "RGBA"):
        files.append((f"pil-DIB-{mode}", _save(_picture(mode), "DIB")))
    return files


def _gif_second_descriptor(gif):
    """Where the second image descriptor (0x2C) of a GIF starts."""
    def skip_sub_blocks(at):
        while gif[at]:
            at += 1 + gif[at]
        return at + 1
    at, images = 13 + (3 * (2 << (gif[10] & 7)) if gif[10] & 0x80 else 0), 0
    while True:
        if gif[at] == 0x21:
            at = skip_sub_blocks(at + 2)
        elif gif[at] == 0x2C:
            images += 1
            if images == 2:
                return at
            flags = gif[at + 9]
            at = skip_sub_blocks(at + 10 + (3 * (2 << (flags & 7)) if flags & 0x80 else 0) + 1)
        else:
            raise ValueError("no second frame")


# ---- Files written by hand (Pillow reads these formats, but cannot write them) ----------

def _psd_rgb(pixels, rle):
    """A PSD of colour mode RGB, 8 bits, of `pixels`' channels (3: RGB; 4: RGB and alpha):
    header, three empty sections, the composite image's planes, raw or PackBits (a
    literal run per row)."""
    h, w, channels = pixels.shape
    out = b"8BPS" + struct.pack(">H6xHIIHH", 1, channels, h, w, 8, 3) + struct.pack(">III", 0, 0, 0)
    if not rle:
        return out + struct.pack(">H", 0) + pixels.transpose(2, 0, 1).tobytes()
    rows = []
    for c in range(channels):
        for y in range(h):
            row = pixels[y, :, c].tobytes()
            packed = b""
            for i in range(0, len(row), 128):
                chunk = row[i:i + 128]
                packed += bytes([len(chunk) - 1]) + chunk
            rows.append(packed)
    return out + struct.pack(">H", 1) + b"".join(struct.pack(">H", len(r)) for r in rows) + b"".join(rows)


def _with_alpha(rgb):
    """`rgb` with a fourth channel whose values run over 0..255."""
    h, w, _ = rgb.shape
    alpha = (np.arange(h * w, dtype=np.uint32) * 7 % 256).astype(np.uint8).reshape(h, w, 1)
    return np.concatenate([rgb, alpha], axis=2)


def _sun_raster(rgb, depth, rle):
    """A Sun raster file: 8-bit colour-mapped or 24-bit BGR, rows padded to 16 bits, raw
    (type 1) or byte-encoded (type 2, runs of equal bytes)."""
    h, w, _ = rgb.shape
    cmap = b""
    if depth == 8:
        colors, index = np.unique(rgb.reshape(-1, 3), axis=0, return_inverse=True)
        rows = index.reshape(h, w).astype(np.uint8)
        cmap = colors[:, 0].tobytes() + colors[:, 1].tobytes() + colors[:, 2].tobytes()
    else:
        rows = rgb[:, :, ::-1].reshape(h, w * 3)
    stride = (w * depth + 15) // 16 * 2
    data = b"".join(r.tobytes().ljust(stride, b"\0") for r in rows)
    if rle:
        encoded, i = bytearray(), 0
        while i < len(data):
            n = 1
            while i + n < len(data) and data[i + n] == data[i] and n < 256:
                n += 1
            if n >= 3 or data[i] == 0x80:
                encoded += bytes([0x80, n - 1, data[i]]) if n > 1 or data[i] != 0x80 else b"\x80\0"
            else:
                encoded += data[i:i + n]
            i += n
        data = bytes(encoded)
    header = struct.pack(">8I", 0x59A66A95, w, h, depth, len(data), 2 if rle else 1,
                         1 if cmap else 0, len(cmap))
    return header + cmap + data


def _rle_bmp(width, height, codes, rle4=False, colors=0):
    """An RLE8 (or RLE4) BMP written byte by byte: file header, 40-byte info header, a
    palette, the run-length codes."""
    entries = colors or (16 if rle4 else 256)
    palette = b"".join(bytes([(13 * i + 50) % 256, (91 * i) % 256, (37 * i) % 256, 0])
                       for i in range(entries))
    offset = 14 + 40 + len(palette)
    info = struct.pack("<IiiHHIIiiII", 40, width, height, 1, 4 if rle4 else 8, 2 if rle4 else 1,
                       len(codes), 2835, 2835, colors, 0)
    return b"BM" + struct.pack("<IHHI", offset + len(codes), 0, 0, offset) + info + palette + codes


def _xpm(rows, colors, comment=False):
    """An XPM as GIMP writes it (ImageMagick's "/* pixels */" line with `comment`)."""
    text = '/* XPM */\nstatic char *x[] = {\n"%d %d %d 1",\n' % (len(rows[0]), len(rows), len(colors))
    text += "".join('"%s\tc %s",\n' % (key, value) for key, value in colors)
    text += "/* pixels */\n" if comment else ""
    return (text + ",\n".join('"%s"' % row for row in rows) + "};\n").encode()


def rle_bmp_and_xpm_files():
    """RLE BMPs whose runs overflow a row or the image, or end without the end-of-bitmap
    code, as Pillow 9.4 reads them; XPM files; a cursor whose directory size is 0."""
    xpm_colors = [("a", "#FF0000"), ("b", "#00ff80"), (".", "None"), ("c", "#123456"), (" ", "#0000FF")]
    xpm_rows = ["ab.c  abc", ".abc  cba", "c  ba ..a"]
    cur = bytearray(b"\0\0\2\0" + _save(_picture("RGBA", (32, 32)), "ICO", sizes=[(32, 32)],
                                         bitmap_format="bmp")[4:])
    cur[6 + 8:6 + 12] = b"\0\0\0\0"
    return [
        ("hand-BMP-rle8", _rle_bmp(6, 3, bytes([6, 1, 0, 0, 6, 2, 0, 0, 6, 3, 0, 1]))),
        ("hand-BMP-rle8-row-overflow", _rle_bmp(6, 3, bytes([9, 1, 0, 0, 6, 2, 0, 0, 6, 3, 0, 1]))),
        ("hand-BMP-rle8-absolute-overflow",
         _rle_bmp(6, 3, bytes([0, 8, 1, 2, 3, 4, 5, 6, 7, 8, 3, 9, 0, 0, 6, 3, 0, 1]))),
        ("hand-BMP-rle8-image-overflow",
         _rle_bmp(6, 3, bytes([6, 1, 0, 0, 6, 2, 0, 0, 0, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 1]))),
        ("hand-BMP-rle8-short-rows", _rle_bmp(6, 3, bytes([3, 1, 0, 0, 6, 2, 0, 0, 2, 3, 0, 0, 0, 1]))),
        ("hand-BMP-rle8-no-end", _rle_bmp(6, 3, bytes([6, 1, 0, 0, 6, 2, 0, 0, 6, 3]))),
        ("hand-BMP-rle8-top-down", _rle_bmp(6, -3, bytes([9, 1, 0, 0, 6, 2, 0, 0, 6, 3, 0, 1]))),
        ("hand-BMP-rle4", _rle_bmp(7, 2, bytes([7, 0x12, 0, 0, 0, 4, 0x34, 0x56, 3, 0xF0, 0, 1]), True)),
        ("hand-BMP-rle4-row-overflow",
         _rle_bmp(6, 3, bytes([9, 0x12, 0, 0, 7, 0x56, 0, 0, 6, 0x78, 0, 1]), True, 5)),
        ("hand-XPM", _xpm(xpm_rows, xpm_colors)),
        ("hand-XPM-short-row", _xpm(xpm_rows[:1] + ["ab"] + xpm_rows[2:], xpm_colors)),
        ("hand-XPM-undefined-key", _xpm(["zzz" + xpm_rows[0][3:]] + xpm_rows[1:], xpm_colors)),
        ("hand-CUR-size-0", bytes(cur)),
    ]


def handmade_files():
    rgb = np.asarray(_picture("RGB"))
    few = np.asarray(_picture("P").convert("RGB"))  # at most 64 colours
    even = np.asarray(_picture("RGB", (38, 23)))
    few_even = np.asarray(_picture("P", (38, 23)).convert("RGB"))
    return [
        ("hand-PSD-raw", _psd_rgb(rgb, False)),
        ("hand-PSD-packbits", _psd_rgb(rgb, True)),
        # RGB and an alpha of every value: Pillow drops the alpha and keeps the colour
        # as stored (stb_image alone would divide it by the alpha).
        ("hand-PSD-alpha-raw", _psd_rgb(_with_alpha(rgb), False)),
        ("hand-PSD-alpha-packbits", _psd_rgb(_with_alpha(rgb), True)),
        ("hand-SUN-24", _sun_raster(rgb, 24, False)),
        # Byte-encoded rows of an even number of bytes: Pillow decodes the runs without
        # the rows' 16-bit padding (the format's, and imgpipe's), so the two differ
        # for odd widths at 8 bits and odd widths at 24 (docs/image-formats.md).
        ("hand-SUN-24-rle", _sun_raster(even, 24, True)),
        ("hand-SUN-8-colormap", _sun_raster(few, 8, False)),
        ("hand-SUN-8-colormap-rle", _sun_raster(few_even, 8, True)),
        # DCX: its magic, the page offsets (ending in 0), then PCX pages; the first is read.
        ("hand-DCX", struct.pack("<III", 0x3ADE68B1, 12, 0) + _save(_picture("RGB"), "PCX")),
        # CUR: an ICO of BMP entries with type 2 (the hot spot where ICO keeps planes and
        # bit count, which Pillow's CUR reader ignores too).
        ("hand-CUR", b"\0\0\2\0" + _save(_picture("RGBA", (32, 32)), "ICO", sizes=[(32, 32)],
                                         bitmap_format="bmp")[4:]),
    ]


def shared_files():
    files = []
    for root, dirs, names in os.walk(TESTDATA):
        dirs.sort()
        for name in sorted(names):
            path = os.path.join(root, name)
            files.append((os.path.relpath(path, TESTDATA), path))
    return files


def _cases():
    """(id, bytes loader) for every candidate file; cheap to list, read when run."""
    written = pillow_written_files() + handmade_files() + rle_bmp_and_xpm_files()
    cases = [(name, (lambda d=data: d)) for name, data in written]
    for rel, path in shared_files():
        cases.append((rel, (lambda p=path: open(p, "rb").read())))
    return cases


CASES = _cases()


def _imgpipe_rgb(data):
    return imgpipe.decode_image(data)


# Cases that fail because of a path another change owns, each with the reason: strict,
# so each fails the suite again once fixed (then remove it here).
KNOWN_DIFFERENCES = {
    # (RGBA TIFF with unassociated alpha, which libtiff's RGBA reader premultiplied, is
    # decoded as Pillow does since opencv_decoder.cc reads its alpha as unspecified.)
}


def _case_params():
    for name, load in CASES:
        marks = []
        if name in KNOWN_DIFFERENCES:
            marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_DIFFERENCES[name]))
        yield pytest.param(name, load, id=name, marks=marks)


@pytest.mark.parametrize("name,load", list(_case_params()))
def test_imgpipe_decodes_what_pillow_decodes_to_the_same_pixels(name, load):
    data = load()
    reference = pillow_rgb(data)
    if reference is None:
        pytest.skip("Pillow does not decode it")
    fmt, expected = reference
    try:
        got = _imgpipe_rgb(data)
    except imgpipe.DataError as e:
        if fmt in MUST_DECODE:
            pytest.fail(f"{fmt}: Pillow decodes it, imgpipe refuses it: {e.reason}")
        pytest.skip(f"{fmt}: imgpipe refuses it by name: {e.reason}")
    assert got.dtype == np.uint8
    assert got.shape == expected.shape, fmt
    difference = np.abs(got.astype(np.int16) - expected.astype(np.int16))
    assert int(difference.max()) == 0, (
        f"{fmt}: {int((difference > 0).sum())} samples differ, by up to {int(difference.max())}")


def test_no_format_loses_files_pillow_decodes():
    """Per format: how many files Pillow decodes and imgpipe refuses. 0 for each
    format imgpipe reads; the formats it names and refuses are listed, not required."""
    decoded, refused = collections.Counter(), collections.Counter()
    reasons = {}
    for name, load in CASES:
        data = load()
        reference = pillow_rgb(data)
        if reference is None:
            continue
        fmt = reference[0]
        decoded[fmt] += 1
        try:
            _imgpipe_rgb(data)
        except imgpipe.DataError as e:
            refused[fmt] += 1
            reasons.setdefault(fmt, f"{name}: {e.reason}")
    report = {fmt: (decoded[fmt], refused[fmt]) for fmt in sorted(decoded)}
    print("format: (Pillow decodes, imgpipe refuses)", report)
    lost = {fmt: reasons[fmt] for fmt in refused if fmt in MUST_DECODE}
    assert lost == {}, lost
    for fmt in ("JPEG", "PNG", "GIF", "BMP", "TIFF", "WEBP", "TGA", "ICO", "PSD", "PCX", "SGI",
                "SUN", "PPM", "XBM", "DIB", "CUR", "XPM"):
        assert decoded[fmt] > 0, f"no {fmt} file was tried"
    # The refused ones are refused by name ("not an image: DDS texture (unsupported)"),
    # not as "unknown signature".
    for fmt in refused:
        assert "unknown signature" not in reasons[fmt], reasons[fmt]
        assert fmt in reasons[fmt] and "(unsupported)" in reasons[fmt], reasons[fmt]


def test_decode_image_errors_keep_their_context():
    with pytest.raises(imgpipe.DataError) as info:
        imgpipe.decode_image(b"DDS |" + b"\0" * 120, path="t.dds")
    assert info.value.path == "t.dds"
    assert info.value.reason == "not an image: DDS texture (unsupported)"
    # A reason quoting bytes of the file that are not UTF-8 (a WebP's first chunk name).
    with pytest.raises(imgpipe.DataError) as info:
        imgpipe.decode_image(b"RIFF\x20\0\0\0WEBPVP8\xa9" + b"\0" * 24)
    assert info.value.reason == "invalid WebP: unknown first chunk 'VP8\ufffd'"
    truncated = _sun_raster(np.asarray(_picture("RGB")), 24, False)[:200]
    with pytest.raises(imgpipe.DataError) as info:
        imgpipe.decode_image(truncated)
    assert info.value.reason == "truncated Sun raster data"
    assert info.value.offset == 32
