"""examples/train_torch.py: two processes over Gloo on loopback (started here with
torchrun's variables), run uninterrupted and run stopped then resumed mid-epoch end with
the same parameters, bit for bit; so does a run killed (SIGKILL) after a checkpoint."""

import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import time

import pytest
import torch

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "examples" / "train_torch.py"
WORLD_SIZE = 2
TIMEOUT_S = 240


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(data, checkpoint, *extra):
    """Starts the script on WORLD_SIZE processes (each its own process group)."""
    port = free_port()
    args = [sys.executable, str(SCRIPT), "--data", str(data), "--epochs", "2", "--batch-size", "2",
            "--eval-batch-size", "3", "--image-size", "32", "--lr", "0.05", "--seed", "5",
            "--threads", "1", "--torch-threads", "1", "--device", "cpu", "--checkpoint", str(checkpoint),
            *extra]
    procs = []
    try:
        for rank in range(WORLD_SIZE):
            env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                       LOCAL_RANK=str(rank), WORLD_SIZE=str(WORLD_SIZE), LOCAL_WORLD_SIZE=str(WORLD_SIZE),
                       OMP_NUM_THREADS="1")
            procs.append(subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True, start_new_session=True))
    except BaseException:
        kill(procs)
        raise
    return procs


def kill(procs):
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def finish(procs):
    """Waits for the processes; a rank that fails, or TIMEOUT_S, kills the others (a
    rank left alone would wait for its peer). Returns (rank 0's JSON lines, a failure
    message or None)."""
    deadline = time.monotonic() + TIMEOUT_S
    try:
        while any(p.poll() is None for p in procs):
            if any(p.returncode not in (None, 0) for p in procs) or time.monotonic() > deadline:
                break
            time.sleep(0.05)
    finally:
        kill(procs)
    outputs = [p.communicate() for p in procs]
    failure = None
    for rank, (p, (out, err)) in enumerate(zip(procs, outputs)):
        if p.returncode != 0:
            failure = failure or f"rank {rank} exited {p.returncode}:\n{out}\n{err}"
    return [json.loads(line) for line in outputs[0][0].splitlines() if line.startswith("{")], failure


def train(data, checkpoint, *extra):
    """One run to its end; started again on another port if the port was taken meanwhile."""
    for attempt in range(3):
        lines, failure = finish(start(data, checkpoint, *extra))
        if failure is None or "address already in use" not in failure.lower():
            break
    assert failure is None, failure
    return lines


def assert_same_training_state(a, b):
    assert (a["epoch"], a["step"]) == (b["epoch"], b["step"]) == (2, 6)
    assert a["model"].keys() == b["model"].keys()
    for name, tensor in a["model"].items():
        assert torch.equal(tensor, b["model"][name]), name  # bit for bit
    for key, buffers in a["optimizer"]["state"].items():
        assert torch.equal(buffers["momentum_buffer"], b["optimizer"]["state"][key]["momentum_buffer"])


@pytest.fixture(scope="module")
def uninterrupted(tf_datasets, tmp_path_factory):
    """The run without a stop: (rank 0's JSON lines, its final checkpoint)."""
    checkpoint = tmp_path_factory.mktemp("uninterrupted") / "a.pt"
    lines = train(tf_datasets / "tf-slim", checkpoint)
    return lines, torch.load(checkpoint)


def test_a_stopped_and_resumed_ddp_run_ends_where_an_uninterrupted_one_ends(tf_datasets, tmp_path,
                                                                             uninterrupted):
    # 12 train images (6 per rank: 3 steps an epoch), 6 validation (3 per rank)
    data = tf_datasets / "tf-slim"
    whole, final = uninterrupted
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
    assert_same_training_state(final, torch.load(tmp_path / "b.pt"))


def test_a_run_killed_after_a_checkpoint_resumes_to_the_same_end(tf_datasets, tmp_path, uninterrupted):
    data, checkpoint = tf_datasets / "tf-slim", tmp_path / "c.pt"
    procs = start(data, checkpoint, "--checkpoint-every", "1")
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while not checkpoint.exists():  # written atomically: it exists whole or not at all
            assert all(p.poll() is None for p in procs), "a rank ended before its first checkpoint"
            assert time.monotonic() < deadline, "no checkpoint"
            time.sleep(0.01)
    finally:
        kill(procs)  # SIGKILL, mid-run
    for p in procs:
        p.communicate()
    killed = torch.load(checkpoint)
    if killed["step"] == 6 and killed["epoch_done"]:
        pytest.skip("the run ended before it was killed")  # not seen: 5 steps and 2 evaluations were left
    rest = train(data, checkpoint, "--resume", str(checkpoint))
    assert [e["step"] for e in rest if e["event"] == "step"] == list(range(killed["step"] + 1, 7))
    assert_same_training_state(uninterrupted[1], torch.load(checkpoint))
