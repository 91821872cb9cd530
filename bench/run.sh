#!/usr/bin/env bash
# `make bench`: every benchmark, each printing rates and ratios measured side by side
# in one run. Takes several minutes on 2 cores. "Shards" below are converted with
# --jpeg-restart-interval 0 (JPEGs as given, the figures' baseline) unless they are
# the "restart" shards, which have convert's default (a restart marker every MCU).
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
imgpipe="$build/src/cli/imgpipe"
seconds=${BENCH_SECONDS:-10}
work=$(mktemp -d "${TMPDIR:-/tmp}/imgpipe-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "== TFRecord read with CRC checks; per record on shards of the photos (before vs now)"
"$imgpipe" convert --input "$here/../../shared/testdata/images/photos-by-class" \
  --output "$work/photo-shards" --min-shards 4 --jpeg-restart-interval 0 >/dev/null
"$build/bench/record_read_bench" 512 "$work" "$work"/photo-shards/*.tfrecord
echo
echo "== Convert against cp"
"$here/convert_bench.sh" "$imgpipe"
echo
echo "== convert --max-resolution: the train pipeline on the photos stored smaller"
/usr/bin/python3 "$here/max_resolution_bench.py" "$imgpipe" --seconds 5
echo
echo "== Resize kernels: portable vs SSE4.1 vs AVX2 vs AVX-512 (one thread, real photos)"
"$build/bench/resize_bench" 7
echo
echo "== Decode settings: fast IDCT / plain upsampling vs exact (one thread, real photos)"
"$build/bench/decode_modes_bench" 5
echo
echo "== Image operations (Google Benchmark, one thread)"
"$build/bench/image_ops_bench" --benchmark_min_time=0.5
echo
testdata=$(cd "$here/../../shared/testdata/images" && pwd)

# images/s of `imgpipe bench --data $1 ARGS... --seconds $seconds` (train preset unless
# ARGS say otherwise).
bench_rate() {
  local data=$1
  shift
  "$imgpipe" bench --data "$data" "$@" --seconds "$seconds" --json |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["images_per_s"])'
}

# The pipeline on one image set: the ladder (with its ceiling check), 1 vs 2 threads,
# and the PyTorch DataLoader side by side. $1: what the images are (printed with every
# number), $2: an image folder (one sub-folder per class), $3: its TFRecord shards, $4
# (optional): its shards converted with --jpeg-restart-interval 1.
pipeline_benchmarks() {
  local what=$1 images=$2 shards=$3 restart_shards=${4:-}
  echo "== Pipeline ladder: $what, train preset, ${seconds} s per row"
  "$imgpipe" bench --data "$shards" --images "$images" --ladder --seconds "$seconds"
  echo
  echo "== Thread scaling: $what, train preset, TFRecord shards"
  local one two
  one=$(bench_rate "$shards" --threads 1)
  two=$(bench_rate "$shards" --threads 2)
  python3 -c "print(f'1 thread: {$one:.1f} images/s; 2 threads: {$two:.1f} images/s; scaling {$two/$one:.2f}x (target >= 1.8x)')"
  echo
  echo "== PyTorch DataLoader vs imgpipe: $what (same images, same cores)"
  /usr/bin/python3 "$here/compare_torch.py" --images "$images" --shards "$shards" \
    ${restart_shards:+--restart-shards "$restart_shards"} --imgpipe "$imgpipe" --seconds "$seconds"
  echo
}

# The train and eval presets on shards as given ($2) and on the same images converted
# with a restart marker every MCU ($3, convert --jpeg-restart-interval 1), whose crop
# decodes entropy-decode only the crop's MCUs; $1: what the images are.
restart_benchmarks() {
  local what=$1 plain=$2 marked=$3 preset a b
  echo "== convert --jpeg-restart-interval 1: $what, as given vs a restart marker every MCU, 1 thread"
  for preset in train eval; do
    a=$(bench_rate "$plain" --preset "$preset" --threads 1)
    b=$(bench_rate "$marked" --preset "$preset" --threads 1)
    python3 -c "print(f'$preset preset: as given {$a:.1f} images/s; restart markers {$b:.1f} images/s ({$b/$a:.2f}x)')"
  done
  a=$(cat "$plain"/*.tfrecord | wc -c)
  b=$(cat "$marked"/*.tfrecord | wc -c)
  python3 -c "print(f'shards: as given {$a/1e6:.1f} MB; restart markers {$b/1e6:.1f} MB ({100*($b/$a-1):+.1f}%)')"
  echo
}

# Real photographs first. hymenoptera: 397 ImageNet photos (and the crawl's GIF
# placeholder), train and val gathered into one folder per class (symbolic links).
for split in train val; do
  for class in ants bees; do
    mkdir -p "$work/hymenoptera/$class"
    for f in "$testdata/hymenoptera/$split/$class"/*; do
      ln -s "$f" "$work/hymenoptera/$class/${split}_$(basename "$f")"
    done
  done
done
"$imgpipe" convert --input "$work/hymenoptera" --output "$work/hymenoptera-shards" --min-shards 4 \
  --jpeg-restart-interval 0 >/dev/null
"$imgpipe" convert --input "$work/hymenoptera" --output "$work/hymenoptera-restart-shards" \
  --min-shards 4 --jpeg-restart-interval 1 >/dev/null
pipeline_benchmarks "397 real ImageNet photos (hymenoptera, mean 490x392)" \
  "$work/hymenoptera" "$work/hymenoptera-shards" "$work/hymenoptera-restart-shards"
restart_benchmarks "397 real ImageNet photos (hymenoptera)" \
  "$work/hymenoptera-shards" "$work/hymenoptera-restart-shards"
"$imgpipe" convert --input "$testdata/photos-by-class" --output "$work/by-class-shards" \
  --min-shards 4 --jpeg-restart-interval 0 >/dev/null
"$imgpipe" convert --input "$testdata/photos-by-class" --output "$work/by-class-restart-shards" \
  --min-shards 4 --jpeg-restart-interval 1 >/dev/null
pipeline_benchmarks "47 real photos of 640 to 1920 px (photos-by-class)" \
  "$testdata/photos-by-class" "$work/by-class-shards" "$work/by-class-restart-shards"
# torchvision's recipe augmentation (TrivialAugmentWide + random erasing) on both photo
# sets: its cost to imgpipe and to the DataLoader, side by side.
/usr/bin/python3 "$here/augment_bench.py" --imgpipe "$imgpipe" \
  --name "397 real ImageNet photos (hymenoptera)" \
  --images "$work/hymenoptera" --shards "$work/hymenoptera-shards"
/usr/bin/python3 "$here/augment_bench.py" --imgpipe "$imgpipe" \
  --name "47 real photos of 640 to 1920 px (photos-by-class)" \
  --images "$testdata/photos-by-class" --shards "$work/by-class-shards"
echo

# Then scale: 2,000 ImageNet-sized (500x375, ~110 KB) synthetic JPEGs, which decode
# almost twice as fast as photographs (they flatter imgpipe).
"$imgpipe" synth --out "$work/images" --classes 20 --per-class 100 --size 500x375 --quality 90 >/dev/null
"$imgpipe" convert --input "$work/images" --output "$work/shards" --min-shards 8 \
  --jpeg-restart-interval 0 >/dev/null
pipeline_benchmarks "2,000 synthetic 500x375 JPEGs" "$work/images" "$work/shards"
echo "== imgpipe.torch.Loader vs imgpipe bench vs PyTorch DataLoader (same images, same cores)"
# The Loader and the DataLoader run epoch by epoch (6 batches of 64 on the 397 photos,
# each epoch starting its pipeline afresh); `imgpipe bench` repeats without a break. The
# same photos ten times over (3,970 per epoch, as links) show the rate of a real data
# set's long epochs.
PYTHONPATH="$build/python" /usr/bin/python3 "$here/python_loader.py" --imgpipe "$imgpipe" \
  --name "397 real ImageNet photos (hymenoptera)" \
  --images "$work/hymenoptera" --shards "$work/hymenoptera-shards"
# The hymenoptera photos repeated as links (copy K of photo P: K_P) in $1, at most $2
# of them, then converted into $1-shards of at least $3 shards.
repeated_photos() {
  local out=$1 limit=$2 shards=$3 n=0 copy class f
  for copy in 0 1 2 3 4 5 6 7 8 9; do
    for class in ants bees; do
      mkdir -p "$out/$class"
      for f in "$work/hymenoptera/$class"/*; do
        [ $n -lt "$limit" ] || break 3
        ln -s "$(readlink "$f")" "$out/$class/${copy}_$(basename "$f")"
        n=$((n + 1))
      done
    done
  done
  "$imgpipe" convert --input "$out" --output "$out-shards" --min-shards "$shards" \
    --jpeg-restart-interval 0 >/dev/null
}
# ~1,000 photos in 8 shards, 15 batches of 64 an epoch (issue 22's second set), with the
# threads set to the core count and left at the loader's default.
repeated_photos "$work/hymenoptera-1000" 1000 8
for threads in "$(nproc)" 0; do
  PYTHONPATH="$build/python" /usr/bin/python3 "$here/python_loader.py" --imgpipe "$imgpipe" \
    --threads "$threads" --name "1,000 real photos (hymenoptera repeated), 8 shards" \
    --images "$work/hymenoptera-1000" --shards "$work/hymenoptera-1000-shards"
done
repeated_photos "$work/hymenoptera-x10" 3970 8
PYTHONPATH="$build/python" /usr/bin/python3 "$here/python_loader.py" --imgpipe "$imgpipe" \
  --name "the 397 hymenoptera photos x 10 (3,970 per epoch)" \
  --images "$work/hymenoptera-x10" --shards "$work/hymenoptera-x10-shards"
PYTHONPATH="$build/python" /usr/bin/python3 "$here/python_loader.py" --imgpipe "$imgpipe" \
  --name "2,000 synthetic 500x375 JPEGs" --images "$work/images" --shards "$work/shards"
echo
echo "== Network storage: the train preset over nginx (http://) and s3rver (s3://) beside local disk, and through a proxy adding 20 and 100 ms a request"
python3 "$here/network_bench.py" "$build" "$testdata/hymenoptera" --seconds "$seconds" --rounds 3
echo
echo "== Training: bf16 autocast vs fp32 on the CPU (the model alone, --synthetic)"
bash "$here/train_precision_bench.sh" "$build" resnet18 6
echo
echo "== Convert at scale: a CSV manifest of ${BENCH_SCALE_ROWS:-10000000} rows (64-px thumbnails of the real photos, stored once), then inspect and a train Loader start over the result"
# BENCH_SCALE_ROWS: the manifest's rows (default 10,000,000: ~25 GB of shards written to
# ${TMPDIR:-/tmp}, about 20 minutes on 2 cores; the script stops first when the disk has
# less than 1.5x its estimate free). Set it lower (e.g. 100000) for a quick run.
/usr/bin/python3 "$here/convert_scale.py" --imgpipe "$imgpipe" --rows "${BENCH_SCALE_ROWS:-10000000}"
