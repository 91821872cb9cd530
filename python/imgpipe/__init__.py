"""imgpipe in Python: the C++ input pipeline and TFRecord layer (see docs/python.md).
The work is the C++ library's, bound by the _imgpipe extension; this file gathers the
names and adds what belongs to Python (torch.distributed defaults, JSON-ready state,
context managers, closing loaders at exit)."""

import atexit
import base64
import json
import os

from imgpipe import _imgpipe
from imgpipe._imgpipe import (Batch, HostArray, TFRecordReader, TFRecordWriter, decode_image,
                               parse_example, serialize_example, tune_malloc_for_large_buffers)
from imgpipe.errors import ArgumentTypeError, DataError, Error, InvalidArgument, IoError

__all__ = ["ArgumentTypeError", "Batch", "DataError", "Error", "HostArray", "InvalidArgument", "IoError", "Loader", "TFRecordReader",
           "TFRecordWriter", "convert", "decode_image", "inspect", "parse_example", "serialize_example",
           "tune_malloc_for_large_buffers"]

# Live loaders' threads stop before the interpreter shuts down (an iterator abandoned
# mid-epoch would otherwise keep its pipeline running into the C++ runtime's exit).
atexit.register(_imgpipe.close_all_loaders)


def _distributed_rank_and_size():
    """(rank, world_size) of torch.distributed when it is initialised, else (0, 1)."""
    import sys
    dist = sys.modules.get("torch.distributed")
    if dist is not None and dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


class Loader(_imgpipe.Loader):
    """The C++ image pipeline as an iterable of batches (batch.images, batch.labels).

    Loader(data, batch_size=..., preset="train"|"eval", image_size=..., layout="float32"|
    "uint8", seed=..., deterministic=..., shuffle_buffer=..., threads=..., rank=None,
    world_size=None, last_batch="drop", split="train", image_key=None, label_key=None,
    label_offset=None, start_ahead=True, shuffle=None, stand_ins=True, decode_threads=0,
    draft_decode=..., cache_dir="", cache_bytes=0); the defaults are the C++ library's
    (loader/loader_options.h; see Loader.defaults()). `data` is what `imgpipe bench/train
    --data` accept (docs/data.md, "What --data accepts"): a folder of TFRecord shards
    (imgpipe's, TF-slim's, TFDS's or others), a TFRecord file or glob pattern, or an image
    folder (class sub-folders), each also at an s3://, gs:// or http(s):// URL
    (docs/object-storage.md: the variables read). cache_dir keeps the shards read from
    URLs as local copies there for the epochs and runs after the first, at most
    cache_bytes of them (0: 90% of the free space), least recently used removed first.
    split picks the files of that split when the file names
    have splits. image_key, label_key ("none": no labels) and label_offset are the CLI's
    --image-key, --label-key and --label-offset: None detects them (label_offset 1 for
    TF-slim's 1-based labels, so labels are 0-based). loader.data_layout and
    loader.class_names say what was found. rank/world_size default to torch.distributed's
    when it is initialised, else 0/1. len(loader) is the exact number of batches every
    rank yields per epoch. last_batch: "drop" (whole batches of the smallest shard),
    "partial" (every sample once; a rank may split its last full batch in two) or "pad"
    (full batches; batch.padded marks the repeats of the rank's own samples).
    error_policy="skip" (the default): a record that fails to decode keeps its place,
    filled with a copy of the last good sample before it, marked in batch.padded and
    counted in stats() (the batch stage's "stand_ins"), so len(loader) holds and every
    rank still yields the same number of batches; "fail": the DataError (file and
    offset) is raised at once.
    start_ahead (default True): as an epoch nears its end, start the pass the next
    iteration is expected to ask for (the next epoch after set_epoch), early enough that
    its first batch is ready when this epoch ends, so the threads never idle at an epoch
    boundary; the batches are the same either way. shuffle: None shuffles for the train
    preset only. stand_ins=False drops a record that fails to decode instead.
    decode_threads: threads that decode (0: autotuned within `threads`).
    mixup_alpha, cutmix_alpha (default 0: off): torchvision's batch mixing, one draw per
    batch (seeded by seed, epoch, batch index and rank; state_dict needs nothing more):
    batch.mix says {'kind', 'lambda', 'box'} and batch.mix_lambda the weight of the
    samples' own labels; the partners' labels are batch.labels rolled by one. float32
    batches come mixed; uint8 ones are to be mixed after normalising
    (imgpipe.torch.mix_images). imgpipe.torch.Loader yields mixed one-hot targets.
    tune_malloc (default True): glibc malloc keeps large buffers on its heap and freed
    memory for reuse (imgpipe.tune_malloc_for_large_buffers(), as the imgpipe binary
    does: mmap only above 1 GiB, trim above 1 GiB, one arena for the threads started
    from then on), instead of mapping, faulting in and unmapping every record and
    decoded image, and the shuffle buffer's pages every epoch: 1.3-1.4x the images/s
    here, and one arena another 1.09x (docs/benchmarks.md). It is process-wide: the
    process then returns freed memory to the OS only above 1 GiB; False leaves malloc
    as it is (or preload tcmalloc or jemalloc, which need no tuning).
    Options are checked as Python checks arguments: an unknown keyword or a value of
    the wrong type raises imgpipe.ArgumentTypeError (a TypeError), a bad value, or
    buffers that cannot fit the RAM budget or the machine's memory (loader.memory()
    gives the figures), imgpipe.InvalidArgument (a ValueError); both are imgpipe.Error."""

    def __init__(self, data, *, rank=None, world_size=None, tune_malloc=True, **options):
        if not isinstance(tune_malloc, bool):
            raise ArgumentTypeError(f"Loader: option tune_malloc={tune_malloc!r} has the wrong type "
                                    f"{type(tune_malloc).__name__} (expected bool)")
        if tune_malloc:
            tune_malloc_for_large_buffers()
        default_rank, default_size = _distributed_rank_and_size()
        super().__init__(os.fspath(data),
                         rank=default_rank if rank is None else rank,
                         world_size=default_size if world_size is None else world_size,
                         **options)

    @staticmethod
    def defaults():
        """Every option with its default: the C++ library's, and tune_malloc."""
        return {**_imgpipe.Loader.defaults(), "tune_malloc": True}

    def state_dict(self):
        """The position of the latest pass as a JSON-serialisable dict: epoch, batches
        yielded, the options and a fingerprint of the data, the pipeline's state."""
        state = self._state()
        if state["pipeline"] is not None:
            state["pipeline"] = base64.b64encode(state["pipeline"]).decode("ascii")
        return state

    def load_state_dict(self, state):
        """Continues from `state` at the next iteration; raises imgpipe.InvalidArgument
        naming the option (or the data) that differs when `state` came from another
        loader."""
        state = dict(state)
        if state.get("pipeline") is not None:
            state["pipeline"] = base64.b64decode(state["pipeline"])
        self._load_state(state)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def convert(input, output, *, progress=None, **options):
    """`imgpipe convert --input INPUT --output OUTPUT`: returns the summary dict that
    `imgpipe convert --json` prints. The options are the command's, - written as _:
    split ("train=0.9,validation=0.1"), shard_size ("256MB"), min_shards, threads, seed,
    verify ("header"|"decode"), non_jpeg ("reencode"|"reject"), jpeg_quality,
    jpeg_restart_interval, max_pixels, max_resolution, resume, worker, num_workers,
    finalize, staging_dir (where the shards of an s3:// or gs:// output are written before
    they are uploaded; docs/data.md); an option left out
    keeps the C++ default (convert/converter.h). progress(done, total, bytes_done,
    bytes_total), when given, is called by this thread (at most every 0.1 s, and at the
    end) while the C++ conversion runs without the GIL; an exception it raises is raised
    once the conversion has finished. Bad options raise imgpipe.Error, unreadable files
    imgpipe.IoError; bad images are rejected and counted (rejects.csv)."""
    return json.loads(_imgpipe._convert(os.fspath(input), os.fspath(output), progress, **options))


def inspect(*files, **options):
    """`imgpipe inspect FILES... --json`: a list of the dicts it prints, one per line: for
    a data folder its layout, keys and classes, then one per TFRecord file (records,
    corrupt stretches, features, classes; "ok"). Options: on_error ("fail"|"skip"),
    image_key, label_key, label_offset (as --data's); left out, the C++ defaults.
    A corrupt file is reported in its dict, not raised; a folder that cannot be
    resolved raises imgpipe.Error."""
    lines = _imgpipe._inspect([os.fspath(f) for f in files], **options)
    return [json.loads(line) for line in lines]
