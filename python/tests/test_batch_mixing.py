"""Batch mixing (mixup_alpha, cutmix_alpha) over real photos: the C++ loader mixes
float32 batches by the draw it reports (batch.mix), imgpipe.torch.Loader yields
torchvision's mixed one-hot targets, the uint8 path mixes the same draw in torch after
normalising, and draws are deterministic and resume mid-epoch."""

import pytest
import torch

import imgpipe
import imgpipe.torch as itorch

CLASSES = 24  # the shards fixture's labels are the records' indices 0..23, unnamed
OPTIONS = dict(batch_size=8, image_size=32, seed=3, threads=2, start_ahead=False)


def host_batches(shards, epoch=0, **options):
    """(images, labels, mix) of every batch of `epoch`, images and labels as tensors."""
    with imgpipe.Loader(str(shards), **{**OPTIONS, **options}) as loader:
        loader.set_epoch(epoch)
        return [(torch.from_dlpack(b.images).clone(), torch.from_dlpack(b.labels).clone(), b.mix)
                for b in loader]


def test_mixup_images_blend_each_sample_with_the_previous_one(shards):
    plain = host_batches(shards, epoch=1)
    mixed = host_batches(shards, epoch=1, mixup_alpha=0.4)
    assert len(plain) == len(mixed) == 3
    for (x, labels, none), (m, mixed_labels, mix) in zip(plain, mixed):
        assert none is None
        assert mix["kind"] == "mixup" and 0 <= mix["lambda"] <= 1
        assert torch.equal(labels, mixed_labels)  # labels stay the samples' own
        lam = mix["lambda"]
        torch.testing.assert_close(m, lam * x + (1 - lam) * x.roll(1, 0), rtol=0, atol=1e-5)
        assert torch.equal(m, itorch.mix_images(x.clone(), mix))  # torch's arithmetic, to the bit


def test_cutmix_pastes_the_previous_samples_box(shards):
    plain = host_batches(shards)
    mixed = host_batches(shards, cutmix_alpha=1.0)
    for (x, _, _), (m, _, mix) in zip(plain, mixed):
        assert mix["kind"] == "cutmix"
        y0, y1, x0, x1 = mix["box"]
        assert 0 <= y0 <= y1 <= 32 and 0 <= x0 <= x1 <= 32
        assert mix["lambda"] == pytest.approx(1 - (y1 - y0) * (x1 - x0) / (32 * 32))
        expected = x.clone()
        expected[:, :, y0:y1, x0:x1] = x.roll(1, 0)[:, :, y0:y1, x0:x1]
        assert torch.equal(m, expected)


def test_torch_loader_yields_mixed_one_hot_targets(shards):
    draws = host_batches(shards, mixup_alpha=0.2, cutmix_alpha=1.0)
    with itorch.Loader(str(shards), num_classes=CLASSES, mixup_alpha=0.2, cutmix_alpha=1.0, **OPTIONS) as loader:
        batches = list(loader)
    assert len(batches) == len(draws)
    for (images, targets), (x, labels, mix) in zip(batches, draws):
        assert targets.dtype == torch.float32 and targets.shape == (8, CLASSES)
        torch.testing.assert_close(targets.sum(1), torch.ones(8))
        lam = mix["lambda"]
        one_hot = torch.nn.functional.one_hot(labels, CLASSES).float()
        torch.testing.assert_close(targets, lam * one_hot + (1 - lam) * one_hot.roll(1, 0))
        assert torch.equal(images, x)
    # Unnamed classes: num_classes is required.
    with pytest.raises(imgpipe.Error, match="num_classes"):
        itorch.Loader(str(shards), mixup_alpha=0.2, **OPTIONS)


def test_uint8_batches_mix_after_normalising_with_the_same_draw(shards):
    floats = host_batches(shards, mixup_alpha=0.2, cutmix_alpha=1.0)
    uint8 = host_batches(shards, mixup_alpha=0.2, cutmix_alpha=1.0, layout="uint8")
    mean, std = itorch.preset_mean_std("train")
    for (f, _, f_mix), (u, _, u_mix) in zip(floats, uint8):
        assert f_mix == u_mix  # one draw per batch whatever the layout
        mixed = itorch.mix_images(itorch.normalize(u, mean, std), u_mix)  # what the CUDA path runs
        torch.testing.assert_close(mixed, f, rtol=0, atol=1e-5)
    # On the CPU a uint8 batch cannot be mixed before normalising: refused.
    with pytest.raises(imgpipe.Error, match="uint8"):
        itorch.Loader(str(shards), num_classes=CLASSES, mixup_alpha=0.2, layout="uint8", **OPTIONS)


def test_draws_are_deterministic_and_resume_mid_epoch(shards):
    options = dict(num_classes=CLASSES, mixup_alpha=0.2, cutmix_alpha=1.0, **OPTIONS)
    with itorch.Loader(str(shards), **options) as a, itorch.Loader(str(shards), **options) as b:
        for (xa, ta), (xb, tb) in zip(a, b):
            assert torch.equal(xa, xb) and torch.equal(ta, tb)
    with itorch.Loader(str(shards), **options) as loader:
        loader.set_epoch(2)
        batches = iter(loader)
        next(batches)
        state = loader.state_dict()
        rest = [(x.clone(), t.clone()) for x, t in batches]
    assert len(rest) == 2
    assert state["options"]["mixup_alpha"] == 0.2
    with itorch.Loader(str(shards), **options) as resumed:
        resumed.load_state_dict(state)
        again = list(resumed)
    assert len(again) == 2
    for (x, t), (y, u) in zip(rest, again):
        assert torch.equal(x, y) and torch.equal(t, u)


def test_negative_alpha_is_refused_by_name(shards):
    with pytest.raises(imgpipe.InvalidArgument, match="mixup_alpha"):
        imgpipe.Loader(str(shards), mixup_alpha=-0.5, **OPTIONS)
