"""What `imgpipe convert --max-resolution N` does to the train pipeline's rate.

Usage: python3 max_resolution_bench.py IMGPIPE [--images DIR] [--limits 512,320,256]
       [--sizes 224,160,128] [--rounds 3] [--seconds 5] [--threads 2]

Converts the photos (default: ../shared/testdata/images/photos-by-class, 47 photos 640
to 1920 px wide) once as they are and once per --max-resolution N, then runs
`imgpipe bench --preset train --threads T --image-size S` on every set of shards, in
alternating rounds (every set once per round, so a machine whose speed drifts affects
all alike), and prints the median images/s per set and size with its ratio to the
shards stored as they are, and each set's bytes.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def run_json(args):
    done = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({done.returncode}):\n{done.stderr}")
    return json.loads(done.stdout)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser()
    parser.add_argument("imgpipe")
    parser.add_argument("--images", default=os.path.join(
        here, "..", "..", "shared", "testdata", "images", "photos-by-class"))
    parser.add_argument("--limits", default="512,320,256")
    parser.add_argument("--sizes", default="224,160,128")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    limits = [int(n) for n in args.limits.split(",")]
    sizes = [int(s) for s in args.sizes.split(",")]

    with tempfile.TemporaryDirectory(prefix="imgpipe-maxres-") as work:
        # 1. The shards: as they are (0), and per limit (JPEGs without restart markers,
        #    as the figures in docs/benchmarks.md were measured).
        sets = {}
        for limit in [0] + limits:
            out = os.path.join(work, f"max{limit}")
            command = [args.imgpipe, "convert", "--input", args.images, "--output", out,
                       "--min-shards", "4", "--jpeg-restart-interval", "0", "--json"]
            if limit:
                command += ["--max-resolution", str(limit)]
            summary = run_json(command)
            sets[limit] = (out, summary["output_bytes"], summary["written"])
        # 2. Alternating rounds.
        rates = {(limit, size): [] for limit in sets for size in sizes}
        for _ in range(args.rounds):
            for size in sizes:
                for limit, (out, _, _) in sets.items():
                    result = run_json([args.imgpipe, "bench", "--data", out, "--preset", "train",
                                       "--threads", str(args.threads), "--image-size", str(size),
                                       "--seconds", str(args.seconds), "--warmup", "1", "--json"])
                    rates[(limit, size)].append(result["images_per_s"])
        # 3. The table.
        written = sets[0][2]
        print(f"{args.images}: {written} images; train preset, {args.threads} threads, "
              f"medians of {args.rounds} alternating rounds of {args.seconds:g} s")
        header = "stored as".ljust(34) + "".join(f"--image-size {s}".rjust(26) for s in sizes)
        print(header)
        for limit, (_, size_bytes, _) in sets.items():
            name = (f"--max-resolution {limit}" if limit else "as they are") + \
                f" ({size_bytes / 1e6:.1f} MB)"
            cells = []
            for size in sizes:
                rate = statistics.median(rates[(limit, size)])
                base = statistics.median(rates[(0, size)])
                cells.append(f"{rate:,.0f}/s ({rate / base:.2f}x)".rjust(26))
            print(name.ljust(34) + "".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
