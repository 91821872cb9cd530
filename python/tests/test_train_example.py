"""examples/train_torch.py: two processes over Gloo on loopback (started here with
torchrun's variables), run uninterrupted and run stopped then resumed mid-epoch end with
the same parameters, bit for bit."""

import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import time

import torch

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "examples" / "train_torch.py"
WORLD_SIZE = 2
TIMEOUT_S = 240


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def train(data, checkpoint, *extra):
    """Runs the script on WORLD_SIZE processes; returns rank 0's JSON lines."""
    port = free_port()
    args = [sys.executable, str(SCRIPT), "--data", str(data), "--epochs", "2", "--batch-size", "2",
            "--eval-batch-size", "3", "--image-size", "32", "--lr", "0.05", "--seed", "5", "--threads", "1", "--torch-threads", "1",
            "--device", "cpu", "--checkpoint", str(checkpoint), *extra]
    procs = []
    try:
        for rank in range(WORLD_SIZE):
            env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                       LOCAL_RANK=str(rank), WORLD_SIZE=str(WORLD_SIZE), LOCAL_WORLD_SIZE=str(WORLD_SIZE),
                       OMP_NUM_THREADS="1")
            procs.append(subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True, start_new_session=True))
        deadline = time.monotonic() + TIMEOUT_S
        outputs = [p.communicate(timeout=max(1, deadline - time.monotonic())) for p in procs]
    finally:
        for p in procs:  # a failed or hung rank leaves nothing behind
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
    for p, (out, err) in zip(procs, outputs):
        assert p.returncode == 0, f"rank exited {p.returncode}:\n{out}\n{err}"
    return [json.loads(line) for line in outputs[0][0].splitlines() if line.startswith("{")]


def test_a_stopped_and_resumed_ddp_run_ends_where_an_uninterrupted_one_ends(tf_datasets, tmp_path):
    data = tf_datasets / "tf-slim"  # 12 train images (6 per rank: 3 steps an epoch), 6 validation (3 per rank)
    whole = train(data, tmp_path / "a.pt")
    steps = [e for e in whole if e["event"] == "step"]
    assert [e["step"] for e in steps] == list(range(1, 7)) and all(e["loss"] > 0 for e in steps)
    evals = [e for e in whole if e["event"] == "eval"]
    assert [(e["epoch"], e["total"]) for e in evals] == [(0, 6), (1, 6)]  # both ranks' counts

    first = train(data, tmp_path / "b.pt", "--max-steps", "4", "--checkpoint-every", "2")
    assert [e["step"] for e in first if e["event"] == "checkpoint"] == [2, 3, 4]  # 3: epoch 0's end
    stopped = torch.load(tmp_path / "b.pt")
    assert (stopped["epoch"], stopped["step"], stopped["epoch_done"]) == (1, 4, False)
    assert [s["batches"] for s in stopped["loader"]] == [1, 1]  # mid-epoch 1, on each rank

    rest = train(data, tmp_path / "b.pt", "--resume", str(tmp_path / "b.pt"))
    assert [e["step"] for e in rest if e["event"] == "step"] == [5, 6]
    assert [e["loss"] for e in rest if e["event"] == "step"] == [e["loss"] for e in steps[4:]]

    a, b = torch.load(tmp_path / "a.pt"), torch.load(tmp_path / "b.pt")
    assert (a["epoch"], a["step"]) == (b["epoch"], b["step"]) == (2, 6)
    assert a["model"].keys() == b["model"].keys()
    for name, tensor in a["model"].items():
        assert torch.equal(tensor, b["model"][name]), name  # bit for bit
    for key, buffers in a["optimizer"]["state"].items():
        assert torch.equal(buffers["momentum_buffer"], b["optimizer"]["state"][key]["momentum_buffer"])
