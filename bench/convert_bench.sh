#!/usr/bin/env bash
# Convert throughput against a plain `cp -r` of the same bytes, measured side by side
# in one run (warm page cache, same disk), median of N runs each.
# Usage: bench/convert_bench.sh IMGPIPE_BINARY [IMAGES_PER_CLASS] [RUNS]
set -euo pipefail
imgpipe=$1
per_class=${2:-150}
runs=${3:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/imgpipe-convert-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

# ImageNet-like files: 500x375 JPEGs, ~100 KB on average at quality 95.
"$imgpipe" synth --out "$work/in" --classes 20 --per-class "$per_class" --size 500x375 --quality 95 >/dev/null
images=$(find "$work/in" -type f | wc -l)
bytes=$(du -sb "$work/in" | cut -f1)
cat "$work"/in/*/* > /dev/null  # warm the page cache

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

cp_times=() convert_times=() decode_times=()
for ((i = 0; i < runs; i++)); do
  rm -rf "$work/cp" "$work/out" "$work/out-decode"
  t0=$(now); cp -r "$work/in" "$work/cp"; t1=$(now)
  cp_times+=("$(echo "$t1 - $t0" | bc -l)")
  rm -rf "$work/cp"
  t0=$(now); "$imgpipe" convert --input "$work/in" --output "$work/out" --shard-size 64MB --jpeg-restart-interval 0 >/dev/null; t1=$(now)
  convert_times+=("$(echo "$t1 - $t0" | bc -l)")
  t0=$(now); "$imgpipe" convert --input "$work/in" --output "$work/out-decode" --shard-size 64MB --verify decode --jpeg-restart-interval 0 >/dev/null; t1=$(now)
  decode_times+=("$(echo "$t1 - $t0" | bc -l)")
done
cp_s=$(printf '%s\n' "${cp_times[@]}" | median)
conv_s=$(printf '%s\n' "${convert_times[@]}" | median)
dec_s=$(printf '%s\n' "${decode_times[@]}" | median)

printf 'convert benchmark: %d images, %.1f MB, %d cores, median of %d runs\n' \
  "$images" "$(echo "$bytes / 1000000" | bc -l)" "$(nproc)" "$runs"
printf '  %-32s %8.3f s %9.1f MB/s %9.0f img/s\n' "cp -r" "$cp_s" \
  "$(echo "$bytes / $cp_s / 1000000" | bc -l)" "$(echo "$images / $cp_s" | bc -l)"
printf '  %-32s %8.3f s %9.1f MB/s %9.0f img/s   ratio to cp: %.2f\n' "convert --verify header" "$conv_s" \
  "$(echo "$bytes / $conv_s / 1000000" | bc -l)" "$(echo "$images / $conv_s" | bc -l)" \
  "$(echo "$cp_s / $conv_s" | bc -l)"
printf '  %-32s %8.3f s %9.1f MB/s %9.0f img/s   ratio to cp: %.2f\n' "convert --verify decode" "$dec_s" \
  "$(echo "$bytes / $dec_s / 1000000" | bc -l)" "$(echo "$images / $dec_s" | bc -l)" \
  "$(echo "$cp_s / $dec_s" | bc -l)"
echo "  target: convert --verify header at least 0.50 of cp's rate"
