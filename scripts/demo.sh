#!/usr/bin/env bash
# `make demo`: runs imgpipe's main job end to end on bundled and generated data.
#   1. converts the real photos in ../shared/testdata/images/photos-by-class
#      (train/validation split, decode-verified) and inspects the shards;
#   2. generates a synthetic labelled set with `imgpipe synth`, converts it into
#      sharded TFRecords, and inspects them;
#   3. runs the input-pipeline ladder on that set and prints its table;
#   4. trains small-resnet on it (libtorch, 2 local processes over Gloo, bf16 autocast),
#      with TensorBoard logs and checkpoints, and prints the validation accuracy.
set -euo pipefail
build=${1:-build}
imgpipe="$build/src/cli/imgpipe"
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/demo-out"
photos="$root/../shared/testdata/images/photos-by-class"
rm -rf "$out"
mkdir -p "$out"

echo "== 1. Real photos: $photos"
if [ -d "$photos" ]; then
  "$imgpipe" convert --input "$photos" --output "$out/photos-shards" \
    --split train=0.8,validation=0.2 --min-shards 2 --verify decode
  "$imgpipe" inspect --max-classes 5 "$out"/photos-shards/*.tfrecord
else
  echo "(not found; skipped)"
fi

echo
echo "== 2. Generated set: 10 classes x 200 images, 256x256"
"$imgpipe" synth --out "$out/synth" --classes 10 --per-class 200 --size 256x256
"$imgpipe" convert --input "$out/synth" --output "$out/synth-shards" \
  --split train=0.9,validation=0.1 --shard-size 8MB
"$imgpipe" inspect --max-classes 10 "$out"/synth-shards/train-00000-*.tfrecord
echo
echo "== 3. The input pipeline, step by step (imgpipe bench --ladder, train preset)"
"$imgpipe" bench --data "$out/synth-shards" --images "$out/synth" --ladder --seconds 5 --warmup 1
echo
echo "== 4. Training: small-resnet, 64x64 crops, 5 epochs, 2 processes (Gloo), bf16"
"$imgpipe" train --data "$out/synth-shards" --model small-resnet --image-size 64 \
  --batch-size 64 --epochs 5 --lr 0.2 --warmup-epochs 1 --precision bf16 --nproc 2 \
  --logdir "$out/train-logs" --checkpoint-dir "$out/checkpoints"
echo "(chance is 10%; TensorBoard: tensorboard --logdir $out/train-logs)"
echo
echo "demo output in $out"
