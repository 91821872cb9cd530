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

echo "== TFRecord read with CRC checks"
"$build/bench/record_read_bench" 512 "$work"
echo
echo "== Convert against cp"
"$here/convert_bench.sh" "$imgpipe"
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
echo "== imgpipe.torch.Loader vs imgpipe bench vs PyTorch DataLoader (same images, same cores)"
"$imgpipe" convert --input "$here/../../shared/testdata/images/hymenoptera/train" --output "$work/hymenoptera" >/dev/null
PYTHONPATH="$build/python" /usr/bin/python3 "$here/python_loader.py" --imgpipe "$imgpipe" \
  --name "hymenoptera/train (244 ImageNet photos + 1 GIF)" \
  --images "$here/../../shared/testdata/images/hymenoptera/train" --shards "$work/hymenoptera"
PYTHONPATH="$build/python" /usr/bin/python3 "$here/python_loader.py" --imgpipe "$imgpipe" \
  --name "2,000 synthetic 500x375 JPEGs" --images "$work/images" --shards "$work/shards"
echo
echo "== Training: bf16 autocast vs fp32 on the CPU (the model alone, --synthetic)"
bash "$here/train_precision_bench.sh" "$build" resnet18 6
