#!/usr/bin/env python3
"""Fits the planner's cost model (src/cost_model.h) to benchmark sweeps and writes its rows.

    python3 bench/fit_model.py SWEEP.json [SWEEP.json ...] -o tuning/model_sm_90.tsv
    python3 bench/fit_model.py SWEEP.json --model tuning/model_sm_90.tsv --check JUDGED.json

The sweeps are `tilegemm bench` JSON files of rungs run unsplit (`--split-k 1`), on the random
suite of a tuning seed (scripts/device_plan_sweep.sh).  For every rung and operand orientation
(op(A) along k or not, op(B) along n or not) it picks the blocks resident per SM and the k step
that fit best, and the wave and k-step costs by weighted least squares on the compute-bound
runs; the GPU's launch cost and streaming bandwidth come from all runs.  --check prints how the
model's choice would fare on another sweep (the judged seed): the measured time of the rung it
picks over the fastest measured, per shape.  Pure Python: no packages needed.
"""
import argparse
import json
import math
import sys

OCCUPANCIES = (1, 2, 3, 4)
K_STEPS = (8, 16, 32, 64)
MIN_CLASS_SAMPLES = 12  # fewer runs in an orientation class: fit the rung on all classes


def ceil_div(a, b):
    return -(-a // b)


def normalized(r):
    """(m, n, k, a_k, b_n) of the row-major problem tilegemm's planner sees."""
    row = r["layout"] == "row"
    ta, tb = r["trans"][0], r["trans"][1]
    m, n = (r["m"], r["n"]) if row else (r["n"], r["m"])
    a_k = (ta if row else tb) == "N"
    b_n = (tb if row else ta) == "N"
    return m, n, r["k"], int(a_k), int(b_n)


def load(paths):
    """Runs of rungs with their measured microseconds, keyed by rung name."""
    device, tiles, runs = None, {}, []
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        device = device or doc["device"]
        for r in doc["results"]:
            if r["status"] not in ("OK", "LOWPREC") or r.get("median_ms") is None:
                continue
            algo = r["algo"].split("/")[0]
            split = int(r["algo"].split("/k")[1]) if "/k" in r["algo"] else r.get("split_k", 0)
            m, n, k, a_k, b_n = normalized(r)
            runs.append({"algo": algo, "split": split, "m": m, "n": n, "k": k, "a_k": a_k,
                         "b_n": b_n, "us": r["median_ms"] * 1e3, "cublas_us":
                         (r.get("cublas_median_ms") or float("nan")) * 1e3,
                         "ran": r.get("ran", ""), "key": (r["m"], r["n"], r["k"], r["trans"],
                                                          r["layout"])})
    return device, runs


def bytes_moved(x, slices=1):
    c_passes = slices if slices > 1 else 1
    return 4.0 * (x["m"] * x["k"] + x["k"] * x["n"] + c_passes * x["m"] * x["n"])


def predict(dev, row, tile, sms, x, slices=1):
    """Microseconds, as tg_model_seconds computes them."""
    bm, bn = tile
    tiles = ceil_div(x["m"], bm) * ceil_div(x["n"], bn) * slices
    waves = ceil_div(tiles, sms * row["occupancy"])
    ksteps = ceil_div(ceil_div(x["k"], slices), row["bk"])
    compute = waves * (row["wave_us"] + row["kstep_us"] * ksteps)
    per_us = dev["dram_gbs"] * 1e3
    memory = bytes_moved(x, slices) / per_us
    us = dev["launch_us"] + max(compute, memory)
    if slices > 1:
        us += dev["launch_us"] + 4.0 * x["m"] * x["n"] * (slices + 1) / per_us
    return us


def fit_device(runs):
    times = sorted(x["us"] for x in runs)
    launch = times[max(0, len(times) // 200)]  # the fastest runs: launch and drain alone
    rates = sorted(bytes_moved(x) / (x["us"] - launch) / 1e3 for x in runs if x["us"] > 4 * launch)
    return {"launch_us": round(launch, 2), "dram_gbs": round(rates[int(0.97 * (len(rates) - 1))])}


def fit_rung(dev, tile, sms, runs):
    """Best (occupancy, bk, wave_us, kstep_us) for these runs, by log-error."""
    best = None
    for occ in OCCUPANCIES:
        for bk in K_STEPS:
            # Weighted least squares on the compute-bound runs: y = a * waves + b * waves * ksteps.
            s = [[0.0, 0.0], [0.0, 0.0]]
            t = [0.0, 0.0]
            for x in runs:
                y = x["us"] - dev["launch_us"]
                if y <= 0 or bytes_moved(x) / (dev["dram_gbs"] * 1e3) > 0.8 * y:
                    continue
                waves = ceil_div(ceil_div(x["m"], tile[0]) * ceil_div(x["n"], tile[1]), sms * occ)
                f = (waves, waves * ceil_div(x["k"], bk))
                w = 1.0 / (y * y)
                for i in range(2):
                    t[i] += w * f[i] * y
                    for j in range(2):
                        s[i][j] += w * f[i] * f[j]
            det = s[0][0] * s[1][1] - s[0][1] * s[1][0]
            if det <= 0:
                continue
            a = (t[0] * s[1][1] - t[1] * s[0][1]) / det
            b = (s[0][0] * t[1] - s[1][0] * t[0]) / det
            if b <= 0:
                continue
            if a < 0:  # no fixed cost below zero: refit the slope alone
                a, b = 0.0, t[1] / s[1][1]
            row = {"occupancy": occ, "bk": bk, "wave_us": a, "kstep_us": b}
            err = sum(math.log(predict(dev, row, tile, sms, x) / x["us"]) ** 2 for x in runs)
            if best is None or err < best[0]:
                best = (err, row)
    return best


def fit(runs, tiles, sms):
    dev = fit_device(runs)
    rows = {}
    for algo in sorted({x["algo"] for x in runs if x["split"] == 1 and x["algo"] in tiles}):
        mine = [x for x in runs if x["algo"] == algo and x["split"] == 1]
        pooled = fit_rung(dev, tiles[algo], sms, mine)
        for a_k in (0, 1):
            for b_n in (0, 1):
                cls = [x for x in mine if x["a_k"] == a_k and x["b_n"] == b_n]
                got = fit_rung(dev, tiles[algo], sms, cls) if len(cls) >= MIN_CLASS_SAMPLES else None
                chosen = (got or pooled)
                if chosen:
                    rows[(algo, a_k, b_n)] = chosen[1]
    return dev, rows


def choose(dev, rows, tiles, sms, x, algos):
    best = None
    for algo in algos:
        row = rows.get((algo, x["a_k"], x["b_n"]))
        if row:
            us = predict(dev, row, tiles[algo], sms, x)
            if best is None or us < best[1]:
                best = (algo, us)
    return best


def check(dev, rows, tiles, sms, runs, arith_ok):
    """The model's choice among measured unsplit rungs, per shape, against the fastest."""
    shapes = {}
    for x in runs:
        if x["split"] == 1 and x["algo"] in tiles:
            shapes.setdefault(x["key"], {})[x["algo"]] = x
    loss, vs_cublas = [], []
    for key, by_algo in shapes.items():
        allowed = [a for a in by_algo if arith_ok(a)]
        if not allowed:
            continue
        x = next(iter(by_algo.values()))
        pick = choose(dev, rows, tiles, sms, x, allowed)
        if not pick:
            continue
        fastest = min(by_algo[a]["us"] for a in allowed)
        loss.append(by_algo[pick[0]]["us"] / fastest)
        vs_cublas.append(x["cublas_us"] / by_algo[pick[0]]["us"])
    geo = lambda v: math.exp(sum(math.log(t) for t in v) / len(v))
    print(f"  {len(loss)} shapes: chosen/fastest geo-mean {geo(loss):.3f}, worst {max(loss):.2f}; "
          f"vs cuBLAS geo-mean {geo(vs_cublas):.3f}, >= 0.9x {sum(v >= 0.9 for v in vs_cublas) / len(vs_cublas):.0%}, "
          f"worst {min(vs_cublas):.2f}")


def write(path, device, dev, rows, cc, sources):
    with open(path, "w") as f:
        f.write(f"# tilegemm cost model for {device['name']} (sm_{cc}), fitted by bench/fit_model.py from "
                f"{', '.join(sources)}. Generated: do not edit.\n")
        f.write("# device\tcc\tlaunch_us\tdram_gbs\n")
        f.write(f"device\t{cc}\t{dev['launch_us']}\t{dev['dram_gbs']}\n")
        f.write("# rung\tcc\talgo\ta_k_contiguous\tb_n_contiguous\toccupancy\tbk\twave_us\tkstep_us\n")
        for (algo, a_k, b_n), r in sorted(rows.items()):
            f.write(f"rung\t{cc}\t{algo}\t{a_k}\t{b_n}\t{r['occupancy']}\t{r['bk']}\t"
                    f"{r['wave_us']:.4g}\t{r['kstep_us']:.4g}\n")


def read_model(path):
    dev, rows = None, {}
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        f = line.rstrip("\n").split("\t")
        if f[0] == "device":
            dev = {"launch_us": float(f[2]), "dram_gbs": float(f[3])}
        else:
            rows[(f[2], int(f[3]), int(f[4]))] = {"occupancy": int(f[5]), "bk": int(f[6]),
                                                  "wave_us": float(f[7]), "kstep_us": float(f[8])}
    return dev, rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sweeps", nargs="+")
    ap.add_argument("-o", "--output", help="model file to write")
    ap.add_argument("--model", help="model file to read instead of fitting")
    ap.add_argument("--check", nargs="*", default=[], help="sweeps to judge the choice on")
    ap.add_argument("--tiles", default="tuning/rung_tiles.tsv",
                    help="block tile of each rung (tilegemm algos --tiles)")
    args = ap.parse_args()
    tiles = {}
    for line in open(args.tiles):
        if not line.startswith("#") and line.strip():
            name, bm, bn, arith = line.split()[:4]
            tiles[name] = (int(bm), int(bn), arith)
    arith = {a: t[2] for a, t in tiles.items()}
    tiles = {a: t[:2] for a, t in tiles.items()}
    device, runs = load(args.sweeps)
    sms, cc = device["sm_count"], device["compute_capability"].replace(".", "")
    if args.model:
        dev, rows = read_model(args.model)
    else:
        dev, rows = fit(runs, tiles, sms)
    print(f"device: launch {dev['launch_us']} us, {dev['dram_gbs']} GB/s; {len(rows)} rung rows")
    modes = {"fp32": lambda a: arith.get(a) in ("ffma", "3xtf32"), "strict": lambda a: arith.get(a) == "ffma"}
    for name, sweep in [("fitted", runs)] + [(p, load([p])[1]) for p in args.check]:
        for mode, ok in modes.items():
            print(f"{name}, math {mode}:")
            check(dev, rows, tiles, sms, sweep, ok)
    if args.output and not args.model:
        write(args.output, device, dev, rows, cc, args.sweeps)
        print(f"wrote {args.output}")


if __name__ == "__main__":
    sys.exit(main())
