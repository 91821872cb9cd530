#!/usr/bin/python3
"""The PyTorch DataLoader and imgpipe on the same images with the same cores, side by side.

Runs torchvision's ImageFolder + DataLoader (RandomResizedCrop(224), RandomHorizontalFlip,
ToTensor, Normalize; workers = --threads) and `imgpipe bench` with the train preset on
the same image folder (and on TFRecord shards of it, with --shards, and on shards
converted with --jpeg-restart-interval 1, with --restart-shards), then the same for the
eval transforms (Resize(256), CenterCrop(224)). Prints images/s and the ratios.

Needs Debian's python3-torch and python3-torchvision (scripts/install-deps.sh --bench).
"""
import argparse
import json
import os
import subprocess
import sys
import time


def torchvision_transform(train, auto_augment=None, random_erase=0.0):
    """torchvision's ImageNet transforms: the train recipe (RandomResizedCrop(224),
    RandomHorizontalFlip, then, with a policy or erasing, the reference train.py's order:
    the policy on the PIL crop, PILToTensor, ConvertImageDtype, Normalize, RandomErasing)
    or the eval one (Resize(256), CenterCrop(224))."""
    import torch
    import torchvision.transforms as T

    normalize = T.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    if not train:
        return T.Compose([T.Resize(256), T.CenterCrop(224), T.ToTensor(), normalize])
    steps = [T.RandomResizedCrop(224), T.RandomHorizontalFlip()]
    if auto_augment is None and random_erase == 0:
        return T.Compose(steps + [T.ToTensor(), normalize])
    policies = {"ta_wide": T.TrivialAugmentWide, "ra": T.RandAugment,
                "imagenet": lambda: T.AutoAugment(T.AutoAugmentPolicy.IMAGENET)}
    if auto_augment is not None:
        steps.append(policies[auto_augment]())
    steps += [T.PILToTensor(), T.ConvertImageDtype(torch.float), normalize]
    if random_erase > 0:
        steps.append(T.RandomErasing(p=random_erase))
    return T.Compose(steps)


def dataloader_rate(images, transform, shuffle, threads, batch_size, seconds, warmup):
    """images/s of torchvision's ImageFolder(images, transform) through a DataLoader with
    `threads` workers (each with one torch thread)."""
    import torch
    import torchvision.datasets as datasets

    dataset = datasets.ImageFolder(images, transform)
    torch.set_num_threads(1)
    loader = torch.utils.data.DataLoader(
        dataset, batch_size=batch_size, shuffle=shuffle, num_workers=threads,
        persistent_workers=threads > 0, drop_last=False,
        worker_init_fn=lambda _: torch.set_num_threads(1))

    def batch_sizes():
        while True:
            for batch, _ in loader:
                yield batch.shape[0]

    return images_per_s(batch_sizes(), seconds, warmup)


def images_per_s(batch_sizes, seconds, warmup):
    """Images per second over `seconds`, counted from an endless iterable of batch sizes
    once `warmup` seconds have passed."""
    count = 0
    start = time.monotonic()
    measuring = False
    measured_start = start
    for size in batch_sizes:
        now = time.monotonic()
        if not measuring and now - start >= warmup:
            measuring, measured_start, count = True, now, 0
            continue
        count += size
        if measuring and now - measured_start >= seconds:
            return count / (now - measured_start)
    raise ValueError("images_per_s: the batches ended")


def imgpipe_rate(imgpipe, data, preset, threads, batch_size, seconds, warmup, extra=()):
    out = subprocess.run(
        [imgpipe, "bench", "--data", data, "--preset", preset, "--threads", str(threads),
         "--batch-size", str(batch_size), "--seconds", str(seconds), "--warmup", str(warmup), "--json",
         *extra],
        check=True, capture_output=True, text=True).stdout
    return json.loads(out)["images_per_s"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images", required=True, help="image folder, one sub-folder per class")
    parser.add_argument("--shards", help="TFRecord shards of the same images (imgpipe convert output)")
    parser.add_argument("--restart-shards",
                        help="the same images converted with --jpeg-restart-interval 1")
    parser.add_argument("--imgpipe", default="build/src/cli/imgpipe")
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--warmup", type=float, default=3)
    args = parser.parse_args()

    print(f"PyTorch DataLoader vs imgpipe, {args.threads} thread(s)/worker(s), batch {args.batch_size}, "
          f"{args.seconds:.0f} s measured after {args.warmup:.0f} s warm-up")
    print(f"{'transforms':<8} {'pipeline':<34} {'images/s':>10} {'ratio':>8}")
    for preset in ("train", "eval"):
        train = preset == "train"
        torch_rate = dataloader_rate(args.images, torchvision_transform(train), train, args.threads,
                                     args.batch_size, args.seconds, args.warmup)
        print(f"{preset:<8} {'torch DataLoader (ImageFolder)':<34} {torch_rate:>10.1f} {1.0:>7.2f}x")
        sources = [("imgpipe, image folder", args.images)]
        if args.shards:
            sources.append(("imgpipe, TFRecord shards", args.shards))
        if args.restart_shards:
            sources.append(("imgpipe, shards, restart markers", args.restart_shards))
        for label, data in sources:
            rate = imgpipe_rate(args.imgpipe, data, preset, args.threads, args.batch_size,
                                args.seconds, args.warmup)
            print(f"{preset:<8} {label:<34} {rate:>10.1f} {rate / torch_rate:>7.2f}x")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
