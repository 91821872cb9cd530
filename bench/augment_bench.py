#!/usr/bin/python3
"""torchvision's recipe augmentation, imgpipe against the PyTorch DataLoader, side by side.

On one image set (an image folder for the DataLoader, TFRecord shards of it for imgpipe)
and the same cores, in alternating rounds (medians printed):
  - `imgpipe bench --preset train` plain, and with --auto-augment POLICY --random-erase P;
  - torchvision's ImageFolder + DataLoader (--threads workers) with RandomResizedCrop(224),
    RandomHorizontalFlip, ToTensor, Normalize, and with the reference train.py's
    RandomResizedCrop, RandomHorizontalFlip, POLICY, PILToTensor, ConvertImageDtype,
    Normalize, RandomErasing(P).
Then the CPU time per image: imgpipe's (its process CPU over the images it made) against
a plain Pillow + torchvision loop in this process on one thread (open, convert to RGB,
the transforms), which does not depend on the DataLoader's process overheads.

Prints the policy's cost to each (1 - rate with policy / plain rate; issue 23's target
for imgpipe: <= 10%) and imgpipe over the DataLoader with the policy (target >= 4x).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_torch import dataloader_rate, torchvision_transform  # noqa: E402


def imgpipe_result(imgpipe, shards, threads, batch_size, seconds, warmup, policy):
    """`imgpipe bench --json`'s result on the train preset, with `policy` (a dict of the
    flags --auto-augment and --random-erase) or without."""
    extra = []
    if policy:
        extra = ["--auto-augment", policy["auto_augment"], "--random-erase", str(policy["random_erase"])]
    out = subprocess.run(
        [imgpipe, "bench", "--data", shards, "--preset", "train", "--threads", str(threads),
         "--batch-size", str(batch_size), "--seconds", str(seconds), "--warmup", str(warmup), "--json",
         *extra],
        check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def pillow_loop_cpu_ms(images, transform, count):
    """CPU milliseconds per image of torchvision's `transform` on `count` images of the
    image folder `images` (ImageFolder's, cycled), loaded with Pillow, on one thread in
    this process."""
    import torch
    from PIL import Image

    torch.set_num_threads(1)
    from torchvision.datasets import ImageFolder

    paths = [path for path, _ in ImageFolder(images).samples]  # the DataLoader's images
    start = time.process_time()
    done = 0
    while done < count:
        for path in paths:
            with open(path, "rb") as f:
                image = Image.open(f).convert("RGB")
            transform(image)
            done += 1
            if done == count:
                break
    return 1000 * (time.process_time() - start) / count


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images", required=True, help="image folder, one sub-folder per class")
    parser.add_argument("--shards", required=True, help="TFRecord shards of the same images")
    parser.add_argument("--name", required=True, help="what the images are (printed with every figure)")
    parser.add_argument("--imgpipe", default="build/src/cli/imgpipe")
    parser.add_argument("--threads", type=int, default=2, help="imgpipe threads = DataLoader workers")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=8)
    parser.add_argument("--warmup", type=float, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--auto-augment", default="ta_wide", choices=["ta_wide", "ra", "imagenet"])
    parser.add_argument("--random-erase", type=float, default=0.1)
    parser.add_argument("--loop-images", type=int, default=300,
                        help="images of the single-thread Pillow + torchvision loop")
    args = parser.parse_args()
    policy = {"auto_augment": args.auto_augment, "random_erase": args.random_erase}
    policy_text = f"{args.auto_augment} + random erasing {args.random_erase:g}"

    plain_tf = torchvision_transform(True)
    policy_tf = torchvision_transform(True, args.auto_augment, args.random_erase)
    imgpipe_cpu_ms = {"plain": [], "policy": []}

    def imgpipe_rate(kind):
        r = imgpipe_result(args.imgpipe, args.shards, args.threads, args.batch_size, args.seconds,
                           args.warmup, policy if kind == "policy" else None)
        imgpipe_cpu_ms[kind].append(1000 * r["cpu_utilization"] * r["threads"] / r["images_per_s"])
        return r["images_per_s"]

    runs = {
        "imgpipe, train preset": lambda: imgpipe_rate("plain"),
        f"imgpipe, + {policy_text}": lambda: imgpipe_rate("policy"),
        "DataLoader, train transforms": lambda: dataloader_rate(
            args.images, plain_tf, True, args.threads, args.batch_size, args.seconds, args.warmup),
        f"DataLoader, + {policy_text}": lambda: dataloader_rate(
            args.images, policy_tf, True, args.threads, args.batch_size, args.seconds, args.warmup),
    }
    rates = {name: [] for name in runs}
    print(f"== {args.name}: {policy_text}, imgpipe {args.threads} threads vs DataLoader {args.threads} "
          f"workers, batch {args.batch_size}, medians of {args.rounds} alternating rounds of "
          f"{args.seconds:g} s")
    for _ in range(args.rounds):
        for name, run in runs.items():
            rates[name].append(run())
    median = {name: statistics.median(values) for name, values in rates.items()}
    names = list(runs)
    for name in names:
        spread = ", ".join(f"{v:.0f}" for v in rates[name])
        print(f"{name:<58} {median[name]:>8.1f} images/s  ({spread})")
    ip_plain, ip_policy, dl_plain, dl_policy = (median[n] for n in names)
    print(f"policy cost to imgpipe: {100 * (1 - ip_policy / ip_plain):.1f}% of its rate (target <= 10%); "
          f"to the DataLoader: {100 * (1 - dl_policy / dl_plain):.1f}%")
    print(f"imgpipe / DataLoader: {ip_plain / dl_plain:.2f}x plain, {ip_policy / dl_policy:.2f}x with the "
          f"policy (target >= 4x)")

    loop_plain = pillow_loop_cpu_ms(args.images, plain_tf, args.loop_images)
    loop_policy = pillow_loop_cpu_ms(args.images, policy_tf, args.loop_images)
    cpu_plain = statistics.median(imgpipe_cpu_ms["plain"])
    cpu_policy = statistics.median(imgpipe_cpu_ms["policy"])
    print(f"CPU ms per image: imgpipe {cpu_plain:.2f} plain, {cpu_policy:.2f} with the policy "
          f"(+{cpu_policy - cpu_plain:.2f}); Pillow + torchvision loop (1 thread) {loop_plain:.2f} plain, "
          f"{loop_policy:.2f} with the policy (+{loop_policy - loop_plain:.2f}); loop / imgpipe "
          f"{loop_plain / cpu_plain:.2f}x plain, {loop_policy / cpu_policy:.2f}x with the policy")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
