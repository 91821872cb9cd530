#!/usr/bin/env python3
"""The train preset over the network beside local disk (issue 21), side by side in one run.

The same shards (imgpipe convert of an image folder) are read by `imgpipe bench --json`
from local disk, from nginx on 127.0.0.1 (http://, listed by dataset.json), from s3rver
(s3://, written there by `imgpipe convert --output s3://`), and again through
imgpipe_fault_proxy adding 20 ms and 100 ms to every request (a far region). Rows run in
rounds, each round every row once, and the medians are reported with their ratio to the
local rate, the requests, connections and bytes per request that imgpipe counted, and how
long each row takes to open (an `imgpipe bench` that stops after its first batch; the
seconds over the local row's are the network's). A last
row reads the farthest store with --cache-dir (a fresh folder each round): the epochs
after the first read the local copies.

The pipeline runs on the first half of the CPUs (`imgpipe bench --threads` takes the
first ones) and the servers and proxies on the other half, so that their CPU time (s3rver
is Node.js) does not come out of the pipeline's, as a remote store's would not; the
local-disk row has the same CPUs. On 2 cores: the pipeline on one, the servers on the other.

usage: network_bench.py BUILD_DIR IMAGES [--seconds S] [--rounds N] [--threads T]
"""
import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, process, what, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if process.poll() is not None:
            sys.exit(f"{what} exited with status {process.returncode} before it listened")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"{what} did not listen on 127.0.0.1:{port} within {seconds} s")


class Servers:
    """The processes this benchmark starts; each stopped by its pid at exit."""

    def __init__(self, cpus):
        self.processes = []
        self.cpus = cpus  # the CPUs the servers and proxies run on

    def popen(self, argv):
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             preexec_fn=lambda: os.sched_setaffinity(0, self.cpus))
        self.processes.append(p)
        return p

    def start(self, argv, port, what):
        p = self.popen(argv)
        wait_for_port(port, p, what)
        return p

    def stop(self):
        for p in self.processes:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.processes:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def start_nginx(servers, root, work):
    port = free_port()
    os.makedirs(work, exist_ok=True)
    with open(f"{work}/nginx.conf", "w") as f:
        f.write(f"""daemon off; master_process off; worker_processes 1;
error_log {work}/error.log warn; pid {work}/nginx.pid;
events {{ worker_connections 256; }}
http {{
  access_log off;
  client_body_temp_path {work}/body; proxy_temp_path {work}/proxy;
  fastcgi_temp_path {work}/fastcgi; uwsgi_temp_path {work}/uwsgi; scgi_temp_path {work}/scgi;
  server {{ listen 127.0.0.1:{port}; root {root}; location / {{ }} }}
}}
""")
    servers.start(["/usr/sbin/nginx", "-p", work, "-e", f"{work}/error.log", "-c", f"{work}/nginx.conf"],
                  port, "nginx")
    return port


def start_s3rver(servers, work):
    install = os.environ.get("IMGPIPE_S3RVER_DIR", os.path.expanduser("~/.cache/imgpipe/s3rver"))
    script = f"{install}/node_modules/s3rver/bin/s3rver.js"
    if not os.path.exists(script):
        sys.exit(f"no s3rver at {script} (run scripts/install-deps.sh)")
    port = free_port()
    os.makedirs(f"{work}/data", exist_ok=True)
    servers.start(["/usr/bin/node", "--openssl-legacy-provider", script, "-d", f"{work}/data", "-a", "127.0.0.1",
                   "-p", str(port), "--silent", "--configure-bucket", "bench"], port, "s3rver")
    return port


def start_proxy(servers, proxy, upstream_port, latency_ms, work):
    port_file = f"{work}/proxy-{upstream_port}-{latency_ms}.port"
    p = servers.popen([proxy, "--upstream", f"127.0.0.1:{upstream_port}", "--latency-ms", str(latency_ms),
                       "--port-file", port_file])
    deadline = time.time() + 10
    while not os.path.exists(port_file):
        if p.poll() is not None or time.time() > deadline:
            sys.exit("imgpipe_fault_proxy did not start")
        time.sleep(0.02)
    return int(open(port_file).read())


def repeated(images, times, out):
    """`images` or, when times > 1, a copy of its folder tree with each image there
    `times` times under different names (hard links where the file system allows)."""
    if times <= 1:
        return images
    for folder, _, names in os.walk(images):
        target_folder = os.path.join(out, os.path.relpath(folder, images))
        os.makedirs(target_folder, exist_ok=True)
        for name in sorted(names):
            for i in range(times):
                target = os.path.join(target_folder, f"{i}-{name}")
                try:
                    os.link(os.path.join(folder, name), target)
                except OSError:
                    shutil.copyfile(os.path.join(folder, name), target)
    return out


def time_to_open(imgpipe, data, threads, env):
    """Wall seconds of an `imgpipe bench` that stops at its first batch: the process's
    start, the data's resolution (listing, dataset.json, the .idx files, the labels) and
    the first records' reads, as a user waits for them before a first step."""
    start = time.monotonic()
    out = subprocess.run([imgpipe, "bench", "--data", data, "--threads", str(threads), "--seconds", "0.001",
                          "--warmup", "0"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    seconds = time.monotonic() - start
    if out.returncode != 0:
        sys.exit(f"imgpipe bench --data {data} failed:\n{out.stderr}")
    return seconds


def s3_environment(endpoint_port):
    env = dict(os.environ)
    env.update({"AWS_ACCESS_KEY_ID": "S3RVER", "AWS_SECRET_ACCESS_KEY": "S3RVER", "AWS_REGION": "us-east-1",
                "AWS_ENDPOINT_URL": f"http://127.0.0.1:{endpoint_port}"})
    return env


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("images", help="an image folder, one sub-folder per class")
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    cpus = sorted(os.sched_getaffinity(0))
    ap.add_argument("--threads", type=int, default=max(1, len(cpus) // 2),
                    help="the pipeline's CPUs (the first ones); the servers get the rest (default: half each)")
    ap.add_argument("--latencies", default="20,100", help="proxy delays in ms, comma-separated")
    ap.add_argument("--repeat", type=int, default=1,
                    help="convert each image this many times (a larger data set: longer epochs, larger shards)")
    ap.add_argument("--shards", type=int, default=4)
    args = ap.parse_args()
    imgpipe = os.path.abspath(f"{args.build}/src/cli/imgpipe")
    proxy = os.path.abspath(f"{args.build}/src/testing/imgpipe_fault_proxy")
    latencies = [int(x) for x in args.latencies.split(",") if x]
    work = tempfile.mkdtemp(prefix="imgpipe-network-bench.")
    server_cpus = set(cpus[args.threads:]) or set(cpus)
    servers = Servers(server_cpus)
    try:
        # 1. The shards on local disk, the same conversion on the S3 server.
        images = repeated(args.images, args.repeat, f"{work}/images")
        shards = f"{work}/www/shards"
        subprocess.run([imgpipe, "convert", "--input", images, "--output", shards, "--min-shards", str(args.shards)],
                       check=True, stdout=subprocess.DEVNULL)
        http_port = start_nginx(servers, f"{work}/www", f"{work}/nginx")
        s3_port = start_s3rver(servers, f"{work}/s3rver")
        subprocess.run([imgpipe, "convert", "--input", images, "--output", "s3://bench/shards",
                        "--min-shards", str(args.shards)], check=True, stdout=subprocess.DEVNULL,
                       env=s3_environment(s3_port))
        # 2. The rows: (label, data, environment).
        rows = [("local disk", shards, dict(os.environ)),
                ("http (nginx)", f"http://127.0.0.1:{http_port}/shards", dict(os.environ)),
                ("s3 (s3rver)", "s3://bench/shards", s3_environment(s3_port))]
        for ms in latencies:
            p = start_proxy(servers, proxy, http_port, ms, work)
            rows.append((f"http +{ms} ms", f"http://127.0.0.1:{p}/shards", dict(os.environ)))
            p = start_proxy(servers, proxy, s3_port, ms, work)
            rows.append((f"s3 +{ms} ms", "s3://bench/shards", s3_environment(p)))
        # The farthest store again with --cache-dir: the first epoch fills the copies.
        far_label, far_data, far_env = rows[-1]
        rows.append((far_label + " cache", far_data, far_env))
        # 3. Rounds of every row; medians.
        rates = {label: [] for label, _, _ in rows}
        cpu_ms = {label: [] for label, _, _ in rows}  # the pipeline process's CPU per image
        traffic = {}
        opening = {label: [] for label, _, _ in rows}  # seconds to resolve, open and end
        for round in range(args.rounds):
            for label, data, env in rows:
                cache = ["--cache-dir", f"{work}/cache-{round}"] if label.endswith(" cache") else []
                if not cache:
                    opening[label].append(time_to_open(imgpipe, data, args.threads, env))
                out = subprocess.run([imgpipe, "bench", "--data", data, "--threads", str(args.threads),
                                      "--seconds", str(args.seconds), "--json"] + cache,
                                     check=True, capture_output=True, text=True, env=env)
                result = json.loads(out.stdout)
                rates[label].append(result["images_per_s"])
                cpu_ms[label].append(1e3 * result["cpu_utilization"] * result["threads"] * result["seconds"] /
                                     max(result["images"], 1))
                if "storage" in result:
                    traffic[label] = result["storage"]
        local = statistics.median(rates["local disk"])
        local_opening = statistics.median(opening["local disk"])
        size = sum(os.path.getsize(f"{shards}/{n}") for n in os.listdir(shards) if n.endswith(".tfrecord"))
        print(f"servers and proxies on CPUs {sorted(server_cpus)}")
        print(f"train preset, {args.threads} threads, {args.seconds:g} s a row, median of {args.rounds} rounds; "
              f"real photos: {args.images}" + (f" x {args.repeat}" if args.repeat > 1 else "") +
              f", {args.shards} shards, {size / 1e6:.0f} MB")
        for label, _, _ in rows:
            m = statistics.median(rates[label])
            line = (f"  {label:20s} {m:8.1f} images/s  {100 * m / local:5.1f}% of local disk  "
                    f"{statistics.median(cpu_ms[label]):.2f} ms CPU/image")
            if opening[label]:
                o = statistics.median(opening[label])
                line += f"  opens in {o:.2f} s" + (
                    f" (+{o - local_opening:.2f})" if label != "local disk" else "")
            t = traffic.get(label)
            if t:
                line += (f"  ({t['requests']} requests on {t['connections']} connections, "
                         f"{t['bytes_per_request'] / 2**20:.2f} MiB a request, {t['retries']} retries"
                         + (f"; {t['cache_hits']} opens from the cache, {t['cache_misses']} from the network"
                            if label.endswith(" cache") else "") + ")")
            print(line)
        print("targets: >= 95% of local disk at +20 ms, >= 90% at +100 ms")
    finally:
        servers.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
