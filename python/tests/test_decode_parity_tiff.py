"""Decode parity with Pillow for TIFF (issues 25 and 44): every layout
src/image/pil_tiff_layouts.py writes (bilevel, 2/4/8-bit gray in both photometrics and
fill orders, 12/16/32-bit integer and 32-bit float gray, palette, RGB, RGBA and CMYK at
8 and 16 bits, separate planes, JPEG/LZW/Deflate/PackBits, tiles, BigTIFF, YCbCr,
Orientation tags), decoded by imgpipe.decode_image to Pillow's pixels, difference 0.

The reference is test_decode_parity's (Pillow's convert("RGB")), with its rule for
integer gray generalised by bit depth as docs/image-formats.md states it: Pillow's value
>> (BitsPerSample - 8), negatives 0 (16 bits: the high byte, as there).
"""

import io
import pathlib
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

import imgpipe
from test_decode_parity import pillow_rgb

LAYOUTS = pathlib.Path(__file__).resolve().parents[2] / "src" / "image" / "pil_tiff_layouts.py"


@pytest.fixture(scope="module")
def layout_files(tmp_path_factory):
    out = tmp_path_factory.mktemp("tiff_layouts")
    subprocess.run([sys.executable, str(LAYOUTS), str(out)], check=True, cwd=LAYOUTS.parent,
                   stdout=subprocess.DEVNULL)
    return sorted(out.glob("layout-*.tif"))


def tiff_reference(data):
    """Pillow's pixels of a TIFF as imgpipe must give them (the module docstring)."""
    with Image.open(io.BytesIO(data)) as im:
        if im.mode in ("I;16", "I;16B", "I;16L", "I"):
            im.load()
            bits = im.tag_v2.get(258, 16)
            bits = bits[0] if isinstance(bits, tuple) else bits
            gray = (np.asarray(im).astype(np.int64) >> (bits - 8)).clip(0, 255).astype(np.uint8)
            return np.repeat(gray[:, :, None], 3, axis=2)
    fmt, rgb = pillow_rgb(data)
    assert fmt == "TIFF"
    return rgb


def test_every_tiff_layout_decodes_to_pillows_pixels(layout_files):
    assert len(layout_files) >= 100
    differ = {}
    for path in layout_files:
        data = path.read_bytes()
        expected = tiff_reference(data)
        got = imgpipe.decode_image(data, path=path.name)
        if got.shape != expected.shape:
            differ[path.name] = f"shape {got.shape} vs {expected.shape}"
            continue
        difference = int(np.abs(got.astype(np.int16) - expected.astype(np.int16)).max())
        if difference:
            differ[path.name] = f"differs by up to {difference}"
    assert differ == {}


def test_bigtiff_and_its_signatures(layout_files):
    big = next(p for p in layout_files if p.name.endswith("-bigtiff.tif")).read_bytes()
    assert big[:4] == b"II+\0"
    np.testing.assert_array_equal(imgpipe.decode_image(big), tiff_reference(big))
