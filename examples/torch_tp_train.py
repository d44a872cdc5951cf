#!/usr/bin/env python3
"""Trains a two-layer FP32 MLP (width -> hidden -> width, GELU between) spread over the GPUs of
one machine, twice from the same weights on the same batches: on PyTorch (TF32 off) and with
its products routed to tilegemm (`with tilegemm.torch.enabled():`, math "fp32").  Prints each
run's step time and loss, and how far apart the loss curves are.

  tensor parallel (default)  the first Linear ColwiseParallel, the second RowwiseParallel
                             (parallelize_module on a 1-D mesh of every rank); every rank sees
                             the same batch of --batch rows
  --fsdp                     FSDP2: fully_shard on each Linear and on the model; each rank
                             trains on its own batch of --batch rows (the logged loss is the
                             mean over ranks)

Any number of ranks runs, one included: a mesh of one GPU takes the same code path (DTensor
placements, collectives over one rank), so its step is the reference that 2, 4 or 8 GPUs are
measured against.  Tensor parallel splits the same work over more GPUs; FSDP2 adds a batch a
GPU.

    torchrun --nproc-per-node 2 examples/torch_tp_train.py --json tp.json
    torchrun --nproc-per-node 2 examples/torch_tp_train.py --fsdp --json fsdp.json
    torchrun --nproc-per-node 1 examples/torch_tp_train.py --json tp-1.json   # the reference
    torchrun --nproc-per-node 2 examples/torch_tp_train.py --width 512 --hidden 2048 \\
        --batch 256 --steps 10          # a small run

Synthetic data: Gaussian inputs and targets tanh(x @ T) of a fixed random teacher T, computed
in float64 (the same targets whatever the run's settings); MSE loss, Adam.  A step is the
forward, backward and optimizer step; its time is the slowest rank's, from synchronized start
to synchronized end, and the reported figure is the median after --warmup steps.  --json
writes device names, GPU count, commit (env TG_COMMIT), date, step times, the losses of every
step and the largest loss difference.
"""
import argparse
import contextlib
import datetime
import json
import os
import statistics
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.distributed.device_mesh import init_device_mesh

import tilegemm
import tilegemm.torch as tgt


def model(opts, mesh):
    """The MLP from seed --init-seed (identical on every rank), placed for the mode."""
    torch.manual_seed(opts.init_seed)
    net = torch.nn.Sequential(torch.nn.Linear(opts.width, opts.hidden), torch.nn.GELU(),
                              torch.nn.Linear(opts.hidden, opts.width)).to(opts.device)
    if opts.fsdp:
        try:
            from torch.distributed.fsdp import fully_shard
        except ImportError:  # PyTorch before 2.6
            from torch.distributed._composable.fsdp import fully_shard
        for layer in (net[0], net[2]):
            fully_shard(layer, mesh=mesh)
        return fully_shard(net, mesh=mesh)
    from torch.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel,
                                                   parallelize_module)
    return parallelize_module(net, mesh, {"0": ColwiseParallel(), "2": RowwiseParallel()})


def batches(opts, rank):
    """The same batches in every run: one stream for all ranks (tensor parallel) or one a rank
    (FSDP)."""
    g = torch.Generator(device=opts.device).manual_seed(opts.data_seed)
    teacher = torch.randn(opts.width, opts.width, device=opts.device, generator=g,
                          dtype=torch.float64) / opts.width ** 0.5
    if opts.fsdp:
        g.manual_seed(opts.data_seed + 1000 * (rank + 1))
    for _ in range(opts.steps):
        x = torch.randn(opts.batch, opts.width, device=opts.device, generator=g)
        yield x, torch.tanh(x.double() @ teacher).float()


def synchronize(opts):
    if opts.device == "cuda":
        torch.cuda.synchronize()


def run(name, opts, mesh, routed):
    torch.backends.cuda.matmul.allow_tf32 = False
    rank = dist.get_rank()
    net = model(opts, mesh)
    opt = torch.optim.Adam(net.parameters(), lr=opts.lr)
    losses, times = [], []
    routing = tgt.enabled() if routed else contextlib.nullcontext()
    with routing, tilegemm.math("fp32"):
        for x, y in batches(opts, rank):
            synchronize(opts)
            dist.barrier()
            synchronize(opts)
            start = time.perf_counter()
            loss = F.mse_loss(net(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            synchronize(opts)
            times.append(time.perf_counter() - start)
            loss = loss.detach()
            if opts.fsdp:  # each rank's own batch: the mean over ranks
                dist.all_reduce(loss, op=dist.ReduceOp.AVG)
            losses.append(loss.item())
    slowest = torch.tensor(times, device=opts.device, dtype=torch.float64)
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
    times = slowest.tolist()
    del net, opt
    if opts.device == "cuda":
        torch.cuda.empty_cache()
    step_ms = statistics.median(times[opts.warmup:] or times) * 1e3
    if rank == 0:
        print(f"{name:<9} step {step_ms:9.2f} ms   loss {losses[0]:.6f} -> {losses[-1]:.6f}",
              flush=True)
    return {"step_ms": round(step_ms, 3), "step_ms_each": [round(t * 1e3, 3) for t in times],
            "losses": losses}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fsdp", action="store_true", help="FSDP2 instead of tensor parallel")
    parser.add_argument("--width", type=int, default=8192)
    parser.add_argument("--hidden", type=int, default=32768)
    parser.add_argument("--batch", type=int, default=4096, help="rows a step (FSDP: a rank)")
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5, help="steps left out of the timing")
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--init-seed", type=int, default=0)
    parser.add_argument("--data-seed", type=int, default=1)
    parser.add_argument("--json", help="write the record here (rank 0)")
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                        help="cpu: a smoke test of this script without GPUs (gloo; "
                             "tilegemm.torch passes CPU tensors to PyTorch, so both runs are "
                             "PyTorch's)")
    opts = parser.parse_args()

    local = int(os.environ.get("LOCAL_RANK", 0))
    if opts.device == "cuda":
        torch.cuda.set_device(local)
        dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    else:
        dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    mesh = init_device_mesh(opts.device, (world,))
    mode = "fsdp" if opts.fsdp else "tp"
    if rank == 0:
        print(f"{mode}: {world} rank{'s' if world > 1 else ''} ({opts.device}), MLP {opts.width} -> {opts.hidden} -> {opts.width}, "
              f"batch {opts.batch}{' a rank' if opts.fsdp else ''}, {opts.steps} steps",
              flush=True)

    runs = {"torch": run("torch", opts, mesh, routed=False),
            "tilegemm": run("tilegemm", opts, mesh, routed=True)}
    names = [None] * world
    dist.all_gather_object(names, torch.cuda.get_device_name() if opts.device == "cuda" else
                           "cpu")
    ref, got = runs["torch"]["losses"], runs["tilegemm"]["losses"]
    diff = max(abs(a - b) for a, b in zip(got, ref))
    rel = max(abs(a - b) / abs(b) for a, b in zip(got, ref) if b)
    speedup = runs["torch"]["step_ms"] / runs["tilegemm"]["step_ms"]
    if rank == 0:
        print(f"tilegemm {speedup:.2f}x torch's step; largest loss difference {diff:.3g} "
              f"(relative {rel:.3g})", flush=True)
    if rank == 0 and opts.json:
        record = {"example": "torch_tp_train", "mode": mode, "gpus": world, "devices": names,
                  "commit": os.environ.get("TG_COMMIT", "unknown"),
                  "date": datetime.datetime.now(datetime.timezone.utc).strftime(
                      "%Y-%m-%dT%H:%M:%SZ"),
                  "torch": torch.__version__,
                  "config": {k: v for k, v in vars(opts).items() if k != "json"},
                  "measure": "step_ms: median over steps after warmup of the slowest rank's "
                             "step (forward, backward, Adam step); losses: every step (FSDP: "
                             "mean over ranks)",
                  "speedup_tilegemm_vs_torch": round(speedup, 3),
                  "max_loss_diff": diff, "max_rel_loss_diff": rel, "runs": runs}
        with open(opts.json, "w") as f:
            json.dump(record, f, indent=1)
        print(f"wrote {opts.json}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
