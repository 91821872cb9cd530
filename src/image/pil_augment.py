#!/usr/bin/python3
"""Runs torchvision's augmentation ops on PIL images, for augment_ops_test.cc.

Usage: pil_augment.py MANIFEST OUT_PATH. MANIFEST's lines are one of
    image MODE IN_PATH WIDTH HEIGHT
        an input: IN_PATH holds WIDTH x HEIGHT raw pixels (HWC), MODE "RGB" or "L";
        the images are numbered 0, 1, ... in order.
    op IMAGE OP_NAME MAGNITUDE FILL
        torchvision.transforms.autoaugment._apply_op(image IMAGE, OP_NAME, MAGNITUDE,
        InterpolationMode.NEAREST, fill) on the PIL image, where FILL is "none" or
        comma-separated integers; its raw pixels are appended to OUT_PATH.
    space KIND BINS HEIGHT WIDTH
        the _augmentation_space of KIND ("ta_wide", "ra" or "imagenet": AutoAugment's,
        always with 10 bins) for a HEIGHT x WIDTH image: for each op a line
        "space OP_NAME SIGNED V0 V1 ..." (repr of each magnitude) on standard output.
MAGNITUDE is read with float(), so the repr of a double passes unchanged. Exits non-zero
on any failure.
"""
import os
import sys

# torch.linspace's last bits depend on the CPU kernel PyTorch dispatches to; imgpipe
# reproduces the AVX2 kernel's (augment_policy.cc, TorchLinspace).
os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")

from PIL import Image  # noqa: E402
from torchvision.transforms import InterpolationMode, autoaugment  # noqa: E402


def space(kind, bins, height, width):
    if kind == "ta_wide":
        ops = autoaugment.TrivialAugmentWide(num_magnitude_bins=bins)._augmentation_space(bins)
    elif kind == "ra":
        ops = autoaugment.RandAugment(num_magnitude_bins=bins)._augmentation_space(
            bins, (height, width))
    elif kind == "imagenet":
        ops = autoaugment.AutoAugment()._augmentation_space(10, (height, width))
    else:
        raise ValueError(f"unknown policy {kind}")
    for name, (magnitudes, signed) in ops.items():
        values = magnitudes.tolist() if magnitudes.ndim > 0 else []
        print("space", name, int(signed), *(repr(float(v)) for v in values))


def main(manifest, out_path):
    images = []
    with open(manifest) as lines, open(out_path, "wb") as out:
        for line in lines:
            fields = line.split()
            if fields[0] == "image":
                mode, in_path, w, h = fields[1:]
                with open(in_path, "rb") as f:
                    images.append(Image.frombytes(mode, (int(w), int(h)), f.read()))
            elif fields[0] == "op":
                index, name, magnitude, fill = fields[1:]
                fill = None if fill == "none" else [int(v) for v in fill.split(",")]
                result = autoaugment._apply_op(images[int(index)], name, float(magnitude),
                                               InterpolationMode.NEAREST, fill)
                out.write(result.tobytes())
            elif fields[0] == "space":
                space(fields[1], int(fields[2]), int(fields[3]), int(fields[4]))
            else:
                raise ValueError(f"bad manifest line: {line!r}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
