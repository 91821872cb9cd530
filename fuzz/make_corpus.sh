#!/usr/bin/env bash
# Writes seed corpora for the fuzz targets into OUT/<fuzzer>/ (a scratch folder, not the
# repository): TFRecord files and images from ../shared/testdata, the records inside
# those TFRecord files, a few tiny images made with PIL (fast to decode, every layout),
# and small hand-written index and manifest files, S3 responses and AWS profile files.
#   fuzz/make_corpus.sh OUT
set -euo pipefail
out="${1:?usage: fuzz/make_corpus.sh OUT}"
root=$(cd "$(dirname "$0")/.." && pwd)
testdata="${IMGPIPE_TESTDATA_DIR:-$root/../shared/testdata}"
[ -d "$testdata" ] || { echo "make_corpus: no test data at $testdata" >&2; exit 1; }
mkdir -p "$out"/{tfrecord_reader,example,index,manifest,image_decode,jpeg_region}_fuzzer \
         "$out"/{s3_response,aws_config}_fuzzer

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

# S3 answers as AWS writes them: ListObjectsV2 pages (entities in keys, folders as
# CommonPrefixes, a truncated page with its token), an empty one and an error body. After
# a NUL byte, a shard pattern for ExpandBraces.
def list_page(contents, prefixes=(), token=None):
    xml = ('<?xml version="1.0" encoding="UTF-8"?>\n'
           '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
           '<Name>imgpipe-data</Name><Prefix>train/</Prefix><KeyCount>%d</KeyCount>'
           '<MaxKeys>1000</MaxKeys><Delimiter>/</Delimiter><IsTruncated>%s</IsTruncated>'
           % (len(contents) + len(prefixes), "true" if token else "false"))
    if token:
        xml += '<NextContinuationToken>%s</NextContinuationToken>' % token
    for key, size in contents:
        xml += ('<Contents><Key>%s</Key><LastModified>2024-03-01T12:00:00.000Z</LastModified>'
                '<ETag>&quot;9b2cf535f27731c974343645a3985328&quot;</ETag><Size>%d</Size>'
                '<StorageClass>STANDARD</StorageClass></Contents>' % (key, size))
    for prefix in prefixes:
        xml += '<CommonPrefixes><Prefix>%s</Prefix></CommonPrefixes>' % prefix
    return (xml + '</ListBucketResult>').encode()
write("s3_response_fuzzer", "list-shards", list_page(
    [("train/train-%05d-of-00004.tfrecord" % i, 1048576 + i) for i in range(4)] +
    [("train/labels.txt", 0)]))
write("s3_response_fuzzer", "list-entities", list_page(
    [("train/caf&#233; &amp; cr&#xE8;me.jpg", 4711), ("train/&quot;quoted&quot; &lt;x&gt;.jpg", 18),
     ("train/it&apos;s.jpg", 18446744073709551615)],
    prefixes=["train/cats/", "train/dogs &amp; wolves/"]))
write("s3_response_fuzzer", "list-truncated", list_page(
    [("train/a.tfrecord", 10), ("train/a.tfrecord.idx", 7)],
    token="1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM="))
write("s3_response_fuzzer", "list-empty",
      b'<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="http://s3.amazonaws.com/'
      b'doc/2006-03-01/"><Name>b</Name><Prefix>none/</Prefix><KeyCount>0</KeyCount>'
      b'<MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated></ListBucketResult>')
write("s3_response_fuzzer", "error-no-such-bucket",
      b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchBucket</Code>'
      b'<Message>The specified bucket does not exist</Message><BucketName>imgpipe-data'
      b'</BucketName><RequestId>4442587FB7D0A2F9</RequestId><HostId>sPqLyv1Ba8NKvsGyHmlh'
      b'</HostId></Error>')
write("s3_response_fuzzer", "error-access-denied",
      b'<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>')
write("s3_response_fuzzer", "pattern-range",
      list_page([("train/x", 1)]) + b'\0s3://b/train-{00000..00127}-of-00128.tfrecord')
write("s3_response_fuzzer", "pattern-lists", b'\0gs://b/{train,validation}/part-{0..9}{,.idx}')
write("s3_response_fuzzer", "content-range", b'bytes 0-8388607/11434598')
write("s3_response_fuzzer", "content-range-unknown-total", b' bytes 5-5/* ')

# AWS credentials and config files: sections, [profile NAME], a nested "s3 =" block with
# indented keys, comments with '#' and ';', CRLF line ends.
write("aws_config_fuzzer", "credentials",
      b"# written by aws configure\n[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\n"
      b"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n\n"
      b"[minio]\naws_access_key_id=minioadmin\naws_secret_access_key=minioadmin\n"
      b"aws_session_token = FwoGZXIvYXdzEJr//////////wEaDM=\n")
write("aws_config_fuzzer", "config",
      b"[default]\nregion = eu-west-1\noutput = json\n\n; a MinIO server\n"
      b"[profile minio]\nregion=us-east-1\nendpoint_url = http://127.0.0.1:9000\n"
      b"s3 =\n  addressing_style = path\n  max_concurrent_requests = 20\n"
      b"\tsignature_version = s3v4\ncli_pager =\n\n"
      b"[profile  spaced name ]\n  # an indented comment\nregion = ap-south-1 # not a comment\n")
write("aws_config_fuzzer", "config-crlf",
      b"[profile gcs]\r\nendpoint_url = https://storage.googleapis.com\r\n"
      b"s3 =\r\n    addressing_style = virtual\r\n\r\n[default]\r\nregion = us-east-2")
write("aws_config_fuzzer", "bad-key-before-section", b"region = us-east-1\n[default]\n")

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
# Extraneous bytes before DQT and before EOI: libjpeg warnings imgpipe accepts.
padded = tiny_jpegs["420.jpg"]
padded = padded.replace(b"\xff\xdb", b"\0\0\xff\xdb", 1)
tiny_jpegs["padded.jpg"] = padded[:-2] + b"\x5a" * 40 + b"\xff\xd9"
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
for mode in ("RGB", "RGBA", "I;16"):  # TIFF orientation 6 (width and height swap)
    buffer = io.BytesIO()
    rgb.convert(mode if mode != "I;16" else "I").convert(mode).save(
        buffer, "TIFF", tiffinfo={274: 6})
    write("image_decode_fuzzer", "tiny-exif6-%s.tiff" % mode.replace(";", ""), buffer.getvalue())
palette = rgb.quantize(32)
for name, options in (("plain", {"interlace": False}), ("interlaced", {"interlace": True}),
                      ("transparent", {"transparency": 3}),
                      ("animated", {"save_all": True, "append_images": [palette.rotate(90)]})):
    buffer = io.BytesIO()
    palette.save(buffer, "GIF", **options)
    write("image_decode_fuzzer", "tiny-%s.gif" % name, buffer.getvalue())

# The formats of format_decoders.h: TGA (raw, RLE, colour-mapped), ICO (PNG and BMP
# entries), PCX, SGI, PPM/PGM/PBM and XBM from PIL; PSD, Sun raster (raw and
# byte-encoded), SGI RLE, DCX and PAM written by hand (PIL does not write them).
def pil(image, fmt, **options):
    buffer = io.BytesIO()
    image.save(buffer, fmt, **options)
    return buffer.getvalue()
rgba = rgb.convert("RGBA")
tiny = {
    "tiny.tga": pil(rgb, "TGA"), "tiny-rle.tga": pil(rgba, "TGA", compression="tga_rle"),
    "tiny-P.tga": pil(palette, "TGA"), "tiny-L.tga": pil(rgb.convert("L"), "TGA"),
    "tiny-png.ico": pil(rgba, "ICO", sizes=[(8, 8), (19, 13)]),
    "tiny-bmp.ico": pil(rgba, "ICO", sizes=[(8, 8), (16, 16)], bitmap_format="bmp"),
    "tiny.pcx": pil(rgb, "PCX"), "tiny-P.pcx": pil(palette, "PCX"),
    "tiny-1.pcx": pil(rgb.convert("1"), "PCX"),
    "tiny.sgi": pil(rgb, "SGI"), "tiny-L.sgi": pil(rgb.convert("L"), "SGI"),
    "tiny.pgm": pil(rgb.convert("L"), "PPM"), "tiny.pbm": pil(rgb.convert("1"), "PPM"),
    "tiny.xbm": pil(rgb.convert("1"), "XBM"),
}
w, h = rgb.size
planes = [bytes(rgb.getdata(band=c)) for c in range(3)]
tiny["tiny.psd"] = (b"8BPS" + struct.pack(">H6xHIIHH", 1, 3, h, w, 8, 3) + bytes(12) +
                    struct.pack(">H", 0) + b"".join(planes))
rows = [bytes([w - 1]) + planes[c][y * w:(y + 1) * w] for c in range(3) for y in range(h)]
tiny["tiny-packbits.psd"] = (tiny["tiny.psd"][:38] + struct.pack(">H", 1) +
                             b"".join(struct.pack(">H", len(r)) for r in rows) + b"".join(rows))
bgr_rows = [b"".join(bytes(rgb.getpixel((x, y))[::-1]) for x in range(w)) for y in range(h)]
sun_data = b"".join(r.ljust((w * 3 + 1) // 2 * 2, b"\0") for r in bgr_rows)
tiny["tiny.ras"] = struct.pack(">8I", 0x59A66A95, w, h, 24, len(sun_data), 1, 0, 0) + sun_data
sun_rle = b"\x80\x05\x10" + b"\x80\x00" + sun_data[7:]
tiny["tiny-rle.ras"] = struct.pack(">8I", 0x59A66A95, w, h, 24, len(sun_rle), 2, 0, 0) + sun_rle
gray = bytes(rgb.convert("L").getdata())
sgi_rows = [bytes([0x80 | w]) + gray[y * w:(y + 1) * w] + b"\0" for y in range(h)]
starts, at = [], 512 + 8 * h
for r in sgi_rows:
    starts.append(at)
    at += len(r)
tiny["tiny-rle.sgi"] = (struct.pack(">HBBHHHH", 474, 1, 1, 2, w, h, 1).ljust(512, b"\0") +
                        struct.pack(">%dI" % h, *starts) +
                        struct.pack(">%dI" % h, *[len(r) for r in sgi_rows]) + b"".join(sgi_rows))
tiny["tiny.dcx"] = struct.pack("<II", 0x3ADE68B1, 12) + b"\0\0\0\0" + tiny["tiny.pcx"]
tiny["tiny.pam"] = (b"P7\nWIDTH %d\nHEIGHT %d\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n"
                    % (w, h)) + rgba.tobytes()
# Issue 44's paths: RLE8/RLE4 BMPs (runs past a row, an absolute run, a delta, no end
# code), a DIB, XPM (1 and 2 characters per pixel), an animated WebP, an animated GIF
# whose second frame's descriptor is garbage, a cursor whose directory size is 0.
def rle_bmp(w, h, codes, rle4=False):
    palette = b"".join(bytes([i, 255 - i, (i * 7) % 256, 0]) for i in range(16 if rle4 else 256))
    offset = 54 + len(palette)
    return (b"BM" + struct.pack("<IHHI", offset + len(codes), 0, 0, offset) +
            struct.pack("<IiiHHIIiiII", 40, w, h, 1, 4 if rle4 else 8, 2 if rle4 else 1,
                        len(codes), 0, 0, 0, 0) + palette + codes)
tiny["tiny-rle8.bmp"] = rle_bmp(5, 3, bytes([9, 1, 0, 0, 0, 3, 7, 8, 9, 0, 2, 4, 0, 2, 1, 1,
                                             2, 5]))
tiny["tiny-rle4.bmp"] = rle_bmp(7, 2, bytes([7, 0x12, 0, 0, 0, 5, 0x34, 0x56, 0x70, 0, 0, 1]),
                                True)
tiny["tiny.dib"] = pil(palette, "DIB")
xpm_rows = ['"%s"' % "".join("ab. "[(x + y) % 4] for x in range(w)) for y in range(h)]
tiny["tiny.xpm"] = ('/* XPM */\nstatic char *t[] = {\n"%d %d 4 1",\n"a c #FF0000",\n'
                    '"b c #00ff80",\n". c None",\n"  c #123456",\n' % (w, h) +
                    ",\n".join(xpm_rows) + "};\n").encode()
tiny["tiny-2.xpm"] = ('/* XPM */\n"2 2 2 2",\n"aa c #FF0000",\n"b. c #0000FF",\n'
                      '/* pixels */\n"aab.",\n"b.aa"};\n').encode()
tiny["tiny-animated.webp"] = pil(rgb, "WEBP", save_all=True, append_images=[rgb.rotate(90)])
gif = pil(palette, "GIF", save_all=True, append_images=[palette.rotate(90)])
second = gif.rindex(b"\x2c\0\0\0\0")  # frame 2's descriptor (both frames at 0, 0)
tiny["tiny-damaged-frame2.gif"] = gif[:second + 1] + b"\xff" * 8 + gif[second + 9:]
cur = bytearray(b"\0\0\2\0" + tiny["tiny-bmp.ico"][4:])
cur[14:18] = b"\0\0\0\0"
tiny["tiny-size0.cur"] = bytes(cur)
for name, data in tiny.items():
    write("image_decode_fuzzer", name, data)
PY

# 4. TIFF in every layout libtiff reads for imgpipe (tiff_decoder.h): the files
#    tiff_decoder_test.cc compares with Pillow (src/image/pil_tiff_layouts.py: bit depths
#    1-32, both photometrics and fill orders, float, palette, RGB/RGBA/CMYK at 8 and 16
#    bits, planes, JPEG/LZW/Deflate/PackBits, tiles, BigTIFF, YCbCr, orientations).
tiff_dir=$(mktemp -d)
(cd "$root/src/image" && /usr/bin/python3 pil_tiff_layouts.py "$tiff_dir" > /dev/null)
for f in "$tiff_dir"/*.tif; do cp "$f" "$out/image_decode_fuzzer/tiff-$(basename "$f")"; done
rm -rf "$tiff_dir"
