#!/usr/bin/python3
"""imgpipe.torch.Loader against `imgpipe bench` and the PyTorch DataLoader, side by side.

On the same images and the same cores (--threads pipeline threads / DataLoader
workers), train transforms (RandomResizedCrop(224), RandomHorizontalFlip, ToTensor,
Normalize; imgpipe's train preset, float32 output), in alternating rounds: each round
measures the three in turn (the order rotates), and the medians of the rounds are
printed with the ratios. The DataLoader baseline and the `imgpipe bench` call are
bench/compare_torch.py's. The Python loader reads --shards; the DataLoader reads
--images (ImageFolder), the same photos.

`imgpipe bench` reads through the same C++ Loader, epoch after epoch; `imgpipe bench
--endless` runs one pipeline whose records repeat without epochs, so with no epoch
boundary at all: the ceiling. Targets (issues 11 and 22): the Python loader within 5%
of both, on small epochs too (the threads never idle at a boundary), with `threads`
left at its default (--threads 0) and set to the core count. --compare-start-ahead adds
the Python loader with start_ahead=False (each epoch's pipeline started when asked for).
"""
import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_torch import dataloader_rate, images_per_s, imgpipe_rate, torchvision_transform  # noqa: E402


def python_loader_rate(shards, threads, batch_size, seconds, warmup, start_ahead=True):
    """Images/s that imgpipe.torch.Loader yields (CPU tensors, train preset) over
    `seconds`, after `warmup` seconds, epoch after epoch (set_epoch each epoch);
    threads 0: the loader's default."""
    import imgpipe.torch

    # deterministic=False as `imgpipe bench` runs (parallel stages may deliver out of order).
    with imgpipe.torch.Loader(shards, batch_size=batch_size, preset="train", threads=threads,
                              start_ahead=start_ahead, deterministic=False) as loader:
        def batch_sizes():
            for epoch in itertools.count():
                loader.set_epoch(epoch)
                for images, _ in loader:
                    yield images.shape[0]

        return images_per_s(batch_sizes(), seconds, warmup)


def python_loader_rate_in_process(shards, threads, batch_size, seconds, warmup, start_ahead=True):
    """python_loader_rate measured in a fresh Python process, as `imgpipe bench` runs in
    a fresh process each round: a training script's process does not carry the heap and
    threads that the DataLoader rounds leave in this one."""
    args = json.dumps([shards, threads, batch_size, seconds, warmup, start_ahead])
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--one-round", args],
                         check=True, capture_output=True, text=True).stdout
    return float(out)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--one-round":  # python_loader_rate_in_process's child
        print(python_loader_rate(*json.loads(sys.argv[2])))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images", required=True, help="image folder, one sub-folder per class")
    parser.add_argument("--shards", required=True, help="imgpipe convert's shards of the same images")
    parser.add_argument("--name", default="", help="what the images are, for the printout")
    parser.add_argument("--imgpipe", default="build/src/cli/imgpipe")
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)),
                        help="pipeline threads / DataLoader workers (0: the Python loader's default, "
                             "all CPUs for the others)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--warmup", type=float, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--compare-start-ahead", action="store_true",
                        help="also measure the Python loader with start_ahead=False (each epoch's "
                             "pipeline starts when the user asks for it)")
    args = parser.parse_args()

    cores = args.threads or len(os.sched_getaffinity(0))
    runs = {
        "imgpipe.torch.Loader (shards)": lambda: python_loader_rate_in_process(
            args.shards, args.threads, args.batch_size, args.seconds, args.warmup),
        "imgpipe bench (shards)": lambda: imgpipe_rate(
            args.imgpipe, args.shards, "train", cores, args.batch_size, args.seconds, args.warmup),
        "torch DataLoader (ImageFolder)": lambda: dataloader_rate(
            args.images, torchvision_transform(True), True, cores, args.batch_size, args.seconds, args.warmup),
        "imgpipe bench --endless (shards)": lambda: imgpipe_rate(
            args.imgpipe, args.shards, "train", cores, args.batch_size, args.seconds, args.warmup,
            ["--endless"]),
    }
    if args.compare_start_ahead:
        runs["imgpipe.torch.Loader start_ahead=False"] = lambda: python_loader_rate_in_process(
            args.shards, args.threads, args.batch_size, args.seconds, args.warmup, start_ahead=False)
    names = list(runs)
    rates = {name: [] for name in names}
    for r in range(args.rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            rates[name].append(runs[name]())
    median = {name: statistics.median(rates[name]) for name in names}
    loader, bench, torch_rate, endless = (median[n] for n in names[:4])
    print(f"{args.name}: {args.threads or 'default'} thread(s)/worker(s), batch {args.batch_size}, train transforms, "
          f"medians of {args.rounds} alternating rounds of {args.seconds:.0f} s")
    print(f"{'pipeline':<40} {'images/s':>10} {'rounds':>28}")
    for name in names:
        print(f"{name:<40} {median[name]:>10.1f} {' '.join(f'{x:.0f}' for x in rates[name]):>28}")
    print(f"python loader / imgpipe bench: {loader / bench:.3f}; / imgpipe bench --endless: "
          f"{loader / endless:.3f} (target >= 0.95 for both)")
    print(f"over the DataLoader: python loader {loader / torch_rate:.2f}x, imgpipe bench {bench / torch_rate:.2f}x")
    if args.compare_start_ahead:
        behind = median[names[4]]
        print(f"start_ahead=False / imgpipe bench: {behind / bench:.3f}; start_ahead=True over False: "
              f"{loader / behind:.3f}x")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
