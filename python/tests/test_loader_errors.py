"""imgpipe's Python conventions for arguments (an unknown keyword or a wrong type: a
TypeError; a bad value: a ValueError; both imgpipe.Error), and the Loader's refusal of
buffers that cannot fit, before anything is allocated."""

import os
import subprocess
import sys
import textwrap

import pytest

import imgpipe
from conftest import RECORDS_PER_FILE, SHARD_FILES

RECORDS = SHARD_FILES * RECORDS_PER_FILE


@pytest.mark.parametrize("options, message", [
    (dict(batchsize=4), "unknown option 'batchsize'"),
    (dict(batch_size="4"), r"batch_size='4' has the wrong type str \(expected int\)"),
    (dict(batch_size=4.0), r"batch_size=4.0 has the wrong type float \(expected int\)"),
    (dict(threads=True), r"threads=True has the wrong type bool \(expected int\)"),
    (dict(start_ahead=1), r"start_ahead=1 has the wrong type int \(expected bool\)"),
    (dict(image_key=3), r"image_key=3 has the wrong type int \(expected str or None\)"),
    (dict(tune_malloc=1), r"tune_malloc=1 has the wrong type int \(expected bool\)"),
])
def test_unknown_keywords_and_wrong_types_are_type_errors(shards, options, message):
    with pytest.raises(TypeError, match=message) as info:
        imgpipe.Loader(str(shards), **options)
    assert isinstance(info.value, imgpipe.ArgumentTypeError)
    assert isinstance(info.value, imgpipe.Error)  # `except imgpipe.Error` still catches it


@pytest.mark.parametrize("options, message", [
    (dict(preset="big"), "preset must be 'train' or 'eval'"),
    (dict(image_size=2), r"image_size must be in \[8, 4096\]"),
    (dict(layout="nchw"), "unknown output layout 'nchw'"),
    (dict(error_policy="ignore"), "unknown error policy 'ignore'"),
    (dict(last_batch="keep"), "last_batch must be"),
    (dict(rank=2, world_size=2), "rank 2 is outside world_size 2"),
    (dict(batch_size=RECORDS + 1), "larger than"),
    (dict(batch_size=0), "batch_size must be positive"),
])
def test_bad_values_are_value_errors(shards, options, message):
    with pytest.raises(ValueError, match=message) as info:
        imgpipe.Loader(str(shards), **options)
    assert isinstance(info.value, imgpipe.InvalidArgument) and isinstance(info.value, imgpipe.Error)


def test_convert_follows_the_same_conventions(tmp_path, shards):
    with pytest.raises(TypeError, match="unknown option 'shards'"):
        imgpipe.convert(str(shards), str(tmp_path / "out"), shards=4)
    with pytest.raises(TypeError, match="threads='two' has the wrong type"):
        imgpipe.convert(str(shards), str(tmp_path / "out"), threads="two")
    with pytest.raises(ValueError, match="--verify: expected header or decode"):
        imgpipe.convert(str(shards), str(tmp_path / "out"), verify="pixels")


def test_set_epoch_and_a_foreign_state_are_value_errors(shards):
    loader = imgpipe.Loader(str(shards), batch_size=4, image_size=32, threads=2)
    with pytest.raises(ValueError, match="epoch must be >= 0"):
        loader.set_epoch(-1)
    other = imgpipe.Loader(str(shards), batch_size=4, image_size=32, threads=2, seed=9)
    with pytest.raises(ValueError, match="the state was made with seed=0, this loader has 9"):
        other.load_state_dict(loader.state_dict())


def test_buffers_over_the_ram_budget_are_refused_with_the_figures(shards):
    # 4 x 3 x 4096 x 4096 float32 = 768 MiB a batch; 3 per pass, two passes.
    with pytest.raises(ValueError) as info:
        imgpipe.Loader(str(shards), batch_size=4, image_size=4096, ram_budget_bytes=1 << 30)
    message = str(info.value)
    for part in ["batch_size=4", "image_size=4096", "768.0 MiB", "ram_budget_bytes", "1.0 GiB", "layout='uint8'"]:
        assert part in message, message
    # The same loader in uint8 at 1024 px fits; memory() gives what was checked.
    loader = imgpipe.Loader(str(shards), batch_size=4, image_size=1024, layout="uint8",
                            ram_budget_bytes=1 << 30)
    need = loader.memory()
    assert need["batch_bytes"] == 4 * 1024 * 1024 * 3 + 4 * 8
    assert need["passes"] == 2 and need["budget_bytes"] == 1 << 30
    assert need["minimum_bytes"] == 2 * (3 * need["batch_bytes"] + need["shuffle_bytes"]) <= 1 << 30


def test_buffers_over_a_ulimit_are_refused_not_bad_alloc(shards):
    # Under `ulimit -v` (RLIMIT_AS) of 6 GiB, a loader of 30 GiB batches used to fail in
    # an allocation (MemoryError: std::bad_alloc); it is now refused, naming the limit.
    script = textwrap.dedent(f"""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))
        import imgpipe
        try:
            imgpipe.Loader({str(shards)!r}, batch_size={RECORDS}, image_size=4096, ram_budget_bytes=1 << 50)
        except ValueError as e:
            print("refused:", e)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    assert "refused:" in out.stdout and "6.0 GiB (physical memory or ulimit)" in out.stdout, out.stdout
