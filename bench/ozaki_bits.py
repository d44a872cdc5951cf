#!/usr/bin/env python3
"""How many moduli the Ozaki scheme II rung needs, by the rule that picks its bits.

The rung (src/ozaki/ozaki2.h) rounds each row of op(A) and each column of op(B) to an integer
of `bits` bits below the line's largest element, and takes enough moduli that their product M
exceeds 2 k 2^(bits_a + bits_b).  This script compares, on the data classes the rung is tested
on, three rules for the bits, by the moduli they take and the errors they leave:

  range   ozaki2.h's range rule: bits from each line's exponent range (e_max - e_min), so that
          every element is within the project's bound (k + 2) 2^-23 sum_p |a_ip b_pj|;
  bound   the same guarantee from the data's own sums: row i needs
              2^(e_max_i - bits - 1) T_j <= 2/5 k 2^-23 S_ij   for every j,
          S_ij = sum_p |a_ip b_pj| (from below: here exactly, on the GPU an INT8 product of
          the operands' leading bits), T_j = sum_p |b_pj| (from above), and the columns of B
          alike; then at least FLOOR bits (FP32 keeps 24), for the RMS error;
  fixed   a fixed count of moduli (8, as GEMMul8's accurate mode) and the bits they carry,
          no guarantee.

For each it reports the moduli, the worst element over its bound (<= 1 keeps the guarantee)
and the RMS error relative to the RMS of C, against a float64 product.  With --floors, the RMS
error at each count of bits (both operands alike) on uniform and line-scaled data, beside
float64's product rounded to float: what sets ozaki2.c's floor on the bits.  C_hat is formed
exactly (int64 products of 16-bit halves), so the errors are the rounding's alone, as the CRT
rebuilds C_hat exactly.  With --blocks, the bits the bound asks when its lower bound of
sum |a b| comes from blocks of B along k (B = 1 is P, the product of leading magnitudes; B = 32
is R, the block-reduced one): block minima of op(A)'s leading magnitudes times block sums of
op(B)'s, shifted into an int8 as ozaki2.h shifts R's, an INT8 product k / B deep.  NumPy only;
no GPU.

  python3 bench/ozaki_bits.py [--k 4096,16384] [--size 64] [--floor 24] [--seed 1]
  python3 bench/ozaki_bits.py --floors [--k 1024,2048,4096,8192,16384] [--size 96] [--seed 7]
  python3 bench/ozaki_bits.py --blocks [--k 4096,16384] [--size 64] [--seed 1]
"""
import argparse
import math

import numpy as np

MODULI = [256, 255, 253, 251, 247, 241, 239, 233, 229, 227, 223, 217, 211, 199, 197, 193]
SHARE_LOG2 = math.log2(5 / 2)  # ozaki2.c's TG_OZ2_SHARE_LOG2


def moduli_needed(k, bits_a, bits_b):
    """ozaki2.c's tg_oz2_moduli_needed."""
    need = 1.0 + math.log2(k) + bits_a + bits_b
    total = 0.0
    for count, m in enumerate(MODULI, 1):
        total += math.log2(m)
        if total > need + 1e-6:
            return count
    return len(MODULI) + 1


def exponents(x):
    """frexp exponents of the nonzero elements' magnitudes, and a mask of the nonzero ones."""
    _, e = np.frexp(np.abs(x).astype(np.float64))
    return e, x != 0


def line_max_exp(x, axis):
    """Each line's e_max (frexp exponent of its largest magnitude)."""
    return np.frexp(np.abs(x).max(axis=axis).astype(np.float64))[1]


def range_bits(a, b, k):
    """ozaki2.h's rule: the widest line range sets the bits (tg_oz2_bits_for_range)."""
    def widest(x, axis):
        e, nz = exponents(x)
        hi = np.where(nz, e, -10**6).max(axis=axis)
        lo = np.where(nz, e, 10**6).min(axis=axis)
        return int(np.where(hi >= lo, hi - lo, 0).max())
    bits = lambda r: max(r + 2, math.ceil(r + 23 + SHARE_LOG2 - math.log2(k) - 1e-9))
    return bits(widest(a, 1)), bits(widest(b, 0))


def bound_bits(a, b, k, floor):
    """The bound rule: each line's bits from S = |A||B| against the other operand's sums."""
    a64, b64 = np.abs(a).astype(np.float64), np.abs(b).astype(np.float64)
    s = a64 @ b64
    t_cols = b64.sum(axis=0)  # T_j = sum_p |b_pj|
    t_rows = a64.sum(axis=1)  # sum_p |a_ip|, for the columns of B
    allow = 0.4 * k * 2.0 ** -23
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio_a = np.where(t_cols[None, :] > 0, s / t_cols[None, :], np.inf).min(axis=1)
        ratio_b = np.where(t_rows[:, None] > 0, s / t_rows[:, None], np.inf).min(axis=0)
    ea, eb = line_max_exp(a, 1), line_max_exp(b, 0)

    def need(e_max, ratio):
        # 2^(e_max - bits - 1) <= allow * ratio  <=>  bits >= e_max - 1 - log2(allow * ratio)
        ok = np.isfinite(ratio) & (ratio > 0)
        bits = np.where(ok, np.ceil(e_max - 1 - np.log2(np.where(ok, allow * ratio, 1.0))), 1)
        return int(max(floor, bits.max()))
    return need(ea, ratio_a), need(eb, ratio_b)


def fixed_bits(k, count):
    """The bits a fixed count of moduli carries (the same for both operands)."""
    total = sum(math.log2(m) for m in MODULI[:count])
    return int(math.floor((total - 1.0 - math.log2(k) - 1e-6) / 2))


def to_int(x, bits, axis):
    """Each line times 2^(bits - e_max), rounded: int64, and the scale's exponents."""
    e_max = line_max_exp(x, axis)
    shift = bits - e_max
    scale = np.ldexp(1.0, np.expand_dims(shift, axis))
    return np.rint(x.astype(np.float64) * scale).astype(np.int64), shift


def exact_product(ah, bh):
    """A_hat B_hat exactly: int64 products of 16-bit halves, combined in long double."""
    a1, a0 = ah >> 16, ah & 0xFFFF
    b1, b0 = bh >> 16, bh & 0xFFFF
    ld = np.longdouble
    high, middle, low = a1 @ b1, (a1 @ b0) + (a0 @ b1), a0 @ b0
    return (high.astype(ld) * ld(2.0 ** 32) + middle.astype(ld) * ld(2.0 ** 16)
            + low.astype(ld))


def errors(a, b, bits_a, bits_b, k):
    ah, s = to_int(a, bits_a, 1)
    bh, t = to_int(b, bits_b, 0)
    c_hat = exact_product(ah, bh)
    c = (c_hat * np.ldexp(np.longdouble(1.0), -(s[:, None] + t[None, :]))).astype(np.float32)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    bound = (k + 2) * 2.0 ** -23 * (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64))
    err = np.abs(c.astype(np.float64) - ref)
    with np.errstate(divide="ignore", invalid="ignore"):
        worst = float(np.where(bound > 0, err / bound, np.where(err > 0, np.inf, 0.0)).max())
    rms = float(np.sqrt(np.mean(err ** 2)) / np.sqrt(np.mean(ref ** 2)))
    return worst, rms


def data(kind, rng, m, n, k):
    if kind == "uniform":
        return rng.uniform(-1, 1, (m, k)), rng.uniform(-1, 1, (k, n))
    if kind == "positive":
        return rng.uniform(0, 1, (m, k)), rng.uniform(0, 1, (k, n))
    if kind == "spread":  # elements over 2^-10..2^10 within a line
        spread = lambda shape: rng.uniform(-1, 1, shape) * np.exp2(rng.uniform(-10, 10, shape))
        return spread((m, k)), spread((k, n))
    if kind == "scaled-lines":  # each line scaled over 2^-60..2^60
        a = rng.uniform(-1, 1, (m, k)) * np.exp2(rng.integers(-60, 61, (m, 1)))
        b = rng.uniform(-1, 1, (k, n)) * np.exp2(rng.integers(-60, 61, (1, n)))
        return a, b
    if kind == "cancelling":  # pairs of terms that cancel to a few bits
        a = rng.uniform(-1, 1, (m, k))
        b = rng.uniform(-1, 1, (k, n))
        b[1::2] = -b[0::2][: b[1::2].shape[0]] * (1 + rng.uniform(-1e-3, 1e-3, b[1::2].shape))
        a[:, 1::2] = a[:, 0::2][:, : a[:, 1::2].shape[1]]
        return a, b
    raise ValueError(kind)


def floors(ks, size, rng):
    """RMS error by bits, both operands alike, on full-mantissa uniform and line-scaled data."""
    widths = range(23, 29)
    print(f"m = n = {size}; RMS error relative to C's RMS; rounded: float64's product to float")
    print(f"{'data':>13} {'k':>6} {'rounded':>9} " + " ".join(f"{b:>4} bits" for b in widths))
    for kind in ("uniform", "scaled-lines"):
        for k in ks:
            a, b = data(kind, rng, size, size, k)
            a, b = a.astype(np.float32), b.astype(np.float32)
            ref = a.astype(np.float64) @ b.astype(np.float64)
            size_rms = np.sqrt(np.mean(ref ** 2))
            rounded = np.sqrt(np.mean((ref.astype(np.float32) - ref) ** 2)) / size_rms
            cells = [f"{errors(a, b, bits, bits, k)[1]:>9.3e}" for bits in widths]
            print(f"{kind:>13} {k:>6} {rounded:>9.3e} " + " ".join(cells), flush=True)


def leading(x, axis):
    """Leading magnitudes |x| 2^(7 - e_max) of each line (rows: axis 1), rounded down and up."""
    e_max = line_max_exp(x, axis)
    y = np.abs(x.astype(np.float64)) * np.exp2(7.0 - np.expand_dims(e_max, axis))
    return np.floor(y), np.ceil(y)


def block_bits(a, b, k, blk):
    """The most bits either operand's bound asks (ozaki2.h's tg_oz2_bound_bits) over the
    outputs, the lower bound from blocks of blk along k; None where an output's bound is 0."""
    m, n = a.shape[0], b.shape[1]
    a_down, a_up = leading(a, 1)
    b_down, b_up = leading(b.T, 1)  # B's columns as rows
    blocks = -(-k // blk)
    pad = blocks * blk - k
    a_down = np.pad(a_down, ((0, 0), (0, pad)), constant_values=np.inf)
    b_down = np.pad(b_down, ((0, 0), (0, pad)))
    least = a_down.reshape(m, blocks, blk).min(axis=2)
    least[np.isinf(least)] = 0
    shift = max(0, math.ceil(math.log2(127 * blk + 1)) - 7)  # B's sums into an int8
    sums = np.floor(b_down.reshape(n, blocks, blk).sum(axis=2) / 2 ** shift)
    lower = (least @ sums.T) * 2 ** shift
    if (lower <= 0).any():
        return None
    worst = 0
    for other in (b_up.sum(axis=1)[None, :], a_up.sum(axis=1)[:, None]):  # A's bits, B's
        bits = 28 - np.floor(np.log2(k * lower / (5 * other)))
        worst = max(worst, int(bits.max()))
    return worst


def blocks_table(ks, size, rng):
    widths = (1, 2, 4, 8, 16, 32)
    print(f"m = n = {size}; the most bits an operand's bound asks, by the block of its lower "
          "bound (- where the bound is 0 for an output)")
    print(f"{'data':>13} {'k':>6} " + " ".join(f"{'B=' + str(w):>5}" for w in widths))
    for k in ks:
        for kind in ("uniform", "positive", "spread", "scaled-lines", "cancelling"):
            a, b = data(kind, rng, size, size, k)
            a, b = a.astype(np.float32), b.astype(np.float32)
            cells = [block_bits(a, b, k, w) for w in widths]
            print(f"{kind:>13} {k:>6} " + " ".join(f"{'-' if c is None else c:>5}" for c in cells),
                  flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", default=None, help="default 4096,16384 (1024 to 16384 with --floors)")
    ap.add_argument("--size", type=int, default=None, help="m = n: default 64 (96 with --floors)")
    ap.add_argument("--floor", type=int, default=24, help="the bound rule's least bits")
    ap.add_argument("--fixed", type=int, default=8, help="the fixed rule's moduli")
    ap.add_argument("--seed", type=int, default=None, help="default 1 (7 with --floors)")
    ap.add_argument("--floors", action="store_true", help="RMS error by bits instead")
    ap.add_argument("--blocks", action="store_true", help="the bound's bits by its block instead")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed if args.seed is not None else 7 if args.floors else 1)
    ks = [int(x) for x in (args.k or ("1024,2048,4096,8192,16384" if args.floors
                                      else "4096,16384")).split(",")]
    size = args.size or (96 if args.floors else 64)
    if args.floors:
        floors(ks, size, rng)
        return
    if args.blocks:
        blocks_table(ks, size, rng)
        return
    print(f"m = n = {size}; worst: the largest error over the bound (k + 2) 2^-23 |A||B|; "
          "rms: relative to C's")
    print(f"{'data':>13} {'k':>6} | {'range: bits moduli worst rms':>36} | "
          f"{'bound: bits moduli worst rms':>36} | {'fixed: bits moduli worst rms':>36}")
    for k in ks:
        for kind in ("uniform", "positive", "spread", "scaled-lines", "cancelling"):
            a, b = data(kind, rng, size, size, k)
            a, b = a.astype(np.float32), b.astype(np.float32)
            cells = []
            rules = [("range", range_bits(a, b, k)), ("bound", bound_bits(a, b, k, args.floor)),
                     ("fixed", (fixed_bits(k, args.fixed),) * 2)]
            for _, (ba, bb) in rules:
                if max(ba, bb) > 40:  # beyond the exact product here (int64 sums of halves)
                    cells.append(f"{ba:>4}/{bb:<4} {'-':>7} {'-':>9} {'-':>9}")
                    continue
                worst, rms = errors(a, b, ba, bb, k)
                cells.append(f"{ba:>4}/{bb:<4} {moduli_needed(k, ba, bb):>7} {worst:>9.2e} "
                             f"{rms:>9.2e}")
            print(f"{kind:>13} {k:>6} | " + " | ".join(cells))


if __name__ == "__main__":
    main()
