"""imgpipe.convert and imgpipe.inspect: the same summaries as `imgpipe convert --json` and
`imgpipe inspect --json` for the same options (real photos), progress reported by the
calling thread, bad options and missing inputs raising imgpipe's errors."""

import json
import os
import pathlib
import shutil
import subprocess
import threading

import pytest

import imgpipe
from conftest import shared_path

BINARY = os.environ.get("IMGPIPE_BINARY",
                        str(pathlib.Path(__file__).resolve().parents[2] / "build" / "src" / "cli" / "imgpipe"))
PHOTOS = shared_path("images/hymenoptera/val")
OPTIONS = dict(split="train=0.75,validation=0.25", shard_size="2MB", min_shards=2, threads=2, seed=3)
TIMED = ("seconds", "input_mb_per_s")


def cli_json(*args):
    out = subprocess.run([BINARY, *args, "--json"], capture_output=True, text=True)
    assert out.returncode in (0, 2), out.stderr
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


def untimed(summary):
    return {k: v for k, v in summary.items() if k not in TIMED}


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    """(Python's summary, the CLI's summary, Python's output, the CLI's output, progress calls)."""
    base = tmp_path_factory.mktemp("convert")
    calls = []
    summary = imgpipe.convert(PHOTOS, base / "py", progress=lambda *a: calls.append((threading.get_ident(), a)),
                              **OPTIONS)
    cli = cli_json("convert", "--input", str(PHOTOS), "--output", str(base / "cli"), "--split", OPTIONS["split"],
                   "--shard-size", OPTIONS["shard_size"], "--min-shards", "2", "--threads", "2", "--seed", "3")
    return summary, cli[0], base / "py", base / "cli", calls


def test_convert_returns_the_clis_summary(converted):
    summary, cli, py_out, cli_out, _ = converted
    assert untimed(summary) == untimed(cli)
    assert summary["complete"] and summary["inputs"] == len(list(PHOTOS.glob("*/*")))
    assert summary["written"] + summary["rejected"] == summary["inputs"] and summary["written"] > 100
    assert {s["split"] for s in summary["shards"]} == {"train", "validation"}
    for shard in summary["shards"]:
        assert (py_out / shard["file"]).read_bytes() == (cli_out / shard["file"]).read_bytes()


def test_restart_markers_are_the_default_and_0_stores_jpegs_as_given(converted, tmp_path):
    marked = converted[0]
    summary = imgpipe.convert(PHOTOS, tmp_path / "py", jpeg_restart_interval=0, **OPTIONS)
    cli = cli_json("convert", "--input", str(PHOTOS), "--output", str(tmp_path / "cli"), "--split", OPTIONS["split"],
                   "--shard-size", OPTIONS["shard_size"], "--min-shards", "2", "--threads", "2", "--seed", "3",
                   "--jpeg-restart-interval", "0")[0]
    assert untimed(summary) == untimed(cli)
    assert summary["restart_markers_added"] == 0
    assert marked["restart_markers_added"] == marked["written"] == summary["written"]
    assert marked["output_bytes"] > summary["output_bytes"]  # a marker per MCU costs a few %
    for shard in summary["shards"]:
        assert (tmp_path / "py" / shard["file"]).read_bytes() == (tmp_path / "cli" / shard["file"]).read_bytes()
    as_given = json.loads((tmp_path / "py" / "dataset.json").read_text())["options"]
    assert as_given.get("jpeg_restart_interval", 0) == 0
    default = json.loads((converted[2] / "dataset.json").read_text())["options"]
    assert default["jpeg_restart_interval"] == 1


def test_workers_then_finalize_write_what_one_process_writes(converted, tmp_path):
    one_process = converted[2]
    out = tmp_path / "workers"
    for worker in (1, 0):
        part = imgpipe.convert(PHOTOS, out, worker=worker, num_workers=2, **OPTIONS)
        assert not part["complete"] and not (out / "dataset.json").exists()
    with pytest.raises(imgpipe.Error, match="max_resolution|--max-resolution|other options"):
        imgpipe.convert(PHOTOS, out, finalize=True, num_workers=2, max_resolution=64, **OPTIONS)
    final = imgpipe.convert(PHOTOS, out, finalize=True, num_workers=2, **OPTIONS)
    assert final["complete"]
    for shard in final["shards"]:
        assert (out / shard["file"]).read_bytes() == (one_process / shard["file"]).read_bytes()
    assert (out / "dataset.json").read_bytes() == (one_process / "dataset.json").read_bytes()


def test_progress_is_reported_by_the_calling_thread(converted):
    summary, _, _, _, calls = converted
    assert calls and {ident for ident, _ in calls} == {threading.get_ident()}
    done = [a[0] for _, a in calls]
    assert done == sorted(done) and calls[-1][1][0] == calls[-1][1][1] == summary["inputs"]
    assert calls[-1][1][2] == calls[-1][1][3] > 0


def test_inspect_returns_the_clis_lines(converted):
    _, _, py_out, _, _ = converted
    got = imgpipe.inspect(py_out)
    assert got == cli_json("inspect", str(py_out))
    assert got[0]["layout"] == "imgpipe" and all(f["ok"] for f in got[1:])
    shard = py_out / converted[0]["shards"][0]["file"]
    assert imgpipe.inspect(shard, on_error="skip") == cli_json("inspect", str(shard), "--on-error", "skip")


def test_inspect_reports_a_truncated_shard_with_its_offset(converted, tmp_path):
    shard = converted[2] / converted[0]["shards"][0]["file"]
    bad = tmp_path / "bad.tfrecord"
    bad.write_bytes(shard.read_bytes()[:-100])
    [report] = imgpipe.inspect(bad)
    assert report == cli_json("inspect", str(bad))[0]
    assert not report["ok"] and report["path"] == str(bad) and report["errors"][0]["offset"] > 0
    assert report["records"] == converted[0]["shards"][0]["records"] - 1


def test_a_progress_callback_that_raises_raises_after_the_conversion(tmp_path):
    def stop(*_):
        raise KeyError("stop")
    with pytest.raises(KeyError):
        imgpipe.convert(shared_path("images/photos-by-class"), tmp_path / "out", progress=stop, threads=2)
    assert json.loads((tmp_path / "out" / "dataset.json").read_text())  # the conversion finished


@pytest.mark.parametrize("options, message", [
    (dict(jpeg_quality=0), "jpeg-quality"),
    (dict(jpeg_restart_interval=65536), "jpeg-restart-interval"),
    (dict(min_shards=0), "min-shards"),
    (dict(split="train=2"), "1"),
    (dict(shard_size="lots"), "lots"),
    (dict(verify="maybe"), "maybe"),
    (dict(worker=3, num_workers=2), "worker"),
    (dict(threads="two"), "wrong type"),
    (dict(shards=4), "unknown option 'shards'"),
])
def test_bad_options_raise_error(tmp_path, options, message):
    with pytest.raises(imgpipe.Error, match=message):
        imgpipe.convert(PHOTOS, tmp_path / "out", **options)


def test_a_missing_input_raises_and_names_it(tmp_path):
    missing = tmp_path / "no-such-folder"
    with pytest.raises(imgpipe.Error, match=str(missing)):
        imgpipe.convert(missing, tmp_path / "out")
    with pytest.raises(imgpipe.Error, match="on_error|unknown option"):
        imgpipe.inspect(PHOTOS, on_errors="skip")
    [report] = imgpipe.inspect(missing / "x.tfrecord")
    assert not report["ok"] and "x.tfrecord" in report["error"]
