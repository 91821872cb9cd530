"""Decode parity with Pillow (issue 25, "nothing lost"): every image Pillow decodes,
imgpipe.decode_image (the pipeline's DecodeImage, RGB) decodes too, to the pixels of
Pillow's convert("RGB").

The images: every file under the shared test data that Pillow decodes (the rest, such
as image_list.txt or the lossless JPEGs Pillow refuses, are skipped), plus files this
test writes with Pillow in each format and mode Pillow can write, plus small files
written here byte by byte for formats Pillow reads but cannot write (PSD, Sun raster).

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
               "PSD", "PCX", "DCX", "SGI", "SUN", "PPM", "XBM"}
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
    return files


# ---- Files written by hand (Pillow reads these formats, but cannot write them) ----------

def _psd_rgb(rgb, rle):
    """A PSD of colour mode RGB, 8 bits: header, three empty sections, the composite
    image's planes, raw or PackBits (a literal run per row)."""
    h, w, _ = rgb.shape
    out = b"8BPS" + struct.pack(">H6xHIIHH", 1, 3, h, w, 8, 3) + struct.pack(">III", 0, 0, 0)
    if not rle:
        return out + struct.pack(">H", 0) + rgb.transpose(2, 0, 1).tobytes()
    rows = []
    for c in range(3):
        for y in range(h):
            row = rgb[y, :, c].tobytes()
            packed = b""
            for i in range(0, len(row), 128):
                chunk = row[i:i + 128]
                packed += bytes([len(chunk) - 1]) + chunk
            rows.append(packed)
    return out + struct.pack(">H", 1) + b"".join(struct.pack(">H", len(r)) for r in rows) + b"".join(rows)


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


def handmade_files():
    rgb = np.asarray(_picture("RGB"))
    few = np.asarray(_picture("P").convert("RGB"))  # at most 64 colours
    even = np.asarray(_picture("RGB", (38, 23)))
    few_even = np.asarray(_picture("P", (38, 23)).convert("RGB"))
    return [
        ("hand-PSD-raw", _psd_rgb(rgb, False)),
        ("hand-PSD-packbits", _psd_rgb(rgb, True)),
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
    cases = [(name, (lambda d=data: d)) for name, data in pillow_written_files() + handmade_files()]
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
                "SUN", "PPM", "XBM"):
        assert decoded[fmt] > 0, f"no {fmt} file was tried"
    # The refused ones are refused by name, not as "unknown signature".
    for fmt in refused:
        assert "unknown signature" not in reasons[fmt], reasons[fmt]


def test_decode_image_errors_keep_their_context():
    with pytest.raises(imgpipe.DataError) as info:
        imgpipe.decode_image(b"DDS |" + b"\0" * 120, path="t.dds")
    assert info.value.path == "t.dds"
    assert info.value.reason == "not an image: DDS texture (unsupported)"
    truncated = _sun_raster(np.asarray(_picture("RGB")), 24, False)[:200]
    with pytest.raises(imgpipe.DataError) as info:
        imgpipe.decode_image(truncated)
    assert info.value.reason == "truncated Sun raster data"
    assert info.value.offset == 32
