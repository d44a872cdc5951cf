#!/usr/bin/env python3
"""Trains one FP32 MLP on synthetic data (a fixed random teacher network, MSE loss, Adam), the
same initial weights and batches each time, in five runs:

  torch-fp32       PyTorch with TF32 off (torch.backends.cuda.matmul.allow_tf32 = False)
  tilegemm-fp32    the same under `with tilegemm.torch.enabled():` (math "fp32")
  torch-tf32       PyTorch with TF32 on
  torch-fp64       the same model in float64: the reference the others are measured against
  torch-fp32-seed  PyTorch FP32 again from another seed: how far apart two honest runs fall

and reports each run's median step time and loss curve.  How close a curve is: the largest
relative difference of the loss from float64's over all steps, max_s |L(s) - L64(s)| / L64(s);
an FP32-accurate run should sit near torch-fp32's, far below the other seed's.

    python3 examples/torch_train.py --json train.json --png train.png

Offline; about a minute on an H100 at the defaults (width 4096, batch 4096: the products
dominate).  Writes JSON (--json) and a PNG of the curves when matplotlib is there (--png).
"""
import argparse
import contextlib
import datetime
import json
import os
import statistics
import time

import torch

import tilegemm.torch as tgt


def model(width, depth, dtype, seed):
    torch.manual_seed(seed)
    layers = []
    for i in range(depth):
        layers += [torch.nn.Linear(width, width), torch.nn.GELU()]
    return torch.nn.Sequential(*layers[:-1]).to("cuda", dtype)


def batches(width, batch, steps, seed):
    """The same inputs and teacher targets for every run (float32, cast by the run)."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    teacher = torch.randn(width, width, device="cuda", generator=g) / width ** 0.5
    for _ in range(steps):
        x = torch.randn(batch, width, device="cuda", generator=g)
        # In float64 whatever the run's settings, so that every run sees the same targets.
        yield x, torch.tanh(x.double() @ teacher.double()).float()


def run(name, opts, dtype=torch.float32, tf32=False, routed=False, seed=0):
    torch.backends.cuda.matmul.allow_tf32 = tf32
    net = model(opts.width, opts.depth, dtype, seed)
    opt = torch.optim.Adam(net.parameters(), lr=opts.lr)
    losses, times = [], []
    with tgt.enabled() if routed else contextlib.nullcontext():
        for step, (x, y) in enumerate(batches(opts.width, opts.batch, opts.steps, opts.data_seed)):
            torch.cuda.synchronize()
            start = time.perf_counter()
            loss = torch.nn.functional.mse_loss(net(x.to(dtype)), y.to(dtype))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            torch.cuda.synchronize()
            times.append(time.perf_counter() - start)
            losses.append(loss.item())
    torch.backends.cuda.matmul.allow_tf32 = False
    step_ms = statistics.median(times[opts.warmup:]) * 1e3
    print(f"{name:<16} step {step_ms:8.2f} ms   loss {losses[0]:.5f} -> {losses[-1]:.5f}",
          flush=True)
    return {"step_ms": round(step_ms, 3), "losses": losses}


def max_rel_diff(losses, reference):
    return max(abs(a - b) / abs(b) for a, b in zip(losses, reference))


def plot(record, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not found: no PNG")
        return
    runs = record["runs"]
    ref = runs["torch-fp64"]["losses"]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 8), sharex=True)
    for name, r in runs.items():
        top.plot(r["losses"], label=f"{name} ({r['step_ms']:.1f} ms/step)")
        if name != "torch-fp64":
            bottom.plot([abs(a - b) / b for a, b in zip(r["losses"], ref)], label=name)
    top.set_yscale("log")
    top.set_ylabel("training loss (MSE)")
    top.legend()
    top.set_title(f"MLP {record['config']['depth']} x {record['config']['width']}, batch "
                  f"{record['config']['batch']}, {record['device']}")
    bottom.set_yscale("log")
    bottom.set_ylabel("|loss - float64 loss| / float64 loss")
    bottom.set_xlabel("step")
    bottom.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--width", type=int, default=4096)
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--depth", type=int, default=4, help="Linear layers, width x width")
    parser.add_argument("--steps", type=int, default=120)
    parser.add_argument("--warmup", type=int, default=10, help="steps left out of the timing")
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--data-seed", type=int, default=1)
    parser.add_argument("--json")
    parser.add_argument("--png")
    opts = parser.parse_args()

    runs = {"torch-fp32": run("torch-fp32", opts),
            "tilegemm-fp32": run("tilegemm-fp32", opts, routed=True),
            "torch-tf32": run("torch-tf32", opts, tf32=True),
            "torch-fp64": run("torch-fp64", opts, dtype=torch.float64),
            "torch-fp32-seed": run("torch-fp32-seed", opts, seed=1)}
    ref = runs["torch-fp64"]["losses"]
    for name, r in runs.items():
        r["max_rel_diff_vs_fp64"] = max_rel_diff(r["losses"], ref)
        r["speedup_vs_torch_fp32"] = round(runs["torch-fp32"]["step_ms"] / r["step_ms"], 3)
    record = {"example": "torch_train", "device": torch.cuda.get_device_name(),
              "commit": os.environ.get("TG_COMMIT", "unknown"),
              "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
              "torch": torch.__version__,
              "measure": "max over steps of |loss - loss_fp64| / loss_fp64 (same init, same "
                         "batches; torch-fp32-seed starts from another initialisation)",
              "config": {k: v for k, v in vars(opts).items() if k not in ("json", "png")},
              "runs": runs}
    print(f"{'run':<16} {'ms/step':>8} {'x torch-fp32':>12} {'max rel diff vs fp64':>21}")
    for name, r in runs.items():
        print(f"{name:<16} {r['step_ms']:8.2f} {r['speedup_vs_torch_fp32']:12.2f} "
              f"{r['max_rel_diff_vs_fp64']:21.2e}")
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(record, f, indent=1)
    if opts.png:
        plot(record, opts.png)


if __name__ == "__main__":
    main()
