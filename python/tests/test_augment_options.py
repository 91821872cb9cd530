"""The train preset's augmentation options (auto_augment, ra_num_ops, ra_magnitude,
random_erase) through imgpipe.Loader and imgpipe.torch.Loader: accepted as keywords,
bad values raise imgpipe.InvalidArgument (a ValueError) naming the option, and the
batches are a function of the seed: equal for equal seeds, changed by the policy."""

import numpy as np
import pytest
import torch

import imgpipe
import imgpipe.torch

SMALL = dict(image_size=32, threads=2, batch_size=6, seed=3)


def images_of(loader):
    return [np.asarray(b.images).copy() for b in loader]


def test_defaults_are_torchvisions():
    defaults = imgpipe.Loader.defaults()
    assert defaults["auto_augment"] == "none" and defaults["random_erase"] == 0.0
    assert defaults["ra_num_ops"] == 2 and defaults["ra_magnitude"] == 9
    assert defaults["resize_size"] == 0


@pytest.mark.parametrize("policy", ["ta_wide", "ra", "imagenet"])
def test_same_seed_same_batches_and_the_policy_changes_them(shards, policy):
    options = dict(SMALL, auto_augment=policy, random_erase=0.25, ra_num_ops=3, ra_magnitude=12)
    first = images_of(imgpipe.Loader(str(shards), **options))
    assert len(first) == 4
    again = images_of(imgpipe.Loader(str(shards), **options))
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    plain = images_of(imgpipe.Loader(str(shards), **SMALL))
    assert not all(np.array_equal(a, b) for a, b in zip(first, plain))
    other_seed = images_of(imgpipe.Loader(str(shards), **dict(options, seed=4)))
    assert not all(np.array_equal(a, b) for a, b in zip(first, other_seed))


def test_torch_loader_takes_them_too(shards):
    options = dict(SMALL, auto_augment="ta_wide", random_erase=1.0, layout="uint8")
    batches = [images for images, _ in imgpipe.torch.Loader(str(shards), **options)]
    again = [images for images, _ in imgpipe.torch.Loader(str(shards), **options)]
    assert batches[0].shape == (6, 32, 32, 3) and batches[0].dtype == torch.uint8
    assert all(torch.equal(a, b) for a, b in zip(batches, again))


def test_state_dict_records_them(shards):
    loader = imgpipe.Loader(str(shards), **SMALL, auto_augment="ra", random_erase=0.1)
    options = loader.state_dict()["options"]
    assert options["auto_augment"] == "ra" and options["random_erase"] == 0.1
    plain = imgpipe.Loader(str(shards), **SMALL)
    with pytest.raises(ValueError, match="auto_augment='ra', this loader has 'none'"):
        plain.load_state_dict(loader.state_dict())


@pytest.mark.parametrize("options, message", [
    (dict(auto_augment="autoaugment"), "auto_augment must be one of 'none', 'ta_wide', 'ra', 'imagenet'"),
    (dict(random_erase=1.5), r"random_erase must be in \[0, 1\]"),
    (dict(auto_augment="ra", ra_magnitude=31), r"ra_magnitude must be in \[0, 30\]"),
    (dict(ra_num_ops=-1), "ra_num_ops"),
    (dict(preset="eval", auto_augment="ta_wide"), "preset 'eval' takes neither"),
])
def test_bad_values_raise_invalid_argument_naming_the_option(shards, options, message):
    with pytest.raises(imgpipe.InvalidArgument, match=message) as raised:
        imgpipe.Loader(str(shards), **dict(SMALL, **options))
    assert isinstance(raised.value, ValueError)


def test_wrong_types_raise_type_errors(shards):
    with pytest.raises(TypeError, match="auto_augment"):
        imgpipe.Loader(str(shards), **SMALL, auto_augment=1)
    with pytest.raises(TypeError, match="ra_magnitude"):
        imgpipe.Loader(str(shards), **SMALL, ra_magnitude="9")
