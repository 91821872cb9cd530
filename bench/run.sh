#!/usr/bin/env bash
# `make bench`: every benchmark, each printing rates and ratios measured side by side
# in one run. Takes several minutes on 2 cores.
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
imgpipe="$build/src/cli/imgpipe"
seconds=${BENCH_SECONDS:-10}
work=$(mktemp -d "${TMPDIR:-/tmp}/imgpipe-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "== TFRecord read with CRC checks; per record on shards of the photos (before vs now)"
"$imgpipe" convert --input "$here/../../shared/testdata/images/photos-by-class" \
  --output "$work/photo-shards" --min-shards 4 >/dev/null
"$build/bench/record_read_bench" 512 "$work" "$work"/photo-shards/*.tfrecord
echo
echo "== Convert against cp"
"$here/convert_bench.sh" "$imgpipe"
echo
echo "== convert --max-resolution: the train pipeline on the photos stored smaller"
/usr/bin/python3 "$here/max_resolution_bench.py" "$imgpipe" --seconds 5
echo
echo "== Resize kernels: portable vs SSE4.1 vs AVX2 (one thread, real photos)"
"$build/bench/resize_bench" 7
echo
echo "== Image operations (Google Benchmark, one thread)"
"$build/bench/image_ops_bench" --benchmark_min_time=0.5
echo
# ImageNet-sized JPEGs (500x375, ~110 KB) as a folder and as shards.
"$imgpipe" synth --out "$work/images" --classes 20 --per-class 100 --size 500x375 --quality 90 >/dev/null
"$imgpipe" convert --input "$work/images" --output "$work/shards" --min-shards 8 >/dev/null
echo "== Pipeline ladder: 2,000 synthetic 500x375 JPEGs, train preset, ${seconds} s per row"
"$imgpipe" bench --data "$work/shards" --images "$work/images" --ladder --seconds "$seconds"
echo
echo "== Thread scaling (train preset, TFRecord shards)"
one=$("$imgpipe" bench --data "$work/shards" --threads 1 --seconds "$seconds" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["images_per_s"])')
two=$("$imgpipe" bench --data "$work/shards" --threads 2 --seconds "$seconds" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["images_per_s"])')
python3 -c "print(f'1 thread: {$one:.1f} images/s; 2 threads: {$two:.1f} images/s; scaling {$two/$one:.2f}x (target >= 1.8x)')"
echo
echo "== PyTorch DataLoader vs imgpipe (same images, same cores)"
/usr/bin/python3 "$here/compare_torch.py" --images "$work/images" --shards "$work/shards" \
  --imgpipe "$imgpipe" --seconds "$seconds"
echo
echo "== Training: bf16 autocast vs fp32 on the CPU (the model alone, --synthetic)"
bash "$here/train_precision_bench.sh" "$build" resnet18 6
