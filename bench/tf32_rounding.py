#!/usr/bin/env python3
"""How TF32 mode rounds its inputs, beside cuBLAS's TF32 (torch.matmul with TF32 allowed).

A tensor core reading FP32 from shared memory keeps the top 19 bits of each value: it truncates
toward zero.  On data of one sign those truncations do not cancel, and the sum drifts low by
about 2^-11 per operand truncated; rounding to nearest leaves no drift.  This script measures
both the drift (the mean signed error) and the RMS error of each output against float64, on
positive data (uniform in [0, 1)) and on symmetric data (uniform in [-1, 1)), for the four
transposes, for:
  cublas_tf32   torch.matmul with torch.backends.cuda.matmul.allow_tf32 = True
  cublas_fp32   torch.matmul with TF32 off (cuBLAS SGEMM)
  tilegemm_tf32 tilegemm.torch.mm(math="tf32")
  tilegemm_fp32 tilegemm.torch.mm(math="fp32")
Errors are relative to sum |a b| of each output.  Prints a table; --json writes the numbers.

  PYTHONPATH=python python3 bench/tf32_rounding.py [--size N] [--json FILE]
"""
import argparse
import datetime
import json

import torch

import tilegemm.torch as tgt
from torch_overhead import commit  # this folder's; TG_COMMIT, else git


def errors(got, a, b):
    a64, b64 = a.double(), b.double()
    want = a64 @ b64
    scale = a64.abs() @ b64.abs()
    rel = (got.double() - want) / scale
    return rel.mean().item(), rel.pow(2).mean().sqrt().item()


def run(size, data, trans, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    low = 0.0 if data == "positive" else -1.0

    def operand(rows, cols, transposed):
        shape = (cols, rows) if transposed else (rows, cols)
        x = torch.rand(shape, generator=g, device="cuda") * (1.0 - low) + low
        return x.t() if transposed else x

    a = operand(size, size, trans[0] == "T")
    b = operand(size, size, trans[1] == "T")
    out = {}
    for name, fn in (
        ("cublas_tf32", lambda: torch.matmul(a, b)),
        ("cublas_fp32", lambda: torch.matmul(a, b)),
        ("tilegemm_tf32", lambda: tgt.mm(a, b, math="tf32")),
        ("tilegemm_fp32", lambda: tgt.mm(a, b, math="fp32")),
    ):
        torch.backends.cuda.matmul.allow_tf32 = name == "cublas_tf32"
        got = fn()
        torch.cuda.synchronize()
        out[name] = dict(zip(("mean", "rms"), errors(got, a, b)))
    torch.backends.cuda.matmul.allow_tf32 = False
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=2048)
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    for data in ("positive", "symmetric"):
        for trans in ("NN", "NT", "TN", "TT"):
            res = run(args.size, data, trans, seed=len(rows) + 1)
            rows.append({"data": data, "trans": trans, "size": args.size, "errors": res})
    names = list(rows[0]["errors"])
    print(f"{'data':10} {'op':3} " + " ".join(f"{n + ' mean/rms':>26}" for n in names))
    for r in rows:
        cells = " ".join(f"{e['mean']:+12.2e} {e['rms']:11.2e}  " for e in r["errors"].values())
        print(f"{r['data']:10} {r['trans']:3} {cells}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "commit": commit(), "date": datetime.datetime.now(datetime.timezone.utc)
                       .strftime("%Y-%m-%dT%H:%M:%SZ"), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
