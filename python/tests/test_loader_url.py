"""imgpipe.Loader and imgpipe.convert on URLs (issue 21), against a real nginx (http://)
and a real S3 server (s3rver, s3://) started and stopped (by pid) here on 127.0.0.1: the
batches over a URL are the local ones; cache_dir keeps local copies of the shards; a
loader killed (SIGKILL) mid-epoch over a URL resumes from its last state_dict to exactly
the rest of the uninterrupted epoch; convert writes to s3:// through staging_dir."""

import hashlib
import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

import imgpipe
from conftest import shared_path

PHOTOS = shared_path("images/hymenoptera/val")
OPTIONS = dict(batch_size=8, image_size=32, seed=5, threads=2)
S3RVER = pathlib.Path(os.environ.get("IMGPIPE_S3RVER_DIR", pathlib.Path.home() / ".cache/imgpipe/s3rver")) \
    / "node_modules/s3rver/bin/s3rver.js"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(argv, port, what):
    """Starts `argv` and waits until it listens on `port`; the process."""
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    deadline = time.time() + 30
    while time.time() < deadline:
        assert process.poll() is None, f"{what} exited with status {process.returncode}"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return process
        except OSError:
            time.sleep(0.05)
    process.kill()
    pytest.fail(f"{what} did not listen on 127.0.0.1:{port}")


def stop(process):
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture(scope="module")
def local_shards(tmp_path_factory):
    """hymenoptera/val converted into 2 shards (with dataset.json), under www/shards."""
    root = tmp_path_factory.mktemp("www")
    imgpipe.convert(PHOTOS, root / "shards", min_shards=2, threads=2)
    return root / "shards"


@pytest.fixture(scope="module")
def nginx(local_shards, tmp_path_factory):
    """http://127.0.0.1:PORT serving the folder above the local shards."""
    work = tmp_path_factory.mktemp("nginx")
    port = free_port()
    (work / "nginx.conf").write_text(f"""daemon off; master_process off; worker_processes 1;
error_log {work}/error.log warn; pid {work}/nginx.pid;
events {{ worker_connections 64; }}
http {{
  access_log {work}/access.log;
  client_body_temp_path {work}/body; proxy_temp_path {work}/proxy;
  fastcgi_temp_path {work}/fastcgi; uwsgi_temp_path {work}/uwsgi; scgi_temp_path {work}/scgi;
  server {{ listen 127.0.0.1:{port}; root {local_shards.parent}; location / {{ }} }}
}}
""")
    process = start(["/usr/sbin/nginx", "-p", str(work), "-e", str(work / "error.log"), "-c",
                     str(work / "nginx.conf")], port, "nginx")
    yield f"http://127.0.0.1:{port}"
    stop(process)


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    """An s3rver with bucket "data"; this process's s3:// URLs pointed at it (AWS_*)."""
    if not S3RVER.exists():
        pytest.fail(f"no s3rver at {S3RVER} (run scripts/install-deps.sh)")
    work = tmp_path_factory.mktemp("s3rver")
    port = free_port()
    process = start(["/usr/bin/node", "--openssl-legacy-provider", str(S3RVER), "-d", str(work), "-a",
                     "127.0.0.1", "-p", str(port), "--silent", "--configure-bucket", "data"], port, "s3rver")
    os.environ.update({"AWS_ACCESS_KEY_ID": "S3RVER", "AWS_SECRET_ACCESS_KEY": "S3RVER",
                       "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}"})
    yield
    stop(process)


def epoch(data, number, **options):
    loader = imgpipe.Loader(data, **OPTIONS, **options)
    loader.set_epoch(number)
    return [(np.asarray(b.labels).tolist(), np.array(b.images)) for b in loader]


def same(a, b):
    return len(a) == len(b) and all(la == lb and np.array_equal(ia, ib) for (la, ia), (lb, ib) in zip(a, b))


def test_http_batches_are_the_local_ones_and_cache_dir_keeps_the_shards(local_shards, nginx, tmp_path):
    url = f"{nginx}/shards"
    cache = tmp_path / "cache"
    for number in (1, 2):
        assert same(epoch(url, number, cache_dir=str(cache)), epoch(str(local_shards), number))
    copies = sorted(p for p in cache.iterdir() if p.suffix == ".data")
    assert len(copies) == 2  # the two shards
    assert sorted(p.stat().st_size for p in copies) == sorted(
        p.stat().st_size for p in local_shards.glob("*.tfrecord"))
    # The same with the shards named by a brace pattern.
    pattern = f"{nginx}/shards/train-{{00000..00001}}-of-00002.tfrecord"
    assert same(epoch(pattern, 3), epoch(str(local_shards), 3))


def test_convert_to_s3_through_staging_dir_and_read_back(local_shards, s3, tmp_path):
    staging = tmp_path / "staging"
    summary = imgpipe.convert(PHOTOS, "s3://data/shards", min_shards=2, threads=2, staging_dir=str(staging))
    assert summary["complete"] and summary["written"] == 153
    assert staging.is_dir()
    assert not list(staging.glob("*.tfrecord"))  # uploaded, then removed
    assert same(epoch("s3://data/shards", 1), epoch(str(local_shards), 1))


# A child process: the loader over DATA at epoch 1, each batch's digest and the state after
# it printed as one JSON line; from STATE (a file) when given.
CHILD = r"""
import hashlib, json, sys
import numpy as np
import imgpipe
data, state_file = sys.argv[1], sys.argv[2]
loader = imgpipe.Loader(data, **json.loads(sys.argv[3]))
if state_file:
    loader.load_state_dict(json.load(open(state_file)))
loader.set_epoch(1)
for b in loader:
    digest = hashlib.sha256(np.asarray(b.labels).tobytes() + np.array(b.images).tobytes()).hexdigest()
    print(json.dumps({"digest": digest, "state": loader.state_dict()}), flush=True)
"""


def run_child(data, state_file, stdout):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.Popen([sys.executable, "-c", CHILD, data, state_file, json.dumps(OPTIONS)],
                            stdout=stdout, env=env)


def test_a_loader_killed_mid_epoch_over_a_url_resumes_exactly(nginx, tmp_path):
    url = f"{nginx}/shards"
    whole = subprocess.run([sys.executable, "-c", CHILD, url, "", json.dumps(OPTIONS)], capture_output=True,
                           text=True, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)), timeout=120)
    assert whole.returncode == 0, whole.stderr
    expected = [json.loads(line)["digest"] for line in whole.stdout.splitlines()]
    assert len(expected) == 153 // 8

    # 1. Killed once three batches are out.
    out = tmp_path / "first.jsonl"
    with open(out, "w") as f:
        child = run_child(url, "", f)
        deadline = time.time() + 120
        while len(out.read_text().splitlines()) < 3:
            assert child.poll() is None and time.time() < deadline, "the loader ended before it was killed"
            time.sleep(0.01)
        child.send_signal(signal.SIGKILL)
        child.wait()
    lines = [json.loads(line) for line in out.read_text().splitlines() if line.endswith("}")]
    assert 3 <= len(lines) < len(expected)
    # 2. Resumed in a new process from the last state saved.
    state = tmp_path / "state.json"
    state.write_text(json.dumps(lines[-1]["state"]))
    rest = subprocess.run([sys.executable, "-c", CHILD, url, str(state), json.dumps(OPTIONS)], capture_output=True,
                          text=True, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)), timeout=120)
    assert rest.returncode == 0, rest.stderr
    resumed = [line["digest"] for line in lines] + [json.loads(l)["digest"] for l in rest.stdout.splitlines()]
    assert resumed == expected
