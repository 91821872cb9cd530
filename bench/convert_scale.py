#!/usr/bin/python3
"""Ten million images, measured: `imgpipe convert` on a CSV manifest of --rows rows
(default 10,000,000), then reading the 10M-record result (`imgpipe inspect`, and the
start of a train pipeline from Python), with peak RSS, plan time, throughput and shard
count, each next to its target.

Usage: /usr/bin/python3 bench/convert_scale.py [--imgpipe build/src/cli/imgpipe]
       [--rows 10000000] [--restart-rows 200000] [--reference-rows 1000] [--threads 2]
       [--shard-size 64MB] [--work DIR] [--keep] [--json FILE] [--skip-inspect]
       [--skip-loader]

The images: the real photographs of shared/testdata/images (hymenoptera train and val,
photos-by-class; JPEGs only, found by content), each shrunk once with Pillow so that its
longer side is 64 px (JPEG quality 90), stored once as store/p0000.jpg ... in the work
folder. No 10M inodes: store/ holds ten symbolic links "0".."9" to ".", so
store/1/2/3/4/5/p0012.jpg is store/p0012.jpg; with D digit levels each photo has 10**D
distinct paths, D the smallest with P * 10**D >= rows (P photos). Row r of the
manifest (`path,label`, paths relative to the manifest) is photo r % P under the alias
r // P written as D digits, with label c{(r * 7919) % 10000:05d}: 10,000 classes spread
over the rows. Every row is a distinct path and name; the bytes are the same few hundred
photos, read from the page cache.

Measured, one process at a time (each child's peak RSS is its ru_maxrss from wait4):
1. `imgpipe convert --threads T --json --shard-size S --jpeg-restart-interval 0` on the
   first --reference-rows rows (default 1,000; five runs, the median), then on --rows
   rows: wall time, peak RSS, plan time, throughput and shards. Plan time: from the
   process's start until the converter writes OUTPUT/.imgpipe/plan.json, which it does
   right after planning (reading the manifest, stat of every file, the shuffle, the
   shard plan), so it includes the process's start-up (`imgpipe --version`'s wall time,
   printed). Throughput: rows written per second of the summary's `seconds` (the
   conversion in the process, plan included), per core (divided by T), and rows per
   CPU-second (user + system time of the process); the target compares the first with
   the reference run's.
2. --jpeg-restart-interval 0 vs 1 on the first --restart-rows rows (default 200,000):
   throughput and output bytes, side by side.
3. `imgpipe inspect OUTPUT --json` on the big output (it reads and checks every record:
   CRCs, the index; it has no mode that reads only the index files): wall time, peak RSS.
4. imgpipe.torch.Loader(OUTPUT, preset="train", batch_size=256, threads=T) in a child
   /usr/bin/python3: time to construct it, time from iter() to the first batch, and the
   child's peak RSS (with the RSS after `import imgpipe.torch`, before the Loader).
   (`imgpipe bench --json` reports no first-batch time, so it is not run here.)

Targets (the issue "ten million images, measured"): convert's peak RSS <= 1 GB at 10M
rows; its throughput per core not lower than at 1,000 rows; the first batch of a
10M-record data set within 5 s, with RSS <= 1 GB. With fewer rows than 10M, the RSS is
also extrapolated linearly to 10M rows from the reference and the big run.

Disk: the shards take about (mean record size) x rows (64-px thumbnails: ~2.4 KB a
record, ~25 GB at 10M rows); the script stops before the big run when the free space is
under 1.5x its estimate. The work folder (default: a new folder under $TMPDIR or /tmp)
is removed at the end unless --keep.
"""
import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTDATA = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "testdata", "images"))
GB = 1e9
MB = 1e6
CLASSES = 10000
LABEL_STEP = 7919  # prime, coprime to CLASSES: every block of 10,000 rows has every class


def fail(message):
    sys.exit(f"convert_scale.py: {message}")


# ---------------------------------------------------------------------------------------
# The photo store and the manifest.

def source_photos():
    """The real photographs: JPEG files (by content) of hymenoptera and photos-by-class."""
    patterns = [os.path.join(TESTDATA, "hymenoptera", "*", "*", "*"),
                os.path.join(TESTDATA, "photos-by-class", "*", "*")]
    photos = []
    for pattern in patterns:
        for path in sorted(glob.glob(pattern)):
            if not os.path.isfile(path):
                continue
            with open(path, "rb") as f:
                if f.read(3) == b"\xff\xd8\xff":
                    photos.append(path)
    if not photos:
        fail(f"no JPEG photos found under {TESTDATA}")
    return photos


def make_store(store, side, quality):
    """Each photo shrunk so its longer side is `side` px, as store/pNNNN.jpg, and the ten
    digit links to "."; returns (photos, stored bytes, mean stored width, height)."""
    from PIL import Image, ImageOps

    photos = source_photos()
    os.makedirs(store)
    width_digits = max(4, len(str(len(photos) - 1)))
    total = widths = heights = 0
    for n, path in enumerate(photos):
        with Image.open(path) as im:
            im = ImageOps.exif_transpose(im).convert("RGB")
            w, h = im.size
            scale = side / max(w, h)
            im = im.resize((max(1, round(w * scale)), max(1, round(h * scale))), Image.LANCZOS)
            out = os.path.join(store, f"p{n:0{width_digits}d}.jpg")
            im.save(out, quality=quality)
            total += os.path.getsize(out)
            widths += im.size[0]
            heights += im.size[1]
    for d in range(10):
        os.symlink(".", os.path.join(store, str(d)))
    count = len(photos)
    return {"photos": count, "name_digits": width_digits, "bytes": total,
            "mean_bytes": total / count, "mean_width": widths / count, "mean_height": heights / count}


def alias_levels(rows, photos):
    """The smallest D with photos * 10**D >= rows."""
    levels = 0
    while photos * 10 ** levels < rows:
        levels += 1
    return levels


def write_manifests(work, rows, photos, name_digits, levels, heads):
    """manifest.csv with `rows` rows, and manifest-N.csv with its first N rows for each N
    in `heads`, written in one streaming pass. Returns {rows: path}."""
    paths = {rows: os.path.join(work, "manifest.csv")}
    for n in heads:
        paths.setdefault(n, os.path.join(work, f"manifest-{n}.csv"))
    files = {n: open(p, "w", buffering=1 << 20) for n, p in paths.items()}
    try:
        for f in files.values():
            f.write("path,label\n")
        names = [f"p{p:0{name_digits}d}.jpg" for p in range(photos)]
        labels = [f"c{c:05d}" for c in range(CLASSES)]
        r = 0
        alias = 0
        while r < rows:
            digits = f"{alias:0{levels}d}" if levels else ""
            prefix = "store/" + "".join(d + "/" for d in digits)
            count = min(photos, rows - r)
            lines = [f"{prefix}{names[p]},{labels[((r + p) * LABEL_STEP) % CLASSES]}\n"
                     for p in range(count)]
            chunk = "".join(lines)
            for n, f in files.items():
                if r + count <= n:
                    f.write(chunk)
                elif r < n:
                    f.write("".join(lines[:n - r]))
            r += count
            alias += 1
    finally:
        for f in files.values():
            f.close()
    return paths


# ---------------------------------------------------------------------------------------
# Running a child and measuring it.

def wait_for_file(path, what, seconds=300):
    """The build may be replaced under us (another build in the same tree): wait for it."""
    deadline = time.monotonic() + seconds
    while not os.access(path, os.X_OK if what == "binary" else os.R_OK):
        if time.monotonic() > deadline:
            fail(f"{path} ({what}) is missing")
        time.sleep(1)


def proc_status_kb(pid, key):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def run_measured(args, log_prefix, env=None, watch=None, poll=0.05, retries=3):
    """Runs `args` (stdout and stderr to files, so nothing blocks on a pipe), polling
    every `poll` s: the time each path in `watch` (name -> path) first exists, and the
    RSS then. Returns wall s, peak RSS (ru_maxrss), user/system CPU s, stdout, rc."""
    for attempt in range(retries):
        wait_for_file(args[0], "binary")
        out_path, err_path = log_prefix + ".stdout", log_prefix + ".stderr"
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            start = time.monotonic()
            try:
                child = subprocess.Popen(args, stdout=out, stderr=err, env=env)
            except (FileNotFoundError, PermissionError, OSError) as e:  # replaced mid-exec
                if attempt + 1 == retries:
                    raise
                print(f"  ({args[0]}: {e}; retrying in 5 s)", file=sys.stderr)
                time.sleep(5)
                continue
            seen = {}
            rss_max_sampled = 0
            while True:
                pid, status, usage = os.wait4(child.pid, os.WNOHANG)
                if pid:
                    break
                now = time.monotonic() - start
                rss = proc_status_kb(child.pid, "VmRSS")
                if rss:
                    rss_max_sampled = max(rss_max_sampled, rss)
                for name, path in (watch or {}).items():
                    if name not in seen and os.path.exists(path):
                        seen[name] = {"s": now, "rss_bytes": rss * 1024 if rss else None}
                time.sleep(poll)
            wall = time.monotonic() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        # inspect --json over hundreds of shards prints ~0.4 MB a shard: read such output
        # from the file, line by line (stdout_path), not into memory here.
        stdout = None
        if os.path.getsize(out_path) < 16 << 20:
            with open(out_path, errors="replace") as f:
                stdout = f.read()
        with open(err_path, errors="replace") as f:
            stderr = f.read()
        if child.returncode in (126, 127) and attempt + 1 < retries:  # binary being replaced
            print(f"  ({args[0]} exited {child.returncode}; retrying in 5 s)", file=sys.stderr)
            time.sleep(5)
            continue
        return {"wall_s": wall, "peak_rss_bytes": usage.ru_maxrss * 1024,
                "sampled_peak_rss_bytes": rss_max_sampled * 1024,
                "user_s": usage.ru_utime, "system_s": usage.ru_stime,
                "cpu_s": usage.ru_utime + usage.ru_stime, "rc": child.returncode,
                "seen": seen, "stdout": stdout, "stdout_path": out_path, "stderr": stderr}
    raise AssertionError("unreachable")


def checked(result, args):
    if result["rc"] != 0:
        fail(f"{' '.join(args)} failed (exit status {result['rc']}):\n{result['stderr'][-4000:]}")
    return result


def binary_stamp(path):
    st = os.stat(path)
    return (st.st_size, st.st_mtime_ns)


# ---------------------------------------------------------------------------------------
# The measurements.

def convert(imgpipe, manifest, output, threads, shard_size, restart_interval, logs, startup):
    """One `imgpipe convert` of `manifest`; the measurement with the summary's figures."""
    shutil.rmtree(output, ignore_errors=True)
    args = [imgpipe, "convert", "--input", manifest, "--output", output, "--threads", str(threads),
            "--shard-size", shard_size, "--jpeg-restart-interval", str(restart_interval), "--json"]
    name = os.path.basename(output)
    result = checked(run_measured(args, os.path.join(logs, name), watch={
        "plan": os.path.join(output, ".imgpipe", "plan.json")}), args)
    try:
        summary = json.loads(result["stdout"] or "")
    except ValueError:
        fail(f"{' '.join(args)} printed no JSON summary:\n{(result['stdout'] or '')[-2000:]}")
    written = summary["written"]
    seconds = summary["seconds"]
    idx_bytes = sum(os.path.getsize(p) for p in glob.glob(os.path.join(output, "*.tfrecord.idx")))
    m = {
        "rows": summary["inputs"], "written": written, "rejected": summary["rejected"],
        "restart_interval": restart_interval, "threads": threads,
        "wall_s": result["wall_s"], "summary_seconds": seconds,
        "plan_s": result["seen"].get("plan", {}).get("s"),
        "rss_after_plan_bytes": result["seen"].get("plan", {}).get("rss_bytes"),
        "peak_rss_bytes": result["peak_rss_bytes"], "cpu_s": result["cpu_s"],
        "user_s": result["user_s"], "system_s": result["system_s"],
        "shards": len(summary.get("shards", [])), "shards_total": summary.get("shards_total"),
        "output_bytes": summary["output_bytes"], "index_bytes": idx_bytes,
        "restart_markers_added": summary.get("restart_markers_added"),
        "rows_per_s": written / seconds if seconds > 0 else None,
        "rows_per_s_per_core": written / seconds / threads if seconds > 0 else None,
        "rows_per_s_wall": written / result["wall_s"],
        "rows_per_cpu_s": written / result["cpu_s"] if result["cpu_s"] > 0 else None,
        "cpu_utilization_cores": result["cpu_s"] / result["wall_s"],
    }
    # Without the process's start-up (`imgpipe --version`'s CPU time): what the conversion
    # itself costs; only where the run takes 3x the start-up's CPU time or more (the
    # start-up's ~0.7 s varies by 0.1 s, which would swamp a smaller difference).
    cpu = result["cpu_s"] - startup["cpu_s"]
    m["rows_per_cpu_s_after_startup"] = written / cpu if result["cpu_s"] >= 3 * startup["cpu_s"] else None
    if m["plan_s"] is not None:
        m["plan_after_startup_s"] = max(0.0, m["plan_s"] - startup["wall_s"])
    problems = []
    if summary["written"] + summary["rejected"] != summary["inputs"]:
        problems.append(f"written {written} + rejected {summary['rejected']} != inputs {summary['inputs']}")
    if summary["rejected"]:
        problems.append(f"{summary['rejected']} rejected (see {output}/rejects.csv)")
    if not summary.get("complete", False):
        problems.append("summary says the conversion is not complete")
    m["problems"] = problems
    return m


def inspect(imgpipe, output, logs):
    args = [imgpipe, "inspect", output, "--json"]
    result = checked(run_measured(args, os.path.join(logs, "inspect")), args)
    records = 0
    ok = True
    files = 0
    with open(result["stdout_path"]) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            d = json.loads(line)
            if "records" in d:
                files += 1
                records += d["records"]
                ok = ok and d.get("ok", False) and d.get("index") == "ok"
    return {"wall_s": result["wall_s"], "peak_rss_bytes": result["peak_rss_bytes"],
            "cpu_s": result["cpu_s"], "files": files, "records": records, "all_ok": ok,
            "stdout_bytes": os.path.getsize(result["stdout_path"])}


LOADER_CHILD = r"""
import json, os, sys, time
def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
t0 = time.perf_counter()
import imgpipe.torch
t1 = time.perf_counter()
rss_import = status("VmRSS")
data, batch_size, threads, more = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
loader = imgpipe.torch.Loader(data, preset="train", batch_size=batch_size, threads=threads)
t2 = time.perf_counter()
rss_constructed = status("VmRSS")
batches = len(loader)
it = iter(loader)
images, labels = next(it)
t3 = time.perf_counter()
rss_first = status("VmRSS")
shape = list(images.shape)
del images, labels
taken = 0
for _ in range(more):
    try:
        images, labels = next(it)
    except StopIteration:
        break
    taken += 1
    del images, labels
t4 = time.perf_counter()
try:
    memory = loader._loader.memory()
except Exception as e:
    memory = repr(e)
layout = loader.data_layout
del it
loader.close()
print(json.dumps({"import_s": t1 - t0, "construct_s": t2 - t1, "first_batch_s": t3 - t2,
                  "more_batches": taken, "more_batches_s": t4 - t3, "len": batches,
                  "batch_shape": shape, "data_layout": layout,
                  "rss_after_import_bytes": rss_import, "rss_after_construct_bytes": rss_constructed,
                  "rss_after_first_batch_bytes": rss_first, "vm_hwm_bytes": status("VmHWM"),
                  "memory": memory}))
"""


def loader_start(python, pythonpath, output, batch_size, threads, more, logs):
    env = dict(os.environ)
    env["PYTHONPATH"] = pythonpath + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    args = [python, "-c", LOADER_CHILD, output, str(batch_size), str(threads), str(more)]
    wait_for_file(os.path.join(pythonpath, "imgpipe", "__init__.py"), "Python package")
    result = checked(run_measured(args, os.path.join(logs, "loader"), env=env), [python, "-c", "LOADER_CHILD"])
    d = json.loads(result["stdout"].strip().splitlines()[-1])
    d.update({"wall_s": result["wall_s"], "peak_rss_bytes": result["peak_rss_bytes"],
              "cpu_s": result["cpu_s"], "batch_size": batch_size, "threads": threads,
              "construct_plus_first_batch_s": d["construct_s"] + d["first_batch_s"]})
    return d


# ---------------------------------------------------------------------------------------
# The report.

def mb(n):
    return "n/a" if n is None else f"{n / MB:,.1f} MB"


def sec(s):
    return "n/a" if s is None else f"{s:,.2f} s"


def verdict(ok):
    return "[ok]" if ok else "[MISSED]"


def print_convert(m, indent="  "):
    print(f"{indent}rows {m['rows']:,}, written {m['written']:,}, rejected {m['rejected']:,}; "
          f"{m['shards']} shard(s), {mb(m['output_bytes'])} (+ {mb(m['index_bytes'])} of .idx)")
    print(f"{indent}wall {sec(m['wall_s'])} (summary's seconds {sec(m['summary_seconds'])}); "
          f"plan.json at {sec(m['plan_s'])} ({sec(m.get('plan_after_startup_s'))} after start-up; RSS then "
          f"{mb(m['rss_after_plan_bytes'])}); peak RSS {mb(m['peak_rss_bytes'])}")
    print(f"{indent}{m['rows_per_s']:,.0f} rows/s = {m['rows_per_s_per_core']:,.0f} rows/s per core "
          f"({m['threads']} threads); {m['rows_per_s_wall']:,.0f} rows/s of wall time; "
          f"{m['rows_per_cpu_s']:,.0f} rows per CPU-second ({m['cpu_utilization_cores']:.2f} cores busy), "
          + (f"{m['rows_per_cpu_s_after_startup']:,.0f} without the start-up's CPU time"
             if m['rows_per_cpu_s_after_startup'] else "mostly the start-up's CPU time"))
    for p in m["problems"]:
        print(f"{indent}PROBLEM: {p}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--imgpipe", default=os.path.join(HERE, "..", "build", "src", "cli", "imgpipe"))
    parser.add_argument("--python-path", default=None,
                        help="folder holding the imgpipe package (default: the build's python/ next to --imgpipe)")
    parser.add_argument("--python", default="/usr/bin/python3", help="Python with torch, for the Loader")
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--reference-rows", type=int, default=1000)
    parser.add_argument("--reference-runs", type=int, default=5)
    parser.add_argument("--restart-rows", type=int, default=200_000,
                        help="rows converted with --jpeg-restart-interval 0 and 1 (0: skip)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--shard-size", default="64MB")
    parser.add_argument("--side", type=int, default=64, help="longer side of the stored photos, px")
    parser.add_argument("--batch-size", type=int, default=256, help="the Loader's batch size")
    parser.add_argument("--more-batches", type=int, default=3, help="batches the Loader takes after the first")
    parser.add_argument("--work", default=None, help="work folder (default: a new one under $TMPDIR or /tmp)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument("--skip-inspect", action="store_true")
    parser.add_argument("--skip-loader", action="store_true")
    parser.add_argument("--json", default=None, help="write every number to this file as one JSON object")
    args = parser.parse_args()
    if args.rows < 1 or args.reference_rows < 1:
        fail("--rows and --reference-rows must be positive")

    imgpipe = os.path.abspath(args.imgpipe)
    wait_for_file(imgpipe, "binary")
    pythonpath = os.path.abspath(args.python_path or os.path.join(os.path.dirname(imgpipe), "..", "..", "python"))

    created = args.work is None or not os.path.exists(args.work)
    if args.work is None:
        work = tempfile.mkdtemp(prefix="imgpipe-convert-scale.", dir=os.environ.get("TMPDIR") or "/tmp")
    else:
        work = os.path.abspath(args.work)
        os.makedirs(work, exist_ok=True)
    ours = []  # what to remove when the work folder is not ours

    def cleanup():
        if args.keep:
            print(f"(work folder kept: {work})")
        elif created:
            shutil.rmtree(work, ignore_errors=True)
        else:
            for p in ours:
                if os.path.isdir(p):
                    shutil.rmtree(p, ignore_errors=True)
                elif os.path.exists(p):
                    os.remove(p)

    results = {"rows": args.rows, "threads": args.threads, "shard_size": args.shard_size,
               "imgpipe": imgpipe, "work": work}
    try:
        logs = os.path.join(work, "logs")
        os.makedirs(logs, exist_ok=True)
        ours.append(logs)
        stamp_before = binary_stamp(imgpipe)

        # 1. The photo store.
        store = os.path.join(work, "store")
        ours.append(store)
        stamp_path = os.path.join(work, "store.json")
        ours.append(stamp_path)
        info = None
        if os.path.exists(stamp_path) and os.path.isdir(store):
            with open(stamp_path) as f:
                info = json.load(f)
            if info.get("side") != args.side:
                info = None
        if info is None:
            shutil.rmtree(store, ignore_errors=True)
            t = time.monotonic()
            info = make_store(store, args.side, 90)
            info["side"] = args.side
            info["made_s"] = time.monotonic() - t
            with open(stamp_path, "w") as f:
                json.dump(info, f)
        photos = info["photos"]
        what = (f"{args.side}-px thumbnails of {photos} real photographs (hymenoptera, photos-by-class; "
                f"shrunk, mean {info['mean_width']:.0f}x{info['mean_height']:.0f}, {info['mean_bytes'] / 1e3:.1f} KB)")
        results["images"] = what
        results["store"] = info

        # A first disk check, before writing anything large: a record is the JPEG plus
        # ~250 bytes (features, path, class text, framing) and ~20 bytes of index.
        free = shutil.disk_usage(work).free
        rough = args.rows * (info["mean_bytes"] + 270 + 50)  # + the manifest's row
        if free < 1.5 * rough:
            fail(f"{work}: {free / GB:.1f} GB free, but {args.rows:,} rows need about {rough / GB:.1f} GB "
                 f"(1.5x: {1.5 * rough / GB:.1f} GB); use --work on a larger disk or fewer --rows")

        # 2. The manifests.
        levels = alias_levels(args.rows, photos)
        heads = [n for n in (args.reference_rows, args.restart_rows) if 0 < n < args.rows]
        t = time.monotonic()
        manifests = write_manifests(work, args.rows, photos, info["name_digits"], levels, heads)
        ours.extend(manifests.values())
        manifest_s = time.monotonic() - t
        manifest_bytes = os.path.getsize(manifests[args.rows])
        results["manifest"] = {"rows": args.rows, "alias_levels": levels, "bytes": manifest_bytes,
                               "written_s": manifest_s, "classes": min(CLASSES, args.rows)}
        with open(manifests[args.rows]) as f:
            f.readline()
            example = f.readline().strip()
        print(f"== Convert at scale: {what}, {args.rows:,} manifest rows")
        print(f"  store: {photos} photos in {info['bytes'] / MB:.1f} MB (each stored once); {levels} level(s) "
              f"of digit links (10 links to '.'), so each photo has {10 ** levels:,} distinct paths; "
              f"manifest {manifest_bytes / MB:,.1f} MB written in {manifest_s:.1f} s, "
              f"{min(CLASSES, args.rows):,} classes; row 1: {example}")

        runs = [run_measured([imgpipe, "--version"], os.path.join(logs, "version")) for _ in range(3)]
        startup = {"wall_s": min(r["wall_s"] for r in runs), "cpu_s": min(r["cpu_s"] for r in runs),
                   "peak_rss_bytes": min(r["peak_rss_bytes"] for r in runs)}
        results["process_startup"] = startup
        st = os.stat(imgpipe)
        results["imgpipe_version"] = runs[0]["stdout"].strip() if runs[0]["stdout"] else None
        results["imgpipe_mtime"] = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(st.st_mtime))
        print(f"  {imgpipe}: {results['imgpipe_version']}, built {results['imgpipe_mtime']}, {st.st_size / MB:.1f} MB")
        print(f"  process start-up (`imgpipe --version`, best of 3): {sec(startup['wall_s'])} wall, "
              f"{sec(startup['cpu_s'])} CPU, peak RSS {mb(startup['peak_rss_bytes'])}")

        # 3. The reference run.
        ref_rows = min(args.reference_rows, args.rows)
        refs = []
        for i in range(args.reference_runs):
            out = os.path.join(work, f"out-ref-{i}")
            ours.append(out)
            refs.append(convert(imgpipe, manifests[ref_rows], out, args.threads, args.shard_size, 0, logs, startup))
            per_record = (refs[-1]["output_bytes"] + refs[-1]["index_bytes"]) / refs[-1]["written"]
            shutil.rmtree(out, ignore_errors=True)
        ref = sorted(refs, key=lambda m: m["rows_per_s_per_core"])[len(refs) // 2]  # the median run
        ref["runs_rows_per_s_per_core"] = [m["rows_per_s_per_core"] for m in refs]
        ref["runs_rows_per_cpu_s"] = [m["rows_per_cpu_s"] for m in refs]
        results["reference"] = ref
        print(f"\n convert --threads {args.threads} --shard-size {args.shard_size} --jpeg-restart-interval 0, "
              f"{ref_rows:,} rows (reference; median of {len(refs)} runs: "
              + ", ".join(f"{x:,.0f}" for x in ref["runs_rows_per_s_per_core"]) + " rows/s per core):")
        print_convert(ref)

        # 4. The disk, before the big runs.
        restart_rows = min(args.restart_rows, args.rows)
        estimate = per_record * args.rows  # the restart runs' shards are removed as soon as measured
        free = shutil.disk_usage(work).free
        results["disk"] = {"free_bytes": free, "estimate_bytes": estimate, "bytes_per_record": per_record}
        print(f"  disk: {free / GB:,.1f} GB free in {work}; estimate for the shards: {estimate / GB:,.2f} GB "
              f"({per_record:,.0f} bytes a record with its index line)")
        if free < 1.5 * estimate:
            fail(f"{free / GB:.1f} GB free is under 1.5x the estimate ({1.5 * estimate / GB:.1f} GB): "
                 f"use --work on a larger disk, or fewer --rows")

        # 5. --jpeg-restart-interval 0 vs 1.
        if restart_rows:
            pair = {}
            for interval in (0, 1):
                out = os.path.join(work, f"out-restart-{interval}")
                ours.append(out)
                pair[interval] = convert(imgpipe, manifests[restart_rows], out, args.threads,
                                         args.shard_size, interval, logs, startup)
                shutil.rmtree(out, ignore_errors=True)
            a, b = pair[0], pair[1]
            results["restart"] = {"rows": restart_rows, "interval_0": a, "interval_1": b,
                                  "throughput_ratio": b["rows_per_s"] / a["rows_per_s"],
                                  "cpu_throughput_ratio": b["rows_per_cpu_s"] / a["rows_per_cpu_s"],
                                  "output_bytes_ratio": b["output_bytes"] / a["output_bytes"]}
            print(f"\n convert --jpeg-restart-interval 0 vs 1: {what}, {restart_rows:,} rows, "
                  f"--threads {args.threads}")
            print("  interval 0 (JPEGs as given):")
            print_convert(a, "    ")
            print("  interval 1 (a restart marker every MCU):")
            print_convert(b, "    ")
            print(f"  interval 1 / interval 0: throughput {results['restart']['throughput_ratio']:.2f}x "
                  f"(per CPU-second {results['restart']['cpu_throughput_ratio']:.2f}x), "
                  f"output bytes {results['restart']['output_bytes_ratio']:.3f}x "
                  f"({100 * (results['restart']['output_bytes_ratio'] - 1):+.1f}%); "
                  f"restart markers added to {b['restart_markers_added']:,} of {b['written']:,}")

        # 6. The big run.
        output = os.path.join(work, "out")
        ours.append(output)
        big = convert(imgpipe, manifests[args.rows], output, args.threads, args.shard_size, 0, logs, startup)
        results["convert"] = big
        print(f"\n convert --threads {args.threads} --shard-size {args.shard_size} --jpeg-restart-interval 0, "
              f"{args.rows:,} rows: {what}")
        print_convert(big)
        extra_rows = big["rows"] - ref["rows"]
        # Per row only where the rows dwarf the reference's (RSS varies by ~1 MB run to run).
        per_row = ((big["peak_rss_bytes"] - ref["peak_rss_bytes"]) / extra_rows
                   if big["rows"] >= 20 * ref["rows"] and extra_rows > 0 else None)
        at_10m = ref["peak_rss_bytes"] + per_row * (10_000_000 - ref["rows"]) if per_row is not None else None
        ratio = big["rows_per_s_per_core"] / ref["rows_per_s_per_core"]
        cpu_ratio = (big["rows_per_cpu_s_after_startup"] / ref["rows_per_cpu_s_after_startup"]
                     if big["rows_per_cpu_s_after_startup"] and ref["rows_per_cpu_s_after_startup"] else None)
        results["targets"] = {
            "convert_peak_rss_bytes": big["peak_rss_bytes"],
            "convert_rss_bytes_per_row": per_row,
            "convert_peak_rss_extrapolated_to_10m_bytes": at_10m,
            "convert_peak_rss_ok": big["peak_rss_bytes"] <= GB and (at_10m is None or args.rows >= 10_000_000
                                                                    or at_10m <= GB),
            "throughput_per_core_ratio_vs_reference": ratio,
            "throughput_per_cpu_s_ratio_vs_reference": cpu_ratio,
            "throughput_ok": ratio >= 1.0,
        }
        print(f"  peak RSS {mb(big['peak_rss_bytes'])} {verdict(big['peak_rss_bytes'] <= GB)} "
              f"(target <= 1 GB at 10,000,000 rows)")
        if per_row is not None:
            print(f"    {per_row:,.1f} bytes of peak RSS per row above the {ref['rows']:,}-row run's "
                  f"{mb(ref['peak_rss_bytes'])}"
                  + (f"; extrapolated to 10,000,000 rows: {mb(at_10m)} {verdict(at_10m <= GB)}"
                     if args.rows < 10_000_000 else ""))
        print(f"  throughput per core: {big['rows_per_s_per_core']:,.0f} rows/s vs {ref['rows_per_s_per_core']:,.0f} "
              f"at {ref['rows']:,} rows: {ratio:.2f}x {verdict(ratio >= 1.0)} (target >= 1.0x); per CPU-second "
              f"(start-up excluded) {'n/a (the reference is mostly start-up)' if cpu_ratio is None else f'{cpu_ratio:.2f}x'}")
        print(f"  plan time {sec(big['plan_s'])} (process start to plan.json, start-up {sec(startup['wall_s'])} included), "
              f"{100 * (big['plan_s'] or 0) / big['wall_s']:.0f}% of the wall time; shards {big['shards']}")

        # 7. Reading the result.
        if not args.skip_inspect:
            ins = inspect(imgpipe, output, logs)
            results["inspect"] = ins
            print(f"\n imgpipe inspect OUT --json over the {big['written']:,}-record output ({big['shards']} shard(s), "
                  f"{mb(big['output_bytes'])}; reads and checks every record):")
            print(f"  {sec(ins['wall_s'])}, peak RSS {mb(ins['peak_rss_bytes'])}, {ins['records']:,} records in "
                  f"{ins['files']} files, every file and index ok: {ins['all_ok']}"
                  + ("" if ins["records"] == big["written"] else
                     f"  PROBLEM: {ins['records']:,} records, convert wrote {big['written']:,}"))
        if not args.skip_loader:
            ld = loader_start(args.python, pythonpath, output, args.batch_size, args.threads,
                              args.more_batches, logs)
            results["loader"] = ld
            first = ld["construct_plus_first_batch_s"]
            results["targets"].update({
                "first_batch_s": first, "first_batch_ok": first <= 5.0,
                "loader_peak_rss_bytes": ld["peak_rss_bytes"], "loader_rss_ok": ld["peak_rss_bytes"] <= GB})
            print(f"\n imgpipe.torch.Loader(OUT, preset='train', batch_size={args.batch_size}, threads={args.threads}) "
                  f"over the {big['written']:,}-record output, in a child {args.python}:")
            print(f"  import imgpipe.torch {sec(ld['import_s'])} (not counted); construct {sec(ld['construct_s'])}; "
                  f"iter() to first batch {sec(ld['first_batch_s'])}; together {sec(first)} {verdict(first <= 5.0)} "
                  f"(target <= 5 s); len {ld['len']:,} batches; {ld['more_batches']} more batches in "
                  f"{sec(ld['more_batches_s'])}")
            print(f"  peak RSS {mb(ld['peak_rss_bytes'])} {verdict(ld['peak_rss_bytes'] <= GB)} (target <= 1 GB); "
                  f"after the import {mb(ld['rss_after_import_bytes'])}, after construct "
                  f"{mb(ld['rss_after_construct_bytes'])}, after the first batch {mb(ld['rss_after_first_batch_bytes'])}")
            mem = ld.get("memory")
            if isinstance(mem, dict) and "minimum_bytes" in mem:
                print(f"  loader.memory(): at least {mb(mem['minimum_bytes'])} of buffers (batches of "
                      f"{mb(mem.get('batch_bytes'))}, {mem.get('batches_per_pass')} a pass, {mem.get('passes')} "
                      f"pass(es) counted: start_ahead overlaps two at an epoch's end; shuffle "
                      f"{mb(mem.get('shuffle_bytes'))})")
        if binary_stamp(imgpipe) != stamp_before:
            results["binary_changed"] = True
            print(f"\n  NOTE: {imgpipe} was rebuilt during the benchmark: the runs may mix two builds")
    finally:
        if args.json:
            with open(args.json, "w") as f:
                json.dump(results, f, indent=1)
        cleanup()


if __name__ == "__main__":
    main()
