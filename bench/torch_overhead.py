#!/usr/bin/env python3
"""What a PyTorch user pays per call: tilegemm.torch.mm against the C call it makes and against
torch.matmul, in one process on one GPU.

  per-call wall time  n^3 for n = 64, 256, 1024: `calls` back-to-back calls then one
                      synchronize, the median over `repeats` such runs, divided by `calls`.
                      At small n the GPU waits for the host, so this is the host's cost per
                      call.  "C call" is tg_sgemm through ctypes with every argument ready
                      (the floor for any Python caller), on the same handle and stream.
  event-timed medians n^3 for n = 1024, 4096, 8192: CUDA events around each call, median,
                      with inputs rotated so that they exceed the L2 cache; tilegemm in "fp32"
                      against torch.matmul with TF32 off, and "tf32" against TF32 on.

    python3 bench/torch_overhead.py --json bench/results/torch-overhead.json

Writes JSON with the device, commit (TG_COMMIT, else git), date and PyTorch version, and
prints a table.  No pass/fail: the numbers are for the README and the issue's targets.
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import time

import torch

import tilegemm
import tilegemm.torch as tgt
from tilegemm import _native

L2_BYTES = 50 << 20  # H100: 50 MB


def commit():
    if os.environ.get("TG_COMMIT"):
        return os.environ["TG_COMMIT"]
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def c_call(a, b, out):
    """tg_sgemm on tilegemm.torch's handle, arguments prepared once: the C call alone."""
    h = tgt._handle(a.get_device(), 0)  # the handle on the current stream, "fp32"
    m, k = a.shape
    n = b.shape[1]
    args = (h.ptr, _native.TG_ROW_MAJOR, _native.TG_NO_TRANS, _native.TG_NO_TRANS, m, n, k, 1.0,
            a.data_ptr(), k, b.data_ptr(), n, 0.0, out.data_ptr(), n)
    fn = _native.tg_sgemm
    return lambda: fn(*args)


def wall_us(fn, calls, repeats):
    """Median wall time per call of `calls` back-to-back calls and one synchronize."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        runs.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(runs)


def event_ms(fn, pairs, iters):
    """Median of CUDA-event times of single calls, cycling through the input pairs."""
    for a, b in pairs[:2]:
        fn(a, b)
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(iters)]
    for i, (start, end) in enumerate(events):
        a, b = pairs[i % len(pairs)]
        start.record()
        fn(a, b)
        end.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in events)


def inputs(n, copies):
    return [(torch.randn(n, n, device="cuda"), torch.randn(n, n, device="cuda"))
            for _ in range(copies)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", help="where to write the results")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--iters", type=int, default=30)
    parser.add_argument("--wall-sizes", default="64,256,1024")
    parser.add_argument("--timed-sizes", default="1024,4096,8192")
    opts = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    results = []

    for n in map(int, opts.wall_sizes.split(",")):
        (a, b), = inputs(n, 1)
        out = torch.empty(n, n, device="cuda")
        paths = {"C call": c_call(a, b, out), "tilegemm.torch.mm": lambda: tgt.mm(a, b),
                 "torch.matmul": lambda: torch.matmul(a, b),
                 "tilegemm.sgemm": lambda: tilegemm.sgemm(a, b)}
        for name, fn in paths.items():
            us = wall_us(fn, opts.calls, opts.repeats)
            results.append({"kind": "wall", "n": n, "path": name, "us_per_call": round(us, 2)})

    for n in map(int, opts.timed_sizes.split(",")):
        pairs = inputs(n, max(1, -(-L2_BYTES // (8 * n * n)) + 1))
        flop = 2.0 * n ** 3
        for mode in ("fp32", "tf32"):
            torch.backends.cuda.matmul.allow_tf32 = mode == "tf32"
            torch_ms = event_ms(torch.matmul, pairs, opts.iters)
            tg_ms = event_ms(lambda x, y, mode=mode: tgt.mm(x, y, math=mode), pairs, opts.iters)
            for name, ms in (("torch.matmul", torch_ms), ("tilegemm.torch.mm", tg_ms)):
                results.append({"kind": "events", "n": n, "mode": mode, "path": name,
                                "median_ms": round(ms, 4),
                                "tflops": round(flop / ms / 1e9, 2),
                                "vs_torch": round(torch_ms / ms, 3)})
        torch.backends.cuda.matmul.allow_tf32 = False
        del pairs

    record = {"benchmark": "torch_overhead", "device": torch.cuda.get_device_name(),
              "commit": commit(),
              "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
              "torch": torch.__version__, "tilegemm": tilegemm.version(),
              "calls": opts.calls, "repeats": opts.repeats, "iters": opts.iters,
              "results": results}
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(record, f, indent=1)
    print_table(record)


def print_table(record):
    print(f"{record['device']}, commit {record['commit']}, torch {record['torch']}")
    wall = {(r["n"], r["path"]): r["us_per_call"] for r in record["results"] if r["kind"] == "wall"}
    sizes = sorted({n for n, _ in wall})
    paths = ["C call", "tilegemm.torch.mm", "torch.matmul", "tilegemm.sgemm"]
    print("per-call wall time, us:  " + "".join(f"{p:>19}" for p in paths) + "  mm - C call")
    for n in sizes:
        print(f"  {n:>5}^3                " + "".join(f"{wall[(n, p)]:>19.1f}" for p in paths) +
              f"  {wall[(n, 'tilegemm.torch.mm')] - wall[(n, 'C call')]:>10.1f}")
    print("event-timed median, ms (TFLOP/s), tilegemm.torch.mm against torch.matmul in the "
          "same mode:")
    for r in record["results"]:
        if r["kind"] == "events" and r["path"] == "tilegemm.torch.mm":
            t = next(x for x in record["results"] if x["kind"] == "events" and x["n"] == r["n"]
                     and x["mode"] == r["mode"] and x["path"] == "torch.matmul")
            print(f"  {r['n']:>5}^3 {r['mode']:<5} tilegemm {r['median_ms']:8.3f} "
                  f"({r['tflops']:6.1f})  torch {t['median_ms']:8.3f} ({t['tflops']:6.1f})  "
                  f"{r['vs_torch']:.2f}x")


if __name__ == "__main__":
    main()
