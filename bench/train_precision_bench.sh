#!/usr/bin/env bash
# bf16 autocast against fp32 on this machine's CPU: the model alone (imgpipe train
# --synthetic: batches made once in memory), ResNet-18 at 224x224, batch 32, channels-
# last. Prints images/s of each and their ratio; medians of 3 runs.
#   bench/train_precision_bench.sh [BUILD_DIR] [MODEL] [STEPS]
set -euo pipefail
build=${1:-build}
model=${2:-resnet18}
steps=${3:-6}
imgpipe="$build/src/cli/imgpipe"

rate() {  # precision -> images/s of one run (the first step, warm-up, is included)
  "$imgpipe" train --synthetic --model "$model" --precision "$1" --batch-size 32 \
    --max-steps "$steps" --log-every 0 --json | tail -1 |
    /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["images_per_s"])'
}
median() { printf '%s\n' "$@" | sort -g | sed -n "$(( ($# + 1) / 2 ))p"; }

fp32=(); bf16=()
for _ in 1 2 3; do  # alternate, so that noise hits both alike
  fp32+=("$(rate fp32)")
  bf16+=("$(rate bf16)")
done
f=$(median "${fp32[@]}"); b=$(median "${bf16[@]}")
printf '%s, batch 32, %s steps: fp32 %.1f images/s, bf16 %.1f images/s, bf16/fp32 %.2fx\n' \
  "$model" "$steps" "$f" "$b" "$(echo "$b / $f" | bc -l)"
