#!/usr/bin/env python3
"""Train a torchvision ResNet on imgpipe.torch.Loader batches (docs/training.md).

One process:      python3 examples/train_torch.py --data DIR --epochs 2
N processes:      torchrun --nproc_per_node N examples/train_torch.py --data DIR ...
                  (DDP: gloo on CPU, nccl on CUDA; the loader gives each rank its share)
Resume:           ... --checkpoint ck.pt          (every --checkpoint-every steps, each epoch end)
                  ... --checkpoint ck.pt --resume ck.pt   (continues mid-epoch where it stopped)

A step prints a JSON line {"event": "step", ...} (rank 0's loss); each epoch end prints
{"event": "eval", "top1": ...} over the validation split (counts all-reduced over ranks).
On CPU the run is deterministic (seeds, deterministic algorithms, deterministic loader),
so a run stopped and resumed ends with the parameters an uninterrupted run ends with.
"""

import argparse
import json
import math
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torchvision

import imgpipe
import imgpipe.torch


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True, help="what imgpipe.Loader accepts: shards folder, glob, image folder")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=32, help="per process")
    p.add_argument("--eval-batch-size", type=int, default=None, help="per process (default: --batch-size)")
    p.add_argument("--image-size", type=int, default=224)
    p.add_argument("--lr", type=float, default=0.1, help="peak learning rate (cosine decay per step)")
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--weight-decay", type=float, default=1e-4)
    p.add_argument("--model", default="resnet18", help="a torchvision.models name (resnet18, resnet50, ...)")
    p.add_argument("--num-classes", type=int, default=None, help="default: len(loader.class_names)")
    p.add_argument("--checkpoint", default=None, help="checkpoint path (written by rank 0, atomically)")
    p.add_argument("--checkpoint-every", type=int, default=0, help="steps between checkpoints (0: epoch ends only)")
    p.add_argument("--resume", default=None, help="checkpoint to continue from (mid-epoch)")
    p.add_argument("--max-steps", type=int, default=0, help="stop after this many steps in all (0: no limit)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=4, help="imgpipe pipeline threads per process")
    p.add_argument("--torch-threads", type=int, default=0, help="torch.set_num_threads (0: torch's default)")
    p.add_argument("--device", default="auto", help="auto, cpu, cuda")
    p.add_argument("--precision", default="auto", choices=["auto", "fp32", "bf16", "fp16"],
                   help="auto: bf16 autocast on CPU, fp16 AMP (GradScaler) on CUDA")
    p.add_argument("--val-split", default="validation", help="split for top-1 at epoch ends ('none': skip)")
    p.add_argument("--log", default="json", choices=["json", "plain"])
    return p.parse_args(argv)


class Run:
    """Process group, device and printing."""

    def __init__(self, args):
        self.world_size = int(os.environ.get("WORLD_SIZE", "1"))
        self.rank = int(os.environ.get("RANK", "0"))
        self.local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        want = args.device
        if want == "auto":
            want = "cuda" if torch.cuda.is_available() else "cpu"
        if want == "cuda":
            torch.cuda.set_device(self.local_rank)
            self.device = torch.device("cuda", self.local_rank)
        else:
            self.device = torch.device(want)
        if self.world_size > 1:
            dist.init_process_group("nccl" if self.device.type == "cuda" else "gloo", init_method="env://",
                                    rank=self.rank, world_size=self.world_size)
        self.log_format = args.log

    @property
    def distributed(self):
        return self.world_size > 1

    def log(self, event, **fields):
        if self.rank != 0:
            return
        if self.log_format == "json":
            print(json.dumps({"event": event, **fields}), flush=True)
        else:
            print(event + " " + " ".join(f"{k}={v}" for k, v in fields.items()), flush=True)

    def close(self):
        if self.distributed:
            # torch 1.13 can deadlock tearing DDP's Gloo process group down (the Reducer's
            # destructor joins a Gloo thread that waits for the GIL), so once every rank is
            # done (checkpoints are written whole by then) the process exits without it.
            dist.barrier()
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(0)


def make_model(args, num_classes):
    return getattr(torchvision.models, args.model)(weights=None, num_classes=num_classes)


def autocast_for(run, precision):
    """(autocast context factory, GradScaler or None) for --precision."""
    if precision == "auto":
        precision = "fp16" if run.device.type == "cuda" else "bf16"
    if precision == "fp32":
        return (lambda: torch.autocast(run.device.type, enabled=False)), None
    if precision == "bf16":
        return (lambda: torch.autocast(run.device.type, dtype=torch.bfloat16)), None
    if run.device.type != "cuda":
        raise SystemExit("--precision fp16 needs CUDA (use bf16 on CPU)")
    return (lambda: torch.autocast("cuda", dtype=torch.float16)), torch.cuda.amp.GradScaler()


def learning_rate(args, step, total_steps):
    """Cosine decay from --lr: a function of the step alone, so a resumed run follows it."""
    return args.lr * 0.5 * (1.0 + math.cos(math.pi * min(step, total_steps) / max(1, total_steps)))


def save_checkpoint(run, args, model, optimizer, scaler, loader, epoch, step, epoch_done):
    """Every rank's loader state is gathered; rank 0 writes tmp + os.replace."""
    state = loader.state_dict()
    states = [None] * run.world_size
    if run.distributed:
        dist.all_gather_object(states, state)
    else:
        states = [state]
    if run.rank != 0:
        return
    checkpoint = {
        "model": (model.module if run.distributed else model).state_dict(),
        "optimizer": optimizer.state_dict(),
        "scaler": scaler.state_dict() if scaler is not None else None,
        "epoch": epoch,            # the epoch to continue
        "epoch_done": epoch_done,  # True: `epoch` starts afresh; False: continue the loader states
        "step": step,
        "loader": states,          # one per rank
        "world_size": run.world_size,
        "args": vars(args),
    }
    tmp = f"{args.checkpoint}.tmp.{os.getpid()}"
    torch.save(checkpoint, tmp)
    os.replace(tmp, args.checkpoint)
    run.log("checkpoint", path=args.checkpoint, epoch=epoch, step=step)


def evaluate(run, args, model, autocast, val_loader):
    model.eval()
    counts = torch.zeros(2, dtype=torch.int64, device=run.device)
    with torch.no_grad():
        for images, labels in val_loader:
            with autocast():
                logits = model(images)
            counts[0] += (logits.argmax(1) == labels).sum()
            counts[1] += labels.numel()
    if run.distributed:
        dist.all_reduce(counts)
    model.train()
    correct, total = counts.tolist()
    return correct, total


def main(argv=None):
    args = parse_args(argv)
    run = Run(args)
    torch.manual_seed(args.seed)
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    if run.device.type == "cpu":
        torch.use_deterministic_algorithms(True, warn_only=True)
    else:
        torch.backends.cudnn.benchmark = True

    # On CUDA the loader copies uint8 batches (a quarter of float32's bytes) through pinned
    # memory one batch ahead and normalises them on the GPU; on the CPU, no copy at all.
    device = run.device if run.device.type == "cuda" else None
    layout = "uint8" if device is not None else "float32"
    loader = imgpipe.torch.Loader(args.data, device=device, batch_size=args.batch_size, preset="train",
                                  image_size=args.image_size, layout=layout, seed=args.seed, deterministic=True,
                                  threads=args.threads)
    val_loader = None
    if args.val_split != "none":
        try:
            val_loader = imgpipe.torch.Loader(args.data, device=device,
                                              batch_size=args.eval_batch_size or args.batch_size, preset="eval",
                                              split=args.val_split, image_size=args.image_size, layout=layout,
                                              threads=args.threads)
        except imgpipe.Error as e:
            run.log("warning", message=f"no top-1: split {args.val_split!r}: {e}")
    num_classes = args.num_classes or len(loader.class_names)
    if not num_classes:
        raise SystemExit("the data names no classes: pass --num-classes")

    model = make_model(args, num_classes).to(run.device)
    if run.distributed:
        model = nn.parallel.DistributedDataParallel(
            model, device_ids=[run.device.index] if run.device.type == "cuda" else None)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum,
                                weight_decay=args.weight_decay)
    autocast, scaler = autocast_for(run, args.precision)
    criterion = nn.CrossEntropyLoss()

    epoch, step, loader_state = 0, 0, None
    if args.resume:
        checkpoint = torch.load(args.resume, map_location=run.device)
        (model.module if run.distributed else model).load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        if scaler is not None and checkpoint.get("scaler"):
            scaler.load_state_dict(checkpoint["scaler"])
        epoch, step = checkpoint["epoch"], checkpoint["step"]
        if not checkpoint["epoch_done"]:
            if checkpoint["world_size"] != run.world_size:
                raise SystemExit(f"--resume: the checkpoint was written by {checkpoint['world_size']} "
                                 f"processes mid-epoch; run {checkpoint['world_size']}")
            loader_state = checkpoint["loader"][run.rank]
        run.log("resume", path=args.resume, epoch=epoch, step=step)
    if args.checkpoint_every and not args.checkpoint:
        raise SystemExit("--checkpoint-every needs --checkpoint")

    total_steps = args.epochs * len(loader)
    run.log("start", world_size=run.world_size, device=str(run.device), classes=num_classes,
            batches_per_epoch=len(loader), data=loader.describe_data())
    stopped = False
    while epoch < args.epochs and not stopped:
        if loader_state is not None:
            loader.load_state_dict(loader_state)  # the same epoch: continue at its position
            loader_state = None
        loader.set_epoch(epoch)
        started = time.monotonic()
        for images, labels in loader:
            lr = learning_rate(args, step, total_steps)
            for group in optimizer.param_groups:
                group["lr"] = lr
            optimizer.zero_grad(set_to_none=True)
            with autocast():
                loss = criterion(model(images), labels)
            if scaler is not None:
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
            else:
                loss.backward()
                optimizer.step()
            step += 1
            run.log("step", epoch=epoch, step=step, loss=round(loss.item(), 6), lr=lr)
            if args.checkpoint and args.checkpoint_every and step % args.checkpoint_every == 0:
                save_checkpoint(run, args, model, optimizer, scaler, loader, epoch, step, epoch_done=False)
            if args.max_steps and step >= args.max_steps:
                stopped = True
                break
        if stopped:
            if args.checkpoint and not (args.checkpoint_every and step % args.checkpoint_every == 0):
                save_checkpoint(run, args, model, optimizer, scaler, loader, epoch, step, epoch_done=False)
            run.log("stopped", epoch=epoch, step=step, reason="--max-steps")
            break
        if val_loader is not None:
            correct, total = evaluate(run, args, model, autocast, val_loader)
            run.log("eval", epoch=epoch, step=step, correct=correct, total=total,
                    top1=correct / total if total else None, seconds=round(time.monotonic() - started, 3))
        epoch += 1
        if args.checkpoint:
            save_checkpoint(run, args, model, optimizer, scaler, loader, epoch, step, epoch_done=True)
    loader.close()
    if val_loader is not None:
        val_loader.close()
    run.log("done", epoch=epoch, step=step)
    run.close()


if __name__ == "__main__":
    sys.exit(main())
