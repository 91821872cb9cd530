"""Loads an imgpipe checkpoint with Python's torch.load, puts its weights into
torchvision's model of the same name (strict: every name and shape must match), runs it
on the input tensor in INPUT (a dict saved by torch::pickle_save with "input" and the
C++ "logits"), and prints the largest absolute difference of the logits as JSON.
Usage: /usr/bin/python3 check_checkpoint.py CHECKPOINT INPUT"""
import json
import sys

import torch
import torchvision

checkpoint = torch.load(sys.argv[1])
probe = torch.load(sys.argv[2])
meta = checkpoint["meta"]
model = getattr(torchvision.models, meta["model"])(num_classes=meta["num_classes"])
model.load_state_dict(checkpoint["model"], strict=True)
model.eval()
with torch.no_grad():
    logits = model(probe["input"])
print(json.dumps({
    "format": checkpoint["format"],
    "model": meta["model"],
    "step": meta["step"],
    "class_names": list(meta["class_names"]),
    "max_abs_diff": float((logits - probe["logits"]).abs().max()),
}))
