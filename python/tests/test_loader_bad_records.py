"""Bad records under error_policy="skip" do not break epochs: a record that fails to
decode keeps its place, filled with a copy of the last good sample (a stand-in), marked
in batch.padded and counted in stats(); len(loader) holds on every rank, for every
last_batch, and a state saved at any batch resumes to the same batches. Under "fail"
the DataError names the file and the record's offset."""

import io

import numpy as np
import pytest
from PIL import Image

import imgpipe

TINY = dict(image_size=8, threads=2)


def write_set_with_bad_records(folder, n, bad, files=2):
    """n records in `files` TFRecord files, record i labelled i: a 16x16 JPEG, or for i
    in `bad` bytes that are no image. Returns {i: (file, offset)} of the bad ones."""
    folder.mkdir(parents=True, exist_ok=True)
    per_file = (n + files - 1) // files
    where = {}
    for f in range(files):
        path = folder / f"train-{f:05d}-of-{files:05d}.tfrecord"
        with imgpipe.TFRecordWriter(str(path)) as w:
            for i in range(f * per_file, min(n, (f + 1) * per_file)):
                if i in bad:
                    encoded = b"not an image, record %d" % i
                else:
                    jpeg = io.BytesIO()
                    Image.new("RGB", (16, 16), (i * 37 % 256, i * 91 % 256, i * 13 % 256)).save(jpeg, "JPEG")
                    encoded = jpeg.getvalue()
                offset = w.write(imgpipe.serialize_example({"image/encoded": encoded, "image/class/label": [i]}))
                if i in bad:
                    where[i] = (str(path), offset)
    return folder, where


# 30 records in 2 files of 15: bad ones at the start of a file, in the middle, and the
# last record of each file (the end of an epoch for some ranks).
N = 30
BAD = {0, 7, 8, 14, 15, 29}


@pytest.fixture(scope="module")
def bad_set(tmp_path_factory):
    return write_set_with_bad_records(tmp_path_factory.mktemp("bad") / "set", N, BAD)


def epoch_of(loader):
    """[(labels, padded)] of one epoch, as lists."""
    return [(np.asarray(b.labels).tolist(), np.asarray(b.padded).tolist()) for b in loader]


def stand_ins_of(loader):
    return sum(stage.get("stand_ins", 0) for stage in loader.stats())


@pytest.mark.parametrize("world", [1, 2, 3, 4])
@pytest.mark.parametrize("last_batch", ["drop", "partial", "pad"])
@pytest.mark.parametrize("preset", ["eval", "train"])
def test_bad_records_keep_every_rank_s_epoch_whole(bad_set, world, last_batch, preset):
    data, _ = bad_set
    batch_size = 3
    loaders = [imgpipe.Loader(str(data), batch_size=batch_size, rank=r, world_size=world, last_batch=last_batch,
                              preset=preset, seed=4, error_policy="skip", **TINY) for r in range(world)]
    lengths = {len(loader) for loader in loaders}
    assert len(lengths) == 1
    epochs = [epoch_of(loader) for loader in loaders]  # no rank raises at its epoch's end
    assert [len(e) for e in epochs] == [len(loaders[0])] * world
    unmarked, stand_ins = [], 0
    for loader, epoch in zip(loaders, epochs):
        for labels, padded in epoch:
            if last_batch != "partial":
                assert len(labels) == batch_size
            unmarked += [label for label, p in zip(labels, padded) if not p]
            # A marked sample is a copy of a good record: never a bad record's label.
            assert not {label for label, p in zip(labels, padded) if p} & BAD
        stand_ins += stand_ins_of(loader)
    assert not set(unmarked) & BAD
    if last_batch == "partial":  # every record once: the good ones unmarked, the bad ones stood in for
        assert sorted(unmarked) == sorted(set(range(N)) - BAD)
        assert stand_ins == len(BAD)
    else:
        assert len(unmarked) == len(set(unmarked))  # no good record twice unmarked
        if last_batch == "drop":  # some records are not read; "pad" repeats bad ones too
            assert stand_ins <= len(BAD)


def test_stand_ins_copy_the_last_good_sample_before_them(bad_set):
    data, _ = bad_set
    # Unshuffled, one rank: a stand-in is a copy of the last good sample before it in
    # the pipeline's order (the first good one when none came before): its label and
    # its pixels are that sample's.
    loader = imgpipe.Loader(str(data), batch_size=4, preset="eval", shuffle_buffer=0, last_batch="partial",
                            error_policy="skip", **TINY)
    samples = []
    for batch in loader:
        images = np.asarray(batch.images)
        samples += [(label, padded, images[i].tobytes()) for i, (label, padded) in
                    enumerate(zip(np.asarray(batch.labels).tolist(), np.asarray(batch.padded).tolist()))]
    assert len(samples) == N and sum(p for _, p, _ in samples) == len(BAD)
    good = [(label, pixels) for label, padded, pixels in samples if not padded]
    last = good[0]
    for label, padded, pixels in samples:
        if padded:
            assert (label, pixels) == last
        else:
            last = (label, pixels)


@pytest.mark.parametrize("last_batch", ["partial", "pad"])
def test_a_state_saved_at_any_batch_resumes_exactly(bad_set, last_batch):
    data, _ = bad_set
    options = dict(batch_size=2, rank=1, world_size=2, last_batch=last_batch, preset="train", seed=9,
                   error_policy="skip", **TINY)

    def batches(loader, skip=0):
        out = []
        for k, b in enumerate(loader):
            if k >= skip:
                out.append((np.asarray(b.labels).tolist(), np.asarray(b.padded).tolist(),
                            np.asarray(b.images).tobytes()))
        return out

    loader = imgpipe.Loader(str(data), **options)
    loader.set_epoch(1)
    want = batches(loader)
    assert any(any(p) for _, p, _ in want)  # the rank meets bad records
    for cut in range(len(want) + 1):
        first = imgpipe.Loader(str(data), **options)
        first.set_epoch(1)
        it = iter(first)
        for _ in range(cut):
            next(it)
        state = first.state_dict()
        second = imgpipe.Loader(str(data), **options)
        second.load_state_dict(state)
        assert batches(second) == want[cut:], f"cut at {cut}"


def test_fail_policy_names_the_bad_record(bad_set):
    data, where = bad_set
    loader = imgpipe.Loader(str(data), batch_size=4, preset="eval", shuffle_buffer=0, error_policy="fail", **TINY)
    with pytest.raises(imgpipe.DataError) as e:
        list(loader)
    assert (e.value.path, e.value.offset) in where.values()
