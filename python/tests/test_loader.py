"""imgpipe.Loader: shapes, labels, zero copy, lifetimes, the GIL, clean exit, ranks,
resume, errors. The shards fixture (conftest.py) labels each record with its index."""

import gc
import json
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest
import torch

import imgpipe
from conftest import RECORDS_PER_FILE, SHARD_FILES, shared_path

RECORDS = SHARD_FILES * RECORDS_PER_FILE
SMALL = dict(image_size=32, threads=2)


def labels_of(loader):
    return [np.asarray(b.labels).tolist() for b in loader]


def test_train_batches_have_the_shapes_dtypes_and_labels(shards):
    loader = imgpipe.Loader(str(shards), batch_size=5, **SMALL)
    assert len(loader) == RECORDS // 5
    seen = []
    for batch in loader:
        images, labels = np.asarray(batch.images), np.asarray(batch.labels)
        assert images.shape == (5, 3, 32, 32) and images.dtype == np.float32
        assert labels.shape == (5,) and labels.dtype == np.int64 and len(batch) == 5
        assert np.isfinite(images).all() and images.std() > 0.1  # normalised pixels
        seen += labels.tolist()
    assert len(seen) == len(set(seen)) == len(loader) * 5 and set(seen) <= set(range(RECORDS))


def test_uint8_eval_on_an_image_folder(photos_by_class):
    classes = sorted(p.name for p in photos_by_class.iterdir() if p.is_dir())
    loader = imgpipe.Loader(str(photos_by_class), batch_size=8, preset="eval", layout="uint8", **SMALL)
    assert len(loader) == 47 // 8
    batches = list(loader)
    assert len(batches) == len(loader)
    images = np.asarray(batches[0].images)
    assert images.shape == (8, 32, 32, 3) and images.dtype == np.uint8
    labels = np.concatenate([np.asarray(b.labels) for b in batches])
    assert labels.min() >= 0 and labels.max() < len(classes)
    assert labels.tolist() == sorted(labels.tolist())  # eval: folder order, no shuffle


def test_partial_last_batch_on_one_rank(shards):
    loader = imgpipe.Loader(str(shards), batch_size=5, last_batch="partial", preset="eval", **SMALL)
    sizes = [len(b) for b in loader]
    assert len(loader) == len(sizes) == 5 and sizes[-1] == RECORDS % 5


def test_batches_share_memory_without_a_copy(shards):
    batch = next(iter(imgpipe.Loader(str(shards), batch_size=4, **SMALL)))
    array = np.asarray(batch.images)
    tensor = torch.from_dlpack(batch.images)
    assert array.ctypes.data == tensor.data_ptr() == batch.images.address
    assert np.from_dlpack(batch.images).ctypes.data == array.ctypes.data
    assert np.asarray(batch.labels).ctypes.data == torch.from_dlpack(batch.labels).data_ptr()
    assert torch.from_dlpack(batch.labels).tolist() == np.asarray(batch.labels).tolist()
    array[0, 0, 0, 0] = 123.0  # one memory: a write through NumPy shows in torch
    assert tensor[0, 0, 0, 0].item() == 123.0


def test_a_batch_outlives_its_loader(shards):
    loader = imgpipe.Loader(str(shards), batch_size=4, **SMALL)
    it = iter(loader)
    batch = next(it)
    tensor = torch.from_dlpack(batch.images)
    expected_images = np.array(batch.images, copy=True)
    expected_labels = np.asarray(batch.labels).copy()
    loader.close()
    del loader, it
    gc.collect()
    assert np.array_equal(np.asarray(batch.images), expected_images)
    assert np.array_equal(np.asarray(batch.labels), expected_labels)
    del batch
    gc.collect()
    assert np.array_equal(tensor.numpy(), expected_images)  # the DLPack export holds the buffer


def test_a_closed_loader_refuses_to_iterate(shards):
    with imgpipe.Loader(str(shards), batch_size=4, **SMALL) as loader:
        pass
    with pytest.raises(imgpipe.Error, match="close"):
        iter(loader)


def test_next_releases_the_gil(photos_by_class):
    # With a long switch interval the main thread keeps the GIL unless a call releases
    # it, so the counter moves during a next() only if next() releases the GIL. (Each
    # next() of the epoch is a chance, for a machine too busy to run the counter
    # during one of them.)
    count, stop = [0], threading.Event()

    def counter():
        while not stop.is_set():
            count[0] += 1
            stop.wait(0.0005)

    old = sys.getswitchinterval()
    loader = imgpipe.Loader(str(photos_by_class), batch_size=8, preset="eval", **SMALL)
    thread = threading.Thread(target=counter)
    moved = []
    sys.setswitchinterval(30)
    try:
        thread.start()
        it = iter(loader)  # each batch decodes eight full-size photos
        while True:
            before = count[0]
            if next(it, None) is None:
                break
            moved.append(count[0] > before)
    finally:
        sys.setswitchinterval(old)
        stop.set()
        thread.join()
    loader.close()
    assert len(moved) == len(loader) and any(moved)


# How a script leaves a loader mid-epoch: break out of the loop, exit inside it, or
# leave the iterator to a daemon thread that never frees it.
ABANDON = {
    "break": "for batch in iter(loader):\n    break\n",
    "exit": "for batch in iter(loader):\n    sys.exit(0)\n",
    "daemon": textwrap.dedent("""
        started = threading.Event()
        def hold():
            it = iter(loader)
            next(it)
            started.set()
            threading.Event().wait()
        threading.Thread(target=hold, daemon=True).start()
        started.wait()
        """),
}


@pytest.mark.parametrize("how", sorted(ABANDON))
def test_abandoning_a_loader_mid_epoch_exits_cleanly(photos_by_class, how):
    script = (f"import sys, threading, imgpipe\n"
              f"loader = imgpipe.Loader({str(photos_by_class)!r}, batch_size=2, image_size=32, threads=2)\n"
              + ABANDON[how])
    done = subprocess.run([sys.executable, "-c", script], env=os.environ, timeout=60,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_two_ranks_split_the_epoch_disjointly(shards):
    ranks = [imgpipe.Loader(str(shards), batch_size=4, rank=r, world_size=2, **SMALL) for r in (0, 1)]
    assert len(ranks[0]) == len(ranks[1]) == RECORDS // 2 // 4
    seen = [sum(labels_of(loader), []) for loader in ranks]
    assert not set(seen[0]) & set(seen[1])
    assert sorted(seen[0] + seen[1]) == list(range(RECORDS))


def test_rank_and_world_size_default_to_torch_distributed(shards, monkeypatch):
    assert len(imgpipe.Loader(str(shards), batch_size=4, **SMALL)) == RECORDS // 4  # 0 of 1
    dist = torch.distributed
    monkeypatch.setattr(dist, "is_initialized", lambda: True)
    monkeypatch.setattr(dist, "get_rank", lambda group=None: 1)
    monkeypatch.setattr(dist, "get_world_size", lambda group=None: 2)
    by_default = imgpipe.Loader(str(shards), batch_size=4, preset="eval", **SMALL)
    explicit = imgpipe.Loader(str(shards), batch_size=4, preset="eval", rank=1, world_size=2, **SMALL)
    assert len(by_default) == RECORDS // 2 // 4
    assert labels_of(by_default) == labels_of(explicit)


def test_many_abandoned_iterations_leave_no_threads(shards):
    def threads():
        return len(os.listdir("/proc/self/task"))

    before = threads()
    loader = imgpipe.Loader(str(shards), batch_size=4, **SMALL)
    for _ in range(30):
        it = iter(loader)
        next(it)
        del it  # the pass is freed: its threads are joined
    loader.close()  # the latest pass, which the loader keeps, stops too
    gc.collect()
    assert threads() == before


def test_state_dict_resumes_mid_epoch_exactly(shards):
    def loader():
        return imgpipe.Loader(str(shards), batch_size=4, seed=7, **SMALL)

    reference = loader()
    reference.set_epoch(1)
    expected = [(np.asarray(b.labels).tolist(), np.array(b.images)) for b in reference]

    first = loader()
    first.set_epoch(1)
    it = iter(first)
    for _ in range(2):
        next(it)
    state = json.loads(json.dumps(first.state_dict()))
    first.close()

    resumed = loader()
    resumed.load_state_dict(state)
    resumed.set_epoch(1)  # the same epoch keeps the loaded position
    rest = [(np.asarray(b.labels).tolist(), np.array(b.images)) for b in resumed]
    assert len(rest) == len(expected) - 2
    for (labels, images), (want_labels, want_images) in zip(rest, expected[2:]):
        assert labels == want_labels and np.array_equal(images, want_images)


def test_the_same_seed_gives_the_same_batches_on_any_thread_count(shards):
    def batches(threads):
        loader = imgpipe.Loader(str(shards), batch_size=4, seed=3, image_size=32, threads=threads)
        return [(np.asarray(b.labels).tolist(), np.array(b.images)) for b in loader]

    one = batches(1)
    for threads in (2, 4):
        other = batches(threads)
        assert [labels for labels, _ in other] == [labels for labels, _ in one]
        assert all(np.array_equal(a, b) for (_, a), (_, b) in zip(other, one))


def test_a_state_taken_after_set_epoch_starts_that_epoch(shards):
    loader = imgpipe.Loader(str(shards), batch_size=4, **SMALL)
    list(loader)
    assert loader.state_dict()["batches"] == len(loader)  # epoch 0 is over
    loader.set_epoch(1)
    state = loader.state_dict()
    assert (state["epoch"], state["batches"], state["pipeline"]) == (1, 0, None)
    resumed = imgpipe.Loader(str(shards), batch_size=4, **SMALL)
    resumed.load_state_dict(state)
    assert resumed.epoch == 1 and len(list(resumed)) == len(loader)


def test_a_mid_epoch_state_then_another_epoch_gives_that_whole_epoch(shards):
    loader = imgpipe.Loader(str(shards), batch_size=4, **SMALL)
    it = iter(loader)
    next(it)
    state = loader.state_dict()
    loader.close()
    resumed = imgpipe.Loader(str(shards), batch_size=4, **SMALL)
    resumed.load_state_dict(state)
    resumed.set_epoch(1)  # another epoch: the loaded position is dropped, batches too
    assert len(list(resumed)) == len(resumed)


def test_a_state_from_other_options_is_refused(shards):
    loader = imgpipe.Loader(str(shards), batch_size=4, **SMALL)
    next(iter(loader))
    state = loader.state_dict()
    with pytest.raises(imgpipe.Error, match="batch_size=4"):
        imgpipe.Loader(str(shards), batch_size=3, **SMALL).load_state_dict(state)
    with pytest.raises(imgpipe.Error, match="no 'data'"):
        loader.load_state_dict({k: v for k, v in state.items() if k != "data"})


def test_a_state_from_other_data_is_refused(shards, tmp_path):
    loader = imgpipe.Loader(str(shards), batch_size=4, **SMALL)
    next(iter(loader))
    state = loader.state_dict()
    fewer = tmp_path / "fewer"
    fewer.mkdir()
    first = sorted(shards.glob("*.tfrecord"))[0]
    (fewer / first.name).write_bytes(first.read_bytes())
    with pytest.raises(imgpipe.Error, match="other data"):
        imgpipe.Loader(str(fewer), batch_size=4, **SMALL).load_state_dict(state)


def corrupt_copy(shards, tmp_path):
    """The shards with a data byte of record 3 of the first file flipped; returns the
    folder, the corrupt file and the record's offset."""
    folder = tmp_path / "corrupt"
    folder.mkdir()
    for f in shards.glob("*.tfrecord"):
        (folder / f.name).write_bytes(f.read_bytes())
    bad = sorted(folder.glob("*.tfrecord"))[0]
    reader = imgpipe.TFRecordReader(str(bad))
    for _ in range(4):
        next(reader)
    offset = reader.offset
    data = bytearray(bad.read_bytes())
    data[offset + 12 + 100] ^= 0xFF
    bad.write_bytes(bytes(data))
    return folder, bad, offset


def test_a_corrupt_shard_raises_data_error_or_is_skipped(shards, tmp_path):
    folder, bad, offset = corrupt_copy(shards, tmp_path)
    with pytest.raises(imgpipe.DataError) as e:
        imgpipe.Loader(str(folder), batch_size=4, error_policy="fail", **SMALL)
    assert e.value.path == str(bad) and e.value.offset == offset

    with imgpipe.Loader(str(folder), batch_size=4, error_policy="skip", **SMALL) as loader:
        assert len(loader) == (RECORDS - 1) // 4
        seen = sum(labels_of(loader), [])
        assert 3 not in seen and len(seen) == len(loader) * 4
        assert sum(stage["errors"] for stage in loader.stats()) == 1
        assert "bottleneck: " in loader.report()


def test_an_undecodable_image_raises_data_error_while_iterating(tmp_path):
    photo = sorted(shared_path("images/hymenoptera/val").glob("*/*.jpg"))[0].read_bytes()
    path = tmp_path / "train-00000-of-00001.tfrecord"
    with imgpipe.TFRecordWriter(str(path)) as w:
        offsets = [w.write(imgpipe.serialize_example(
            {"image/encoded": b"not an image" if i == 5 else photo, "image/class/label": [i]}))
            for i in range(8)]
    loader = imgpipe.Loader(str(tmp_path), batch_size=2, preset="eval", error_policy="fail", **SMALL)
    with pytest.raises(imgpipe.DataError) as e:
        list(loader)
    assert e.value.path == str(path) and e.value.offset == offsets[5]


def test_wrong_options_raise(shards):
    with pytest.raises(imgpipe.Error, match="preset"):
        imgpipe.Loader(str(shards), preset="fast")
    with pytest.raises(imgpipe.Error, match="layout"):
        imgpipe.Loader(str(shards), layout="float16")
    with pytest.raises(imgpipe.Error, match="rank"):
        imgpipe.Loader(str(shards), rank=2, world_size=2)
    with pytest.raises(imgpipe.Error, match="larger than"):
        imgpipe.Loader(str(shards), batch_size=RECORDS + 1)
    with pytest.raises(imgpipe.Error, match="unknown option 'batchsize'"):
        imgpipe.Loader(str(shards), batchsize=4)
    with pytest.raises(imgpipe.Error, match="wrong type"):
        imgpipe.Loader(str(shards), batch_size="4")
    with pytest.raises(imgpipe.Error, match="no files|match"):
        imgpipe.Loader(str(shards / "nothing-*.tfrecord"))
