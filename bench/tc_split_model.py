#!/usr/bin/env python3
"""A model of the 3xTF32 split's error at short k, beside FP32 FMA's (NumPy, no GPU).

The fp32 mode refuses 3xTF32 under k = 256 (plan.c's TG_3XTF32_MIN_K): measured on an H100,
its RMS error there exceeds the FFMA rungs' (1.8x at k = 64).  This asks which part of the
split that error comes from, under a model of the tensor core's sum, so that a change can be
weighed before a kernel is written:

  FFMA       a chain of FP32 fused multiply-adds, rounded to nearest
  3 products small(A) big(B), big(A) small(B), big(A) big(B), as rung 9 issues them
  4 products the same and small(A) small(B)

Each part is A's or B's value rounded to nearest TF32 (10 explicit bits), the small part that of
the remainder.  The tensor core's sum is modelled per k = 8 step: the accumulator and the 8
products aligned to the largest of them, each truncated to 24 bits there, summed exactly,
then truncated to FP32.  Every PROMOTE of k the partial sum is added into an FP32 sum, rounded
to nearest (rung 9 promotes every 32).  The model is an assumption, not the hardware; it
gives 1.6x FFMA's error at k = 64 and 2.3x at k = 16 on wide-range data, near the measured
figures.

Errors are RMS of |c - ref| / sum |a b| over SAMPLES dot products, uniform in [-1, 1)
("uniform") or that times 2^e, e uniform in [-12, 12] ("wide"), as bench/accuracy draws them;
printed as the split's error over FFMA's.

  python3 bench/tc_split_model.py [--samples S] [--seed X]
"""
import argparse

import numpy as np


def tf32(x):
    """x (float32) rounded to nearest TF32, ties away from zero (cvt.rna.tf32.f32)."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + (1 << 12)) & ~np.uint64((1 << 13) - 1)
    return bits.astype(np.uint32).view(np.float32)


def to_float32_toward_zero(x):
    f = x.astype(np.float32)
    over = np.abs(f.astype(np.float64)) > np.abs(x)
    return np.where(over, np.nextafter(f, np.float32(0)), f)


def tensor_core_step(acc, products):
    """acc plus 8 exact products, aligned to the largest and truncated (the model above)."""
    terms = np.concatenate([acc.astype(np.float64)[:, None], products], axis=1)
    exponent = np.frexp(np.abs(terms).max(axis=1))[1]
    quantum = np.ldexp(1.0, exponent - 24)[:, None]
    return to_float32_toward_zero((np.trunc(terms / quantum) * quantum).sum(axis=1))


def split_error(a, b, products, promote):
    a_big, b_big = tf32(a), tf32(b)
    a_small, b_small = tf32(a - a_big), tf32(b - b_big)
    pairs = [(a_small, b_big), (a_big, b_small), (a_big, b_big)]
    if products == 4:
        pairs.insert(0, (a_small, b_small))
    total = np.zeros(a.shape[0], np.float32)
    for t in range(0, a.shape[1], promote):
        acc = np.zeros(a.shape[0], np.float32)
        for x, y in pairs:
            for s in range(t, min(t + promote, a.shape[1]), 8):
                acc = tensor_core_step(acc, x[:, s:s + 8].astype(np.float64) * y[:, s:s + 8])
        total = (total.astype(np.float64) + acc).astype(np.float32)
    return total


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print("data     k  FFMA RMS   3 products, promote 32 / 8   4 products, promote 32 / 8")
    for data in ("uniform", "wide"):
        for k in (16, 64, 128, 256):
            a = rng.uniform(-1, 1, (args.samples, k)).astype(np.float32)
            b = rng.uniform(-1, 1, (args.samples, k)).astype(np.float32)
            if data == "wide":
                a = (a * 2.0 ** rng.integers(-12, 13, a.shape)).astype(np.float32)
                b = (b * 2.0 ** rng.integers(-12, 13, b.shape)).astype(np.float32)
            a64, b64 = a.astype(np.float64), b.astype(np.float64)
            ref, scale = (a64 * b64).sum(axis=1), np.abs(a64 * b64).sum(axis=1)

            def rms(c):
                return np.sqrt(np.mean(((c - ref) / scale) ** 2))

            chain = np.zeros(args.samples, np.float32)
            for i in range(k):
                chain = (chain.astype(np.float64) + a64[:, i] * b64[:, i]).astype(np.float32)
            ffma = rms(chain)
            ratios = [rms(split_error(a, b, n, p)) / ffma for n in (3, 4) for p in (32, 8)]
            print(f"{data:7s} {k:4d}  {ffma:.2e}   {ratios[0]:5.2f} / {ratios[1]:5.2f}"
                  f"                {ratios[2]:5.2f} / {ratios[3]:5.2f}")


if __name__ == "__main__":
    main()
