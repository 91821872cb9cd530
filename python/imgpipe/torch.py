"""imgpipe.torch.Loader: imgpipe.Loader's batches as (images, labels) torch tensors, on
the CPU without a copy, or on a CUDA device (docs/python.md, "imgpipe.torch.Loader").

On the CPU (device=None or "cpu") the tensors share the pipeline's buffers
(torch.from_dlpack). On CUDA every batch is copied into one of two pinned host staging
buffers, then to the device on a side stream that the consuming stream waits on, one
batch ahead of the one yielded; a uint8 (NHWC) batch is normalised on the device to
float32 NCHW with the preset's mean and std, which come from the C++ presets
(imgpipe._imgpipe.presets()).

Why staging buffers and not cudaHostRegister on the loader's buffers: those buffers
belong to the C++ pipeline's buffer pool, which reuses and frees them when Python no
longer holds the batch; registering each one costs about what copying it does and it
would have to be unregistered before C++ frees it, which Python cannot see. Two pinned
buffers allocated once cost one host memcpy per batch and nothing else.

With mixup_alpha or cutmix_alpha > 0 the loader yields (images, targets): targets are
torchvision's mixed one-hot targets, float32 N x num_classes, built from the batch's
labels and its draw (batch.mix, one draw per batch from the C++ loader): float32 batches
come mixed from C++, uint8 ones are mixed here on the device after normalising
(mix_images), with the same draw.

What is here and not in C++: only what must run on the GPU on tensors (normalize,
mix_images, mix_targets), as the module imgpipe._imgpipe has no libtorch. The draws,
the mean and std, and the host-side normalising and mixing of the float32 layout are
C++'s (loader/batch_mixing.h, image/presets.h, image/transforms.h), the same ones
imgpipe train uses (train/batch_tensors.h)."""

import base64

import numpy as np
import torch

from imgpipe import Loader as _HostLoader
from imgpipe import _imgpipe
from imgpipe.errors import Error

__all__ = ["Loader", "batch_tensors", "mix_images", "mix_targets", "normalize", "preset_mean_std"]


def preset_mean_std(preset):
    """(mean, std) of `preset` ("train" or "eval"): per-channel lists of 3 floats, the
    float32 layout's normalisation in the C++ presets."""
    presets = _imgpipe.presets()
    if preset not in presets:
        raise Error(f"imgpipe.torch: preset must be one of {sorted(presets)}, not {preset!r}")
    return presets[preset]["mean"], presets[preset]["std"]


def normalize(images, mean, std):
    """uint8 N x H x W x 3 images (any device) -> float32 N x 3 x H x W, (x / 255 - mean)
    / std per channel in float32: the arithmetic of the float32 layout (image/transforms.h
    NormalizeToChw), so both layouts give the same batch."""
    if images.dtype != torch.uint8 or images.dim() != 4 or images.shape[3] != 3:
        raise Error(f"imgpipe.torch.normalize: needs uint8 N x H x W x 3, not {images.dtype} {tuple(images.shape)}")
    mean = torch.as_tensor(mean, dtype=torch.float32, device=images.device).view(1, 3, 1, 1)
    std = torch.as_tensor(std, dtype=torch.float32, device=images.device).view(1, 3, 1, 1)
    out = images.permute(0, 3, 1, 2).to(torch.float32).div_(255.0)
    return out.sub_(mean).div_(std).contiguous()


def mix_images(images, mix):
    """Applies a batch's draw (imgpipe.Batch.mix; None: nothing) in place to float
    N x C x H x W `images` on any device, as torchvision's RandomMixup / RandomCutmix do
    with the partner of sample i being sample i - 1 (roll(1, 0)); returns `images`. The
    C++ loader does the same to float32 batches."""
    if mix is None or mix["kind"] == "none":
        return images
    rolled = images.roll(1, 0)
    if mix["kind"] == "mixup":
        rolled.mul_(1.0 - mix["lambda"])
        return images.mul_(mix["lambda"]).add_(rolled)
    y0, y1, x0, x1 = mix["box"]
    images[:, :, y0:y1, x0:x1] = rolled[:, :, y0:y1, x0:x1]
    return images


def mix_targets(labels, mix, num_classes):
    """float32 N x num_classes targets of int64 `labels` under a batch's draw (None:
    one-hot): lambda * one_hot(labels) + (1 - lambda) * one_hot(labels.roll(1, 0)), as
    torchvision's reference makes them; rows sum to 1."""
    if labels.numel() and (int(labels.min()) < 0 or int(labels.max()) >= num_classes):
        raise Error(f"imgpipe.torch: labels must be in [0, {num_classes}) to make mixed targets "
                    f"(got {int(labels.min())}..{int(labels.max())}); pass num_classes=")
    targets = torch.nn.functional.one_hot(labels, num_classes).to(torch.float32)
    if mix is None or mix["kind"] == "none":
        return targets
    rolled = targets.roll(1, 0).mul_(1.0 - mix["lambda"])
    return targets.mul_(mix["lambda"]).add_(rolled)


def batch_tensors(batch):
    """An imgpipe.Batch's (images, labels) as CPU tensors sharing its buffer (DLPack)."""
    return torch.from_dlpack(batch.images), torch.from_dlpack(batch.labels)


def _device_of(device):
    """None for the CPU path, else a checked torch.device("cuda", N)."""
    if device is None:
        return None
    try:
        device = torch.device(device)
    except (RuntimeError, TypeError) as e:
        raise Error(f"imgpipe.torch.Loader: device={device!r} is not a device name ({e})") from None
    if device.type == "cpu":
        return None
    if device.type != "cuda":
        raise Error(f"imgpipe.torch.Loader: device must be None, 'cpu', 'cuda' or 'cuda:N', not {str(device)!r}")
    if not torch.cuda.is_available():
        raise Error(f"imgpipe.torch.Loader: device={str(device)!r} but torch.cuda.is_available() is False "
                    f"(torch {torch.__version__}, built for CUDA {torch.version.cuda}): use device=None")
    return torch.device("cuda", device.index if device.index is not None else torch.cuda.current_device())


class _Pending:
    """A batch taken from the pipeline (staged, maybe still copying) but not yet yielded."""

    def __init__(self, images, labels, ready, host):
        self.images, self.labels, self.ready = images, labels, ready
        self.host = host  # (images, labels, mix) on the host, for state_dict


class _CudaFeeder:
    """Copies host batches to `device` through two pinned staging buffers on a side
    stream; finish() makes the current stream wait for the copy and normalises."""

    def __init__(self, device, mean_std):
        self.device = device
        # None: the batches are float32 already; else on the device once, not per batch
        self.mean_std = None if mean_std is None else [torch.tensor(x, device=device) for x in mean_std]
        self.stream = torch.cuda.Stream(device)
        self.slots = [None, None]  # (pinned images, pinned labels, event of its last copy)
        self.turn = 0

    def _slot(self, images, labels):
        slot = self.slots[self.turn]
        if slot is not None:
            slot[2].synchronize()  # its previous copy has left the host buffer
        if slot is None or slot[0].numel() < images.numel() or slot[1].numel() < labels.numel():
            slot = (torch.empty(images.numel(), dtype=images.dtype).pin_memory(),
                    torch.empty(labels.numel(), dtype=labels.dtype).pin_memory(), torch.cuda.Event())
            self.slots[self.turn] = slot
        self.turn = 1 - self.turn
        return slot

    def start(self, host):
        """Stages host (images, labels) and starts their copy: a _Pending (None for None)."""
        if host is None:
            return None
        images, labels, _ = host
        pinned_images, pinned_labels, event = self._slot(images, labels)
        staged_images = pinned_images[:images.numel()].view(images.shape)
        staged_labels = pinned_labels[:labels.numel()].view(labels.shape)
        staged_images.copy_(images)
        staged_labels.copy_(labels)
        with torch.cuda.device(self.device), torch.cuda.stream(self.stream):
            gpu_images = staged_images.to(self.device, non_blocking=True)
            gpu_labels = staged_labels.to(self.device, non_blocking=True)
            event.record(self.stream)
        return _Pending(gpu_images, gpu_labels, event, host)

    def finish(self, pending):
        """(images, labels) usable on the current stream, normalised when uint8."""
        current = torch.cuda.current_stream(self.device)
        current.wait_event(pending.ready)
        pending.images.record_stream(current)  # allocated on the side stream
        pending.labels.record_stream(current)
        images = pending.images
        if self.mean_std is not None:
            images = normalize(images, *self.mean_std)
        return images, pending.labels


def _encode_host_batch(images, labels, mix):
    return {"images": base64.b64encode(images.numpy().tobytes()).decode("ascii"),
            "images_shape": list(images.shape), "images_dtype": str(images.numpy().dtype),
            "labels": base64.b64encode(labels.numpy().tobytes()).decode("ascii"),
            "mix": None if mix is None else {**mix, "box": list(mix["box"])}}


def _decode_host_batch(saved):
    images = np.frombuffer(base64.b64decode(saved["images"]), dtype=saved["images_dtype"])
    labels = np.frombuffer(base64.b64decode(saved["labels"]), dtype=np.int64)
    mix = saved.get("mix")
    return (torch.from_numpy(images.reshape(saved["images_shape"]).copy()), torch.from_numpy(labels.copy()),
            None if mix is None else {**mix, "box": tuple(mix["box"])})


class Loader:
    """imgpipe.Loader(data, **options) yielding (images, labels) torch tensors.

    device=None (or "cpu"): the tensors share the pipeline's buffers, no copy; images
    are the layout's (float32 N x 3 x S x S, or uint8 N x S x S x 3). device="cuda" or
    "cuda:N": tensors on that device, copied one batch ahead through pinned memory on a
    side stream; images are float32 N x 3 x S x S (layout="uint8" copies a quarter of
    the bytes and normalises on the device). imgpipe.Error when CUDA is unavailable.
    len, set_epoch, state_dict, load_state_dict, stats, report, close and `with` are
    imgpipe.Loader's; on CUDA state_dict also keeps the batch copied ahead, so a resumed
    loader yields exactly the batches the saved one had not yielded.
    mixup_alpha / cutmix_alpha > 0 (imgpipe.Loader's options): (images, targets), targets
    float32 N x num_classes (torchvision's mixed one-hot targets; see mix_targets);
    num_classes defaults to len(loader.class_names) and is required when those are
    unknown. layout="uint8" with mixing needs a CUDA device (the images are mixed after
    normalising there)."""

    def __init__(self, data, *, device=None, num_classes=None, **options):
        self._device = _device_of(device)
        self._loader = _HostLoader(data, **options)
        defaults = _HostLoader.defaults()
        self._layout = options.get("layout", defaults["layout"])
        self._preset = options.get("preset", defaults["preset"])
        self._pending = None     # a batch copied ahead (CUDA)
        self._restored = None    # a pending host batch from load_state_dict
        self._num_classes = None  # set when mixing: targets are yielded instead of labels
        if any(options.get(k, defaults[k]) > 0 for k in ("mixup_alpha", "cutmix_alpha")):
            self._num_classes = self._classes_for_targets(num_classes)
            if self._layout == "uint8" and self._device is None:
                self._loader.close()
                raise Error("imgpipe.torch.Loader: mixing uint8 batches happens after normalising on the "
                            "device: use device='cuda', or layout='float32' (mixed in C++)")

    def _classes_for_targets(self, num_classes):
        """num_classes, else the data's class count; Error when neither is known."""
        if num_classes is None:
            num_classes = len(self._loader.class_names)
        if not isinstance(num_classes, int) or num_classes < 2:
            self._loader.close()
            raise Error("imgpipe.torch.Loader: mixup/cutmix targets need num_classes= (an int >= 2) when "
                        f"the data names no classes (got {num_classes!r})")
        return num_classes

    def __len__(self):
        return len(self._loader)

    def __iter__(self):
        if self._device is None:
            for images, labels, mix in self._host_batches():
                yield self._output(images, labels, mix)
            return
        feeder = _CudaFeeder(self._device, preset_mean_std(self._preset) if self._layout == "uint8" else None)
        hosts = self._host_batches()
        self._pending = feeder.start(next(hosts, None))
        while self._pending is not None:
            current = self._pending
            self._pending = feeder.start(next(hosts, None))  # one ahead: its copy overlaps this batch's use
            images, labels = feeder.finish(current)
            mix = current.host[2]
            if self._layout == "uint8":  # float32 batches come mixed from C++
                mix_images(images, mix)
            yield self._output(images, labels, mix)

    def _output(self, images, labels, mix):
        """(images, labels), or (images, mixed targets) when mixing is on."""
        if self._num_classes is None:
            return images, labels
        return images, mix_targets(labels, mix, self._num_classes)

    def _host_batches(self):
        """(images, labels, mix) CPU tensors and the batch's draw: a batch restored by
        load_state_dict, then the pipeline's, sharing their buffers."""
        restored, self._restored = self._restored, None
        if restored is not None:
            yield restored
        for batch in self._loader:
            yield (*batch_tensors(batch), batch.mix)

    @property
    def data_layout(self):
        return self._loader.data_layout

    @property
    def class_names(self):
        return self._loader.class_names

    def describe_data(self):
        return self._loader.describe_data()

    def set_epoch(self, epoch):
        if epoch != self._loader.epoch:
            self._pending = self._restored = None
        self._loader.set_epoch(epoch)

    def state_dict(self):
        """imgpipe.Loader's state, plus the batch already taken ahead and not yielded."""
        state = self._loader.state_dict()
        state["ahead"] = _encode_host_batch(*self._pending.host) if self._pending is not None else None
        return state

    def load_state_dict(self, state):
        state = dict(state)
        ahead = state.pop("ahead", None)
        self._loader.load_state_dict(state)
        self._pending = None
        self._restored = _decode_host_batch(ahead) if ahead is not None else None

    def stats(self):
        return self._loader.stats()

    def report(self):
        return self._loader.report()

    def close(self):
        self._pending = None
        self._loader.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
