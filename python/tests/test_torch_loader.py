"""imgpipe.torch.Loader: CPU tensors without a copy, the same batches as imgpipe.Loader,
the pass-through methods, the CUDA guard, and the GPU path's normalisation run on CPU
tensors (uint8 batches normalised by imgpipe.torch.normalize equal the float32 layout's)."""

import json

import numpy as np
import pytest
import torch

import imgpipe
import imgpipe.torch
from conftest import RECORDS_PER_FILE, SHARD_FILES

RECORDS = SHARD_FILES * RECORDS_PER_FILE
SMALL = dict(image_size=32, threads=2, deterministic=True, seed=7)


def test_cpu_batches_are_the_host_loaders_without_a_copy(shards):
    host = [(np.asarray(b.images).copy(), np.asarray(b.labels).copy())
            for b in imgpipe.Loader(str(shards), batch_size=5, **SMALL)]
    loader = imgpipe.torch.Loader(str(shards), batch_size=5, **SMALL)
    got = list(loader)
    assert len(got) == len(loader) == len(host) == RECORDS // 5
    for (images, labels), (want_images, want_labels) in zip(got, host):
        assert images.dtype == torch.float32 and images.shape == (5, 3, 32, 32) and labels.dtype == torch.int64
        assert np.array_equal(images.numpy(), want_images) and labels.tolist() == want_labels.tolist()
    batch = next(iter(imgpipe.Loader(str(shards), batch_size=5, **SMALL)))
    images, labels = imgpipe.torch.batch_tensors(batch)
    assert images.data_ptr() == batch.images.address and labels.data_ptr() == batch.labels.address


@pytest.mark.parametrize("preset", ["train", "eval"])
def test_uint8_normalised_like_the_gpu_path_equals_the_float32_layout(shards, preset):
    floats = [images for images, _ in imgpipe.torch.Loader(str(shards), batch_size=6, preset=preset, **SMALL)]
    mean, std = imgpipe.torch.preset_mean_std(preset)
    assert len(mean) == len(std) == 3 and all(s > 0 for s in std)
    uint8 = imgpipe.torch.Loader(str(shards), batch_size=6, preset=preset, layout="uint8", **SMALL)
    count = 0
    for (images, _), want in zip(uint8, floats):
        assert images.dtype == torch.uint8 and images.shape == (6, 32, 32, 3)
        got = imgpipe.torch.normalize(images, mean, std)
        assert got.dtype == torch.float32 and got.shape == want.shape and got.is_contiguous()
        assert torch.allclose(got, want, rtol=0, atol=1e-6), (got - want).abs().max()
        count += 1
    assert count == len(floats) == RECORDS // 6


def test_normalize_with_another_mean_differs_and_bad_input_raises(shards):
    images, _ = next(iter(imgpipe.torch.Loader(str(shards), batch_size=4, layout="uint8", **SMALL)))
    mean, std = imgpipe.torch.preset_mean_std("train")
    assert not torch.allclose(imgpipe.torch.normalize(images, mean, std),
                              imgpipe.torch.normalize(images, [0.5, 0.5, 0.5], std), atol=1e-3)
    with pytest.raises(imgpipe.Error, match="uint8 N x H x W x 3"):
        imgpipe.torch.normalize(images.float(), mean, std)
    with pytest.raises(imgpipe.Error, match="preset"):
        imgpipe.torch.preset_mean_std("nope")


def test_state_dict_resumes_exactly_and_passes_through(shards):
    loader = imgpipe.torch.Loader(str(shards), batch_size=4, **SMALL)
    loader.set_epoch(1)
    whole = [labels.tolist() for _, labels in loader]
    assert loader.stats() and "bottleneck" in loader.report()
    with imgpipe.torch.Loader(str(shards), batch_size=4, **SMALL) as first:
        first.set_epoch(1)
        it = iter(first)
        head = [next(it)[1].tolist() for _ in range(2)]
        state = json.loads(json.dumps(first.state_dict()))
    with pytest.raises(imgpipe.Error, match="after close"):
        next(iter(first))
    second = imgpipe.torch.Loader(str(shards), batch_size=4, **SMALL)
    second.load_state_dict(state)
    tail = [labels.tolist() for _, labels in second]
    assert head + tail == whole and len(whole) == len(loader)


def test_cuda_without_cuda_and_bad_devices_raise(shards):
    if not torch.cuda.is_available():
        with pytest.raises(imgpipe.Error, match="cuda.is_available"):
            imgpipe.torch.Loader(str(shards), device="cuda", batch_size=4, **SMALL)
        with pytest.raises(imgpipe.Error, match="cuda.is_available"):
            imgpipe.torch.Loader(str(shards), device="cuda:1", batch_size=4, **SMALL)
    with pytest.raises(imgpipe.Error, match="device"):
        imgpipe.torch.Loader(str(shards), device="meta", batch_size=4, **SMALL)
    with pytest.raises(imgpipe.Error, match="not a device name"):
        imgpipe.torch.Loader(str(shards), device="gpu0", batch_size=4, **SMALL)
    with pytest.raises(imgpipe.Error, match="unknown option"):
        imgpipe.torch.Loader(str(shards), devices="cpu", batch_size=4, **SMALL)
