#!/usr/bin/python3
"""Does training dip at epoch boundaries? `imgpipe train` on small epochs of real data,
every step logged (--log-every 1): the per-step input wait (the share of the step spent
waiting for the batch) of each epoch's first steps against the epoch's other steps, and
the same for --synthetic (batches made once in memory: no input pipeline at all, so
its figures are the noise floor). With the Loader starting each epoch's pass before the
last one ends, the first steps should wait no longer than the rest.

  bench/train_epoch_boundary.py --imgpipe build/src/cli/imgpipe --data SHARDS [--epochs 6]
"""
import argparse
import json
import statistics
import subprocess


def step_events(imgpipe, data, args):
    cmd = [imgpipe, "train", "--model", args.model, "--epochs", str(args.epochs), "--batch-size",
           str(args.batch_size), "--image-size", str(args.image_size), "--log-every", "1", "--json"]
    cmd += ["--synthetic"] if data is None else ["--data", data]  # synthetic: 20 steps an epoch
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return [e for e in events if e.get("event") == "step"]


def summary(steps, boundary):
    first = [s["input_wait"] for s in steps if s["step_in_epoch"] <= boundary and s["step"] > boundary]
    rest = [s["input_wait"] for s in steps if s["step_in_epoch"] > boundary]
    return statistics.median(first) if first else float("nan"), statistics.median(rest), len(first), len(rest)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--imgpipe", default="build/src/cli/imgpipe")
    parser.add_argument("--data", required=True, help="TFRecord shards (imgpipe convert's output)")
    parser.add_argument("--name", default="", help="what the images are, for the printout")
    parser.add_argument("--model", default="simple-cnn")
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--image-size", type=int, default=64)
    parser.add_argument("--boundary-steps", type=int, default=2,
                        help="steps at an epoch's start counted as the boundary")
    args = parser.parse_args()
    real = step_events(args.imgpipe, args.data, args)
    synthetic = step_events(args.imgpipe, None, args)
    print(f"imgpipe train {args.model}, batch {args.batch_size}, {args.image_size} px, {args.epochs} epochs of "
          f"{real[0]['steps_per_epoch']} steps on {args.name or args.data}; per-step input wait, medians "
          f"(the first epoch's first steps left out: the pipeline starts there)")
    print(f"{'run':<28} {'first ' + str(args.boundary_steps) + ' steps':>16} {'other steps':>12} {'steps':>10}")
    for name, steps in [("real data", real), ("--synthetic", synthetic)]:
        first, rest, n_first, n_rest = summary(steps, args.boundary_steps)
        print(f"{name:<28} {first:>16.3f} {rest:>12.3f} {n_first:>4} + {n_rest:<4}")


if __name__ == "__main__":
    main()
