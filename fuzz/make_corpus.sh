#!/usr/bin/env bash
# Writes seed corpora for the fuzz targets into OUT/<fuzzer>/ (a scratch folder, not the
# repository): TFRecord files and images from ../shared/testdata, the records inside
# those TFRecord files, a few tiny images made with PIL (fast to decode, every layout),
# and small hand-written index and manifest files.
#   fuzz/make_corpus.sh OUT
set -euo pipefail
out="${1:?usage: fuzz/make_corpus.sh OUT}"
root=$(cd "$(dirname "$0")/.." && pwd)
testdata="${IMGPIPE_TESTDATA_DIR:-$root/../shared/testdata}"
[ -d "$testdata" ] || { echo "make_corpus: no test data at $testdata" >&2; exit 1; }
mkdir -p "$out"/{tfrecord_reader,example,index,manifest,image_decode,jpeg_region}_fuzzer

# 1. TFRecord files (plain, gzip, TensorBoard events); mnist is 3 MB, so only its start.
cp "$testdata"/tfrecord/pytorch-data/*.tfrecord "$testdata"/tfrecord/tfx/*.gz \
   "$out/tfrecord_reader_fuzzer/"
head -c 20000 "$testdata/tfrecord/tfx/mnist.tfrecord" > "$out/tfrecord_reader_fuzzer/mnist-head"
i=0
for f in "$testdata"/tfevents/*/*/events.out.tfevents.*; do
  cp "$f" "$out/tfrecord_reader_fuzzer/tfevents-$((i++))"
done

# 2. Images: every JPEG chroma subsampling, a PNG, a GIF, the bad images, then tiny ones.
cp "$testdata"/images/mixed-formats/0/*.jpg "$out/image_decode_fuzzer/"
cp "$testdata/images/mixed-formats/1/auto-union-3579207_640.png" \
   "$testdata/images/hymenoptera/train/ants/imageNotFound.gif" \
   "$testdata/bad-images/testimgari.jpg" "$testdata/bad-images/monkey12.jpg" \
   "$testdata/bad-images/jpeg-lossless/0/cat-3449999_640_grayscale_8bit.jpg" \
   "$out/image_decode_fuzzer/"
cp "$testdata"/images/mixed-formats/0/*.jpg "$testdata/bad-images/testimgari.jpg" \
   "$out/jpeg_region_fuzzer/"

# 3. What needs a program: records, index lines, tiny images.
/usr/bin/python3 - "$out" "$testdata" <<'PY'
import io, os, struct, sys, zlib
from PIL import Image

out, testdata = sys.argv[1], sys.argv[2]

def write(folder, name, data):
    with open(os.path.join(out, folder, name), "wb") as f:
        f.write(data)

def records(data):  # (offset, size, payload) of each TFRecord record
    pos = 0
    while pos + 12 <= len(data):
        (length,) = struct.unpack_from("<Q", data, pos)
        yield pos, 12 + length + 4, data[pos + 12:pos + 12 + length]
        pos += 12 + length + 4

# Records for the Example decoder, and index files for the index parser.
for name in ("example", "sequence_example"):
    data = open(os.path.join(testdata, "tfrecord/pytorch-data", name + ".tfrecord"), "rb").read()
    entries = list(records(data))
    for i, (_, _, payload) in enumerate(entries):
        write("example_fuzzer", "%s-%d" % (name, i), payload)
    write("index_fuzzer", name + ".idx",
          "".join("%d %d\n" % (offset, size) for offset, size, _ in entries).encode())
    write("tfrecord_reader_fuzzer", name + ".zlib", zlib.compress(data))
write("index_fuzzer", "empty", b"")
write("index_fuzzer", "one", b"0 16\n")
write("index_fuzzer", "not-contiguous", b"0 16\n17 16\n")

# Manifests: the first byte picks CSV (even) or JSON Lines (odd).
write("manifest_fuzzer", "csv-header", b"\0path,label\ncats/a.jpg,cat\n\"dogs/b,c.jpg\",\"do\"\"g\"\n")
write("manifest_fuzzer", "csv-integers", b"\0label,path\r\n3,/abs/x.png\r\n\r\n0,y.jpg\r\n")
write("manifest_fuzzer", "jsonl", b'\1{"path": "a.jpg", "label": "cat"}\n\n{"path": "b.jpg", "label": 2}\n')
write("manifest_fuzzer", "jsonl-integers", b'\1{"label": 0, "path": "x/y.jpg"}\n{"path":"z","label":1}')

# Tiny images: JPEG in every sampling, progressive, gray, CMYK, EXIF-rotated; PNG in
# every colour type; BMP, PNM and TIFF; GIF plain, interlaced, transparent and animated.
rgb = Image.new("RGB", (19, 13))
for y in range(13):
    for x in range(19):
        rgb.putpixel((x, y), (x * 13, y * 19, (x * y) % 256))
def jpeg(image, **options):
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=90, **options)
    return buffer.getvalue()
exif = Image.Exif()
exif[0x0112] = 6
tiny_jpegs = {
    "444.jpg": jpeg(rgb, subsampling=0), "422.jpg": jpeg(rgb, subsampling=1),
    "420.jpg": jpeg(rgb, subsampling=2), "progressive.jpg": jpeg(rgb, progressive=True),
    "gray.jpg": jpeg(rgb.convert("L")), "cmyk.jpg": jpeg(rgb.convert("CMYK")),
    "exif6.jpg": jpeg(rgb, exif=exif.tobytes()),
}
for name, data in tiny_jpegs.items():
    write("image_decode_fuzzer", "tiny-" + name, data)
    write("jpeg_region_fuzzer", "tiny-" + name, data)
for mode in ("L", "LA", "RGB", "RGBA", "P", "I;16", "1"):
    buffer = io.BytesIO()
    rgb.convert(mode if mode != "I;16" else "I").convert(mode).save(buffer, "PNG")
    write("image_decode_fuzzer", "tiny-%s.png" % mode.replace(";", ""), buffer.getvalue())
for fmt, ext in (("BMP", "bmp"), ("PPM", "ppm"), ("TIFF", "tiff")):
    buffer = io.BytesIO()
    rgb.save(buffer, fmt)
    write("image_decode_fuzzer", "tiny." + ext, buffer.getvalue())
palette = rgb.quantize(32)
for name, options in (("plain", {"interlace": False}), ("interlaced", {"interlace": True}),
                      ("transparent", {"transparency": 3}),
                      ("animated", {"save_all": True, "append_images": [palette.rotate(90)]})):
    buffer = io.BytesIO()
    palette.save(buffer, "GIF", **options)
    write("image_decode_fuzzer", "tiny-%s.gif" % name, buffer.getvalue())
PY
