"""imgpipe.Loader over several ranks in one process (last_batch drop, partial and pad:
equal len, disjoint and complete shards, padding marked), resuming mid-epoch under each
policy, flat memory over thousands of batches, and batches equal to the C++
pipeline's (the loader_batches tool, IMGPIPE_LOADER_BATCHES)."""

import io
import json
import math
import os
import subprocess

import numpy as np
import pytest
from PIL import Image

import imgpipe

TINY = dict(image_size=8, threads=2)
WORLD = 4


def write_labelled_set(folder, n, files=2, side=16):
    """n records in `files` TFRecord files; record i: a side x side JPEG made by PIL
    (colour from i) with image/class/label i, so a label names its sample."""
    folder.mkdir(parents=True, exist_ok=True)
    per_file = (n + files - 1) // files
    for f in range(files):
        with imgpipe.TFRecordWriter(str(folder / f"train-{f:05d}-of-{files:05d}.tfrecord")) as w:
            for i in range(f * per_file, min(n, (f + 1) * per_file)):
                jpeg = io.BytesIO()
                Image.new("RGB", (side, side), (i * 37 % 256, i * 91 % 256, i * 13 % 256)).save(jpeg, "JPEG")
                w.write(imgpipe.serialize_example({"image/encoded": jpeg.getvalue(), "image/class/label": [i]}))
    return folder


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    """labelled(n): a folder of n records labelled 0..n-1 (made once per n)."""
    root = tmp_path_factory.mktemp("labelled")
    made = {}

    def make(n):
        if n not in made:
            made[n] = write_labelled_set(root / f"n{n}", n)
        return made[n]
    return make


def epoch_of(loader):
    """[(labels, padded)] of one epoch, as lists."""
    return [(np.asarray(b.labels).tolist(), np.asarray(b.padded).tolist()) for b in loader]


def ranks_of(data, **options):
    return [imgpipe.Loader(str(data), rank=r, world_size=WORLD, **TINY, **options) for r in range(WORLD)]


# (records, batch_size): divisible by WORLD * batch_size, not divisible, a shard of a
# whole number of batches beside a larger one (partial splits a batch), batch_size 1,
# and shards smaller than a batch.
SIZES = [(32, 4), (27, 4), (33, 4), (26, 3), (28, 1), (30, 1), (6, 4)]


@pytest.mark.parametrize("n,b", SIZES)
@pytest.mark.parametrize("preset", ["eval", "train"])
def test_ranks_cover_the_data_under_each_policy(labelled, n, b, preset):
    data = labelled(n)
    for policy in ["drop", "partial", "pad"]:
        if policy == "drop" and n // WORLD < b:
            continue  # no whole batch on the smallest shard: refused (see below)
        if policy == "partial" and b == 1 and n % WORLD:
            with pytest.raises(imgpipe.Error, match="'pad' or 'drop'"):
                ranks_of(data, batch_size=b, last_batch=policy, preset=preset, seed=5)
            continue
        loaders = ranks_of(data, batch_size=b, last_batch=policy, preset=preset, seed=5)
        lengths = {len(loader) for loader in loaders}
        assert len(lengths) == 1, (policy, lengths)  # equal len, as DDP needs
        epochs = [epoch_of(loader) for loader in loaders]
        assert all(len(e) == len(loaders[0]) for e in epochs), (policy, [len(e) for e in epochs])
        real = [[l for labels, padded in e for l, p in zip(labels, padded) if not p] for e in epochs]
        everything = sum(real, [])
        assert len(everything) == len(set(everything)), (policy, "a sample on two ranks or twice")
        assert set(everything) <= set(range(n))
        sizes = [len(labels) for e in epochs for labels, _ in e]
        assert all(1 <= s <= b for s in sizes), (policy, sizes)
        if policy == "drop":
            assert sizes == [b] * (WORLD * len(loaders[0]))
            assert len(everything) == WORLD * len(loaders[0]) * b
        elif policy == "partial":
            assert sorted(everything) == list(range(n))  # complete, once
            assert len(loaders[0]) == math.ceil(math.ceil(n / WORLD) / b)
        else:
            assert sorted(everything) == list(range(n))
            assert sizes == [b] * (WORLD * len(loaders[0]))  # full batches
            for e, own in zip(epochs, real):
                padding = [l for labels, padded in e for l, p in zip(labels, padded) if p]
                assert set(padding) <= set(own)  # repeats of the rank's own samples
                assert len(padding) + len(own) == len(loaders[0]) * b


def test_partial_splits_the_last_full_batch_of_a_smaller_shard(labelled):
    # 33 records on 4 ranks: shards of 8, 8, 8 and 9; with batches of 4 the last rank
    # needs 3 batches, so the others split their second batch in two.
    loaders = ranks_of(labelled(33), batch_size=4, last_batch="partial", preset="eval")
    assert [len(loader) for loader in loaders] == [3] * WORLD
    sizes = [[len(labels) for labels, _ in epoch_of(loader)] for loader in loaders]
    assert sizes == [[4, 2, 2], [4, 2, 2], [4, 2, 2], [4, 4, 1]]


def test_pad_marks_the_padding_in_each_batch(labelled):
    loaders = ranks_of(labelled(27), batch_size=4, last_batch="pad", preset="eval")
    epochs = [epoch_of(loader) for loader in loaders]
    # Shards of 6, 7, 7, 7 padded to 8: the padding repeats each shard's first samples.
    for epoch in epochs:
        labels = sum((l for l, _ in epoch), [])
        padded = sum((p for _, p in epoch), [])
        real = padded.count(0)
        assert padded == [0] * real + [1] * (8 - real)
        assert labels[real:] == labels[:8 - real]
    batch = next(iter(loaders[0]))
    padded = np.asarray(batch.padded)
    assert padded.dtype == np.uint8 and padded.shape == (4,)


def test_partial_with_batch_size_one_and_uneven_shards_is_refused(labelled):
    with pytest.raises(imgpipe.Error, match="batch_size 1"):
        imgpipe.Loader(str(labelled(27)), batch_size=1, rank=0, world_size=WORLD, last_batch="partial", **TINY)
    with pytest.raises(imgpipe.Error, match="last_batch"):
        imgpipe.Loader(str(labelled(27)), batch_size=1, last_batch="fill", **TINY)


@pytest.mark.parametrize("policy", ["drop", "partial", "pad"])
def test_state_dict_resumes_every_cut_under_each_policy(labelled, policy):
    data = labelled(33)

    def loader(rank):
        return imgpipe.Loader(str(data), batch_size=4, rank=rank, world_size=WORLD, last_batch=policy,
                              seed=3, **TINY)

    for rank in (0, 3):
        reference = loader(rank)
        reference.set_epoch(2)
        expected = [(np.asarray(b.labels).tolist(), np.asarray(b.padded).tolist(), np.array(b.images))
                    for b in reference]
        for cut in range(len(expected) + 1):
            first = loader(rank)
            first.set_epoch(2)
            it = iter(first)
            for _ in range(cut):
                next(it)
            state = json.loads(json.dumps(first.state_dict()))
            first.close()
            resumed = loader(rank)
            resumed.load_state_dict(state)
            rest = [(np.asarray(b.labels).tolist(), np.asarray(b.padded).tolist(), np.array(b.images))
                    for b in resumed]
            assert len(rest) == len(expected) - cut, (rank, cut)
            for got, want in zip(rest, expected[cut:]):
                assert got[0] == want[0] and got[1] == want[1] and np.array_equal(got[2], want[2]), (rank, cut)


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_memory_and_pool_stay_flat_over_thousands_of_batches(labelled):
    loader = imgpipe.Loader(str(labelled(512)), batch_size=2, image_size=32, threads=2, shuffle_buffer=64)
    per_epoch = len(loader)  # 256
    batches = 0
    allocations = []

    def run(epoch):
        nonlocal batches
        loader.set_epoch(epoch)
        for i, batch in enumerate(loader):
            np.asarray(batch.images).sum()
            batches += 1
            if epoch % 3 == 2 and i == per_epoch // 2:
                break  # abandoned mid-epoch
        allocations.append(loader.pool_stats()["allocations"])

    for epoch in range(3):  # warm-up: the allocator and the pool reach their size
        run(epoch)
    warm_rss = rss_bytes()
    warm_allocations = max(allocations)
    for epoch in range(3, 15):
        run(epoch)
    assert batches > 3000
    growth = rss_bytes() - warm_rss
    # A batch is 2 x 3 x 32 x 32 float32 = 24 KiB: keeping even a tenth of the ~3,000
    # batches since the warm-up would add 7 MiB.
    assert growth < 6 * 2**20, f"RSS grew by {growth / 2**20:.1f} MiB over {batches} batches"
    # The passes share the loader's pool, which never holds more buffers than were out at
    # once: one pass's, or two passes' while an abandoned pass's batches are still out.
    assert max(allocations) <= 2 * allocations[0] + 2, allocations
    assert warm_allocations < per_epoch // 4, allocations  # buffers are reused, not made per batch
    loader.close()


def test_epochs_reuse_the_last_epochs_buffers(labelled):
    # The passes share the loader's pool: later epochs' batches are earlier epochs'
    # memory handed out again, not new allocations (each a fresh mmap, whose pages fault
    # in as the batch is written). How many buffers are out at once depends on timing, so
    # the check is over several epochs: the pool handed out a buffer for every batch of
    # every epoch (a pool per pass would count only the latest pass's), and allocated
    # fewer than one epoch has batches.
    loader = imgpipe.Loader(str(labelled(64)), batch_size=4, image_size=32, threads=2,
                            start_ahead=False)  # one pass at a time (two overlapping hold more)
    epochs = 5
    batches = 0
    for epoch in range(epochs):
        loader.set_epoch(epoch)
        for batch in loader:
            np.asarray(batch.images).sum()
            batches += 1
        del batch
    stats = loader.pool_stats()
    assert batches == epochs * 16
    assert stats["allocations"] + stats["reuses"] >= batches, stats
    assert stats["allocations"] < 16, stats
    loader.close()


LAYOUTS = [("train", "float32"), ("train", "uint8"), ("eval", "float32"), ("eval", "uint8")]


def pipeline_epoch(data, out, epoch, **options):
    """The C++ pipeline's epoch for these Loader options: (sizes, labels, image bytes)."""
    tool = os.environ.get("IMGPIPE_LOADER_BATCHES")
    if not tool:
        pytest.skip("IMGPIPE_LOADER_BATCHES is not set (CTest sets it to the loader_batches tool)")
    args = [tool, str(data), str(out), f"epoch={epoch}"] + [f"{k}={v}" for k, v in options.items()]
    subprocess.run(args, check=True)
    return (np.fromfile(f"{out}.sizes", np.int64).tolist(), np.fromfile(f"{out}.labels", np.int64).tolist(),
            open(f"{out}.images", "rb").read())


def loader_epoch(data, epoch, **options):
    loader = imgpipe.Loader(str(data), **options)
    loader.set_epoch(epoch)
    batches = list(loader)
    return ([len(b) for b in batches], sum((np.asarray(b.labels).tolist() for b in batches), []),
            b"".join(np.asarray(b.images).tobytes() for b in batches))


@pytest.mark.parametrize("preset,layout", LAYOUTS)
def test_batches_equal_the_cpp_pipelines(shards, tmp_path, preset, layout):
    options = dict(batch_size=5, preset=preset, layout=layout, image_size=32, seed=11, deterministic=True,
                   threads=2, last_batch="partial")
    want = pipeline_epoch(shards, tmp_path / "cpp", 1, **options)
    got = loader_epoch(shards, 1, **options)
    assert got[0] == want[0] and got[1] == want[1]
    assert len(got[2]) == len(want[2]) > 0 and got[2] == want[2]


@pytest.mark.parametrize("policy", ["partial", "pad"])
def test_rank_batches_equal_the_cpp_pipelines(labelled, tmp_path, policy):
    options = dict(batch_size=4, image_size=16, seed=2, threads=2, rank=1, world_size=WORLD, last_batch=policy)
    want = pipeline_epoch(labelled(33), tmp_path / "cpp", 0, **options)
    got = loader_epoch(labelled(33), 0, **options)
    assert got == want


def test_pad_with_a_bad_record_marks_its_stand_in(tmp_path):
    data = write_labelled_set(tmp_path / "set", 12, files=1)
    with imgpipe.TFRecordWriter(str(tmp_path / "set" / "train-00001-of-00002.tfrecord")) as w:
        w.write(imgpipe.serialize_example({"image/encoded": b"not an image", "image/class/label": [12]}))
    options = dict(batch_size=2, rank=1, world_size=2, last_batch="pad", preset="eval", **TINY)
    loader = imgpipe.Loader(str(data), error_policy="skip", **options)
    epoch = epoch_of(loader)
    assert len(epoch) == len(loader) and all(len(labels) == 2 for labels, _ in epoch)
    assert 12 not in [l for labels, _ in epoch for l in labels]  # its stand-in copies a good sample
    assert sum(p for _, padded in epoch for p in padded) >= 1
    assert sum(stage["stand_ins"] for stage in loader.stats()) >= 1
    with pytest.raises(imgpipe.DataError) as e:
        list(imgpipe.Loader(str(data), error_policy="fail", **options))
    assert e.value.path.endswith("train-00001-of-00002.tfrecord")
