#!/usr/bin/env python3
"""Fits the planner's cost model (src/plan/cost_model.h) to benchmark sweeps and writes its rows.

    python3 bench/fit_model.py SWEEP.json [SWEEP.json ...] -o tuning/model_sm_90.tsv
    python3 bench/fit_model.py SWEEP.json --model tuning/model_sm_90.tsv --check JUDGED.json
    python3 bench/fit_model.py SWEEP.json --add-to tuning/model_sm_90.tsv --rungs NEW,...
    ... --cuts DUMP   (test_plan_regret CORPUS --dump DUMP, of a build with the rungs)

The sweeps are `tilegemm bench` JSON files of rungs run unsplit (`--split-k 1`), on the random
suite of a tuning seed (`tilegemm bench --suite random --seed S --split-k 1 --algo ...`).
For every rung and operand orientation (op(A) along k or not, op(B) along n or not) it fits the wave and k-step costs by weighted least
squares on the compute-bound runs, with the blocks resident per SM and the k step that fit the
rung's runs best, and a k step no faster than the rung's best measured rate allows (a class
measured on few or small shapes must not promise more); the GPU's launch cost and streaming
bandwidth come from all runs.  --cross-validate fits on half the shapes and checks on the
other half, both ways: what to expect on shapes the fit never saw.  --check prints how the
model's choice would fare on another sweep (the judged seed): the measured time of the rung it
picks over the fastest measured, per shape.  No packages needed; it predicts with the
planner's own formula through libtilegemm_model_eval (src/plan/model_eval.c: build that target
first), and says which C-write rates it could not measure or held at a bound.  With --cuts it
counts each run's tiles and staged bytes as the planner does (a rung that runs a problem turned,
rung 9's planes: tg_model_block_tile, tg_staged_bytes), adds C's writes to the arithmetic of
a rung that stores C after its products (tg_rung.phases, TG_PHASES_STORES_AFTER), takes all its
traffic off the arithmetic of a rung whose passes and products run in turn (TG_PHASES_IN_TURN),
and counts waves in the blocks an SM holds (tg_rung.blocks_per_sm); without, the tiles of --tiles unturned, nothing
staged, C's writes overlapping the arithmetic, and one block an SM.
"""
import argparse
import ctypes
import json
import math
import os
import pathlib
import sys
import zlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
OCCUPANCIES = (1, 2, 3, 4)
K_STEPS = (8, 16, 32, 64)
MIN_CLASS_SAMPLES = 12  # fewer runs in an orientation class: fit the rung on all classes
PEAK_MARGIN = 1.1  # a full wave may run this much faster than the rung was ever measured
C_RATE_MARGIN = 1.3  # writes of C may beat the streaming rate, read and write mixed, by this
MEMORY_BOUND = 0.8  # runs whose bytes take longer than this share of their time are the memory's, not the rung's
# The rungs whose stores write C 16 bytes at a time where its rows allow (store_result_run4;
# cost_model.h, tg_model_c_wide): their C rates are fitted in each alignment class.
PHASES_IN_TURN = 2  # tg_phases (src/cuda/registry.h): passes and products one after another
WIDE_STORE_RUNGS = ("blocktile", "warptile", "ffma", "skinny", "shortk")


def ceil_div(a, b):
    return -(-a // b)


def tile_count(x):
    """x's block tiles (cost_model.h, tg_model_tiles: the sweeps' calls are one item, unsplit)."""
    return ceil_div(x["m"], x["tile"][0]) * ceil_div(x["n"], x["tile"][1])


def waves(x, sms, occupancy):
    """The waves of x's tiles as the formula counts them (cost_model.h, tg_model_waves)."""
    model_eval()
    return _WAVES(tile_count(x), sms, occupancy, x.get("blocks_per_sm", 1))


def read_cuts(path):
    """{(algo, m, n, k, a_k, b_n): ((rows, cols), staged bytes, phases, blocks an SM holds)}:
    the block tile, workspace bytes, how its phases meet (tg_phases) and blocks an SM the
    planner's model counts for each unsplit entry of a test_plan_regret --dump (a rung that
    runs a problem turned cuts it along the other sides; rung 9's planes; rung 7 stores C after
    its products and rung 11 runs its passes and products in turn; rung 4's two-block rungs,
    tg_rung.blocks_per_sm)."""
    cases, cuts = {}, {}
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if f[0] == "case":
            cases[f[1]] = tuple(int(v) for v in f[3:8])
        elif f[0] == "entry" and f[3] == "1":
            cuts[(f[2],) + cases[f[1]]] = ((int(f[-5]), int(f[-4])), float(f[-3]), int(f[-2]),
                                           int(f[-1]))
    return cuts


def cut(runs, tiles, cuts):
    """Gives each run the block tile, staged bytes, order of C's stores and blocks an SM the
    planner counts for it: from cuts where it has the run's problem, else the rung's registry
    tile, unturned, no staged bytes, stores that overlap the arithmetic, and one block an SM."""
    missing = 0
    for x in runs:
        got = cuts.get((x["algo"], x["m"], x["n"], x["k"], x["a_k"], x["b_n"])) if cuts else None
        missing += cuts is not None and got is None and x["algo"] in tiles
        x["tile"], x["staged"], x["phases"], x["blocks_per_sm"] = got or (
            tiles.get(x["algo"]), 0.0, 0, 1)
    if missing:
        print(f"fit_model.py: {missing} runs not in --cuts: their rung's tile unturned, nothing "
              "staged", file=sys.stderr)


def normalized(r):
    """(m, n, k, a_k, b_n) of the row-major problem tilegemm's planner sees."""
    row = r["layout"] == "row"
    ta, tb = r["trans"][0], r["trans"][1]
    m, n = (r["m"], r["n"]) if row else (r["n"], r["m"])
    a_k = (ta if row else tb) == "N"
    b_n = (tb if row else ta) == "N"
    return m, n, r["k"], int(a_k), int(b_n)


def load(paths):
    """Runs of rungs with their measured microseconds.  A rung's run of a case comes from the
    last sweep that has that case: a rung measured again after a change replaces its old data,
    and sweeps of different cases (a re-timing split by layout) all count."""
    device, runs = None, []
    newest = {}
    docs = []
    for index, path in enumerate(paths):
        with open(path) as f:
            docs.append(json.load(f))
        for r in docs[-1]["results"]:
            newest[run_key(r)] = index
    for index, doc in enumerate(docs):
        device = device or doc["device"]
        for r in doc["results"]:
            if r["status"] not in ("OK", "LOWPREC") or r.get("median_ms") is None:
                continue
            if newest[run_key(r)] != index:
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


def run_key(r):
    """A rung's run of one case: the rung, the shape, its transposes and layout."""
    return (r["algo"].split("/")[0], r["m"], r["n"], r["k"], r["trans"], r["layout"])


def bytes_moved(x):
    """Bytes of an unsplit run: A and B read, C written, and what the rung stages."""
    return 4.0 * (x["m"] * x["k"] + x["k"] * x["n"] + x["m"] * x["n"]) + x.get("staged", 0.0)


def model_eval():
    """The planner's own formula, tg_model_seconds (src/plan/cost_model.h), through
    libtilegemm_model_eval (src/plan/model_eval.c): the fit never re-implements it."""
    global _MODEL_EVAL
    if _MODEL_EVAL is None:
        names = [os.environ.get("TILEGEMM_MODEL_EVAL", "")] + [
            str(p) for p in sorted(ROOT.glob("build*/libtilegemm_model_eval.so"))]
        for name in names:
            if name and os.path.exists(name):
                lib = ctypes.CDLL(name)
                break
        else:
            sys.exit("fit_model.py: build the target tilegemm_model_eval first (cmake --build "
                     "build --target tilegemm_model_eval), or name its .so in TILEGEMM_MODEL_EVAL")
        f = lib.tg_model_eval_us
        f.restype = ctypes.c_double
        f.argtypes = [ctypes.c_double, ctypes.c_double, ctypes.c_int, ctypes.c_int,
                      ctypes.c_double, ctypes.c_double, ctypes.c_double, ctypes.c_double,
                      ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_longlong,
                      ctypes.c_longlong, ctypes.c_longlong, ctypes.c_longlong, ctypes.c_int,
                      ctypes.c_int, ctypes.c_double, ctypes.c_int, ctypes.c_int]
        _MODEL_EVAL = f
        global _KSTEPS, _WAVES, _C_WIDE
        _KSTEPS = lib.tg_model_eval_ksteps
        _KSTEPS.restype = ctypes.c_double
        _KSTEPS.argtypes = [ctypes.c_longlong, ctypes.c_int]
        _WAVES = lib.tg_model_eval_waves
        _WAVES.restype = ctypes.c_double
        _WAVES.argtypes = [ctypes.c_double, ctypes.c_int, ctypes.c_int, ctypes.c_int]
        _C_WIDE = lib.tg_model_eval_c_wide
        _C_WIDE.restype = ctypes.c_int
        _C_WIDE.argtypes = [ctypes.c_longlong]
    return _MODEL_EVAL


def ksteps(k, bk):
    """The k steps the formula counts (cost_model.h, tg_model_ksteps)."""
    model_eval()
    return _KSTEPS(k, bk)


def c_wide(x):
    """Whether x's C (packed: rows n floats apart) takes the wide C rate (tg_model_c_wide)."""
    model_eval()
    return bool(_C_WIDE(x["n"]))


_MODEL_EVAL = _KSTEPS = _WAVES = _C_WIDE = None


def predict(dev, row, sms, x, slices=1):
    """Microseconds, as tg_model_seconds computes them (beta = 0 and C packed, as the sweeps
    run: its rows n floats apart), on the run's block tile and staged bytes (cut)."""
    c_gbs = row.get("c_gbs", dev["dram_gbs"])
    return model_eval()(dev["launch_us"], dev["dram_gbs"], row["occupancy"], row["bk"],
                        row["wave_us"], row["kstep_us"], c_gbs, row.get("c_wide_gbs", c_gbs),
                        x["tile"][0], x["tile"][1], sms, x["m"], x["n"], x["k"], x["n"], slices,
                        0, x.get("staged", 0.0), x.get("phases", 0),
                        x.get("blocks_per_sm", 1))


def fit_device(runs, dram_gbs=None):
    """Launch cost from the fastest runs; the memory floor is the measured copy bandwidth when
    given (the roofline: each rung's own rate then shows in its fitted k step), else the 97th
    percentile of the rates the sweep reached."""
    times = sorted(x["us"] for x in runs)
    launch = times[max(0, len(times) // 200)]  # the fastest runs: launch and drain alone
    rates = sorted(bytes_moved(x) / (x["us"] - launch) / 1e3 for x in runs if x["us"] > 4 * launch)
    return {"launch_us": round(launch, 2),
            "dram_gbs": round(dram_gbs or rates[int(0.97 * (len(rates) - 1))])}


def c_write_us(x, sms, rates):
    """Microseconds of C's writes in x at the row's rates (c_gbs, c_wide_gbs), from the SMs with
    a block (tg_model_seconds)."""
    busy = min(1.0, tile_count(x) / sms)
    return 4.0 * x["m"] * x["n"] / (rates[c_wide(x)] * 1e3 * busy)


def fit_rung(dev, sms, runs, shapes=None, kstep_floor=None, c_rates=None):
    """Best (occupancy, bk, wave_us, kstep_us) for these runs, by log-error.

    shapes: the (occupancy, bk) pairs to try (default: all).  kstep_floor(occupancy, bk): the
    shortest k step the rung's measured peak allows; a fit below it is refitted with the k step
    held there, so a class measured on few or small shapes cannot promise more than the rung
    ever ran at.  c_rates: (c_gbs, c_wide_gbs) at which a rung that stores C after its products
    or runs its phases in turn (x["phases"]) writes it, taken off its runs' times first (default:
    the streaming rate), and for the latter all its other traffic too."""
    c_rates = c_rates or (dev["dram_gbs"], dev["dram_gbs"])
    best = None
    for occ, bk in shapes or [(o, k) for o in OCCUPANCIES for k in K_STEPS]:
        # Weighted least squares on the compute-bound runs: y = a * waves + b * waves * ksteps.
        s = [[0.0, 0.0], [0.0, 0.0]]
        t = [0.0, 0.0]
        used = []
        for x in runs:
            y = x["us"] - dev["launch_us"]
            moved = bytes_moved(x)
            if x["phases"]:
                y -= c_write_us(x, sms, c_rates)
                moved -= 4.0 * x["m"] * x["n"]
            if x["phases"] == PHASES_IN_TURN:  # the passes add to the products: take them off
                y -= moved / (dev["dram_gbs"] * 1e3)
                moved = 0.0
            if y <= 0 or moved / (dev["dram_gbs"] * 1e3) > MEMORY_BOUND * y:
                continue
            wv = waves(x, sms, occ)
            f = (wv, wv * ksteps(x["k"], bk))
            used.append((f, y))
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
        floor = kstep_floor(occ, bk) if kstep_floor else 0.0
        if b < floor:  # hold the k step at the rung's peak and refit the wave cost
            b = floor
            a = sum((y - b * f[1]) * f[0] / (y * y) for f, y in used) / s[0][0]
        if b <= 0:
            continue
        if a < 0:  # no fixed cost below zero: refit the slope alone
            a, b = 0.0, max(t[1] / s[1][1], floor)
        row = {"occupancy": occ, "bk": bk, "wave_us": a, "kstep_us": b}
        rated = dict(row, c_gbs=c_rates[0], c_wide_gbs=c_rates[1])
        err = sum(math.log(predict(dev, rated, sms, x) / x["us"]) ** 2 for x in runs)
        if best is None or err < best[0]:
            best = (err, row)
    return best


def fit_c_rate(dev, row, sms, runs):
    """The rate at which the rung writes C, GB/s: the median over its runs that the stores
    dominate (the fitted compute under half the time), of C's bytes over the time left after
    reading A and B at the streaming rate (or, where C is stored after the products, after the
    longer of that and the compute).  The streaming rate when there are too few such runs."""
    rates = []
    for x in runs:
        y = x["us"] - dev["launch_us"]
        compute = waves(x, sms, row["occupancy"]) * (row["wave_us"] + row["kstep_us"] * ksteps(x["k"], row["bk"]))
        c_bytes = 4.0 * x["m"] * x["n"]
        reads = (bytes_moved(x) - c_bytes) / (dev["dram_gbs"] * 1e3)
        left = y - (compute + reads if x["phases"] == PHASES_IN_TURN
                    else max(compute, reads) if x["phases"] else reads)
        if compute < 0.5 * y and left > 0 and c_bytes >= 1 << 22:
            rates.append(c_bytes / left / 1e3)
    if len(rates) < 3:
        return dev["dram_gbs"], "not measured: the streaming rate stands in"
    rate = sorted(rates)[len(rates) // 2]
    bounded = min(max(rate, 0.05 * dev["dram_gbs"]), C_RATE_MARGIN * dev["dram_gbs"])
    return bounded, None if bounded == rate else f"pinned at its bound ({rate:.0f} measured)"


def fit_wide_rate(dev, row, sms, rung_runs, c_gbs):
    """(c_wide_gbs, its note) of a wide-store rung's row: c_gbs scaled by the ratio of the
    rung's rates in and outside the wide class (tg_model_c_wide: C packed, so rows n floats
    apart) over its runs in every orientation, as this row counts their compute: its stores do
    not turn on how A and B lie, and one orientation has few wide runs that the stores
    dominate.  c_gbs itself where either rate, or c_gbs, was not measured."""
    got = [fit_c_rate(dev, row, sms, [x for x in rung_runs if c_wide(x) == w])
           for w in (True, False)]
    if c_gbs >= dev["dram_gbs"] or any((note or "").startswith("not measured") for _, note in got):
        return c_gbs, "not measured apart: c_gbs stands in"
    return c_gbs * got[0][0] / got[1][0], None


def fit(runs, tiles, sms, dram_gbs=None, dev=None):
    """One (occupancy, bk) per rung from all its runs; wave and k-step costs per orientation
    class, no faster per k step than the rung's best measured rate.  A rung that stores C after
    its products has its costs fitted again with C's writes at the rates first fitted taken off,
    and its rates fitted again.  dev: the device's launch cost and memory floor to fit against
    (default: fitted from the runs)."""
    dev = dev or fit_device(runs, dram_gbs)
    rows = {}
    for algo in sorted({x["algo"] for x in runs if x["split"] == 1 and x["algo"] in tiles}):
        mine = [x for x in runs if x["algo"] == algo and x["split"] == 1]
        bm, bn = tiles[algo]
        # The rung's peak, flop a us, from runs long enough in k for arithmetic to set the time:
        # a rung that runs only short k (shortk128) has no peak to hold its k step to.
        # A rung whose passes and products run in turn: its products' rate, the passes taken off.
        def arithmetic_us(x):
            if x["phases"] != PHASES_IN_TURN:
                return x["us"]
            return x["us"] - dev["launch_us"] - bytes_moved(x) / (dev["dram_gbs"] * 1e3)
        bound = [2.0 * x["m"] * x["n"] * x["k"] / arithmetic_us(x) for x in mine
                 if x["k"] >= 256 and arithmetic_us(x) > 0]
        peak = max(bound) if len(bound) >= MIN_CLASS_SAMPLES else None
        floor = (lambda occ, bk: sms * occ * 2.0 * bm * bn * bk / (PEAK_MARGIN * peak)) if peak else None
        pooled = fit_rung(dev, sms, mine, kstep_floor=floor)
        if not pooled:
            continue
        shape = [(pooled[1]["occupancy"], pooled[1]["bk"])]
        for a_k in (0, 1):
            for b_n in (0, 1):
                cls = [x for x in mine if x["a_k"] == a_k and x["b_n"] == b_n]
                row = None
                for _ in range(2 if any(x["phases"] for x in mine) else 1):
                    rates = row and (row["c_gbs"], row.get("c_wide_gbs", row["c_gbs"]))
                    got = (fit_rung(dev, sms, cls, shape, floor, rates)
                           if len(cls) >= MIN_CLASS_SAMPLES else None)
                    row = dict((got or (fit_rung(dev, sms, mine, shape, floor, rates) if rates
                                        else pooled))[1])
                    row["c_gbs"], row["c_gbs_note"] = fit_c_rate(
                        dev, row, sms, cls if len(cls) >= MIN_CLASS_SAMPLES else mine)
                    if algo.startswith(WIDE_STORE_RUNGS):
                        row["c_wide_gbs"], row["c_wide_gbs_note"] = fit_wide_rate(
                            dev, row, sms, mine, row["c_gbs"])
                rows[(algo, a_k, b_n)] = row
    return dev, rows


def choose(dev, rows, tiles, sms, x, algos):
    best = None
    for algo in algos:
        row = rows.get((algo, x["a_k"], x["b_n"]))
        if row:
            us = predict(dev, row, sms, x)
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


def write(path, device, dev, rows, cc, sources, dram_gbs=None):
    floor = f", with --dram-gbs {dram_gbs:g}" if dram_gbs else ""
    with open(path, "w") as f:
        f.write(f"# tilegemm cost model for {device['name']} (sm_{cc}), fitted by bench/fit_model.py from "
                f"{', '.join(sources)}{floor}. Generated: do not edit.\n")
        f.write("# device\tcc\tlaunch_us\tdram_gbs\n")
        f.write(f"device\t{cc}\t{dev['launch_us']}\t{dev['dram_gbs']}\n")
        # A rate the fit could not measure, or held at a bound, is said here and on stderr, not
        # passed off as a measurement.
        for note in rate_notes(rows):
            f.write(note)
            print(f"fit_model.py: {note[2:-1]}", file=sys.stderr)
        f.write(COLUMNS)
        f.writelines(rung_line(cc, key, r) for key, r in sorted(rows.items()))


COLUMNS = ("# rung\tcc\talgo\ta_k_contiguous\tb_n_contiguous\toccupancy\tbk\twave_us\tkstep_us\t"
           "c_gbs\tc_wide_gbs\n")


def rung_line(cc, key, r):
    algo, a_k, b_n = key
    return (f"rung\t{cc}\t{algo}\t{a_k}\t{b_n}\t{r['occupancy']}\t{r['bk']}\t"
            f"{r['wave_us']:.4g}\t{r['kstep_us']:.4g}\t{r['c_gbs']:.0f}\t"
            f"{r.get('c_wide_gbs', r['c_gbs']):.0f}\n")


def rate_notes(rows):
    """A rate the fit could not measure, or held at a bound, is said in a comment line, not
    passed off as a measurement."""
    return [f"# {rate} of {algo} ({a_k}, {b_n}) {r[rate + '_note']}\n"
            for (algo, a_k, b_n), r in sorted(rows.items()) for rate in ("c_gbs", "c_wide_gbs")
            if r.get(rate + "_note")]


def note_order(line):
    """Rate notes sorted by rung and orientation, c_gbs before c_wide_gbs."""
    return line.split()[3:6] + line.split()[1:2]


def is_note(line):
    """A rate note ("# c_gbs of RUNG (a_k, b_n) ..."), not a header line naming rates' sources
    ("# c_wide_gbs of RUNG, RUNG, ...: by ...")."""
    words = line.split()
    return words[1:3] in (["c_gbs", "of"], ["c_wide_gbs", "of"]) and words[4:5] in (["(0,"], ["(1,"])


def add_rows(path, rows, sources):
    """Rewrites the model file at path with these rows in place of its rows of the same rungs
    (a rung new to the file, or re-timed), and a comment naming their sweeps."""
    algos = sorted({algo for algo, _, _ in rows})
    kept = []
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if f[0] == "rung" and f[2] in algos:
            continue
        if is_note(line) and line.split()[3] in algos:
            continue
        kept.append(line)
    cc = next(line.split("\t")[1] for line in kept if line.startswith("device\t"))
    header = [line for line in kept if line.startswith("#") and not is_note(line)]
    body = [line for line in kept if not line.startswith("#")]
    notes = sorted([line for line in kept if is_note(line)] + rate_notes(rows),
                   key=note_order)
    added = [rung_line(cc, key, r) for key, r in sorted(rows.items())]
    columns = [COLUMNS]
    header = [line for line in header if not line.startswith("# rung\t")]
    header.append(f"# rows of {', '.join(algos)} fitted by bench/fit_model.py --add-to from "
                  f"{', '.join(sources)}, against the device row above\n")
    device_rows = [line for line in body if line.startswith("device\t")]
    rung_rows = sorted([line for line in body if line.startswith("rung\t")] + added,
                       key=lambda line: line.split("\t")[2:5])
    with open(path, "w") as f:
        f.writelines([line for line in header if not line.startswith("# device\t")] +
                     ["# device\tcc\tlaunch_us\tdram_gbs\n"] + device_rows + notes + columns +
                     rung_rows)


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
                                                  "wave_us": float(f[7]), "kstep_us": float(f[8]),
                                                  "c_gbs": float(f[9]),
                                                  "c_wide_gbs": float(f[-1])}
    return dev, rows


def refit_c_rates(path, runs, sms, sources):
    """Rewrites the model file at path with c_wide_gbs of its wide-store rungs' rows fitted on
    these runs, their other fields as they were."""
    dev, rows = read_model(path)
    for (algo, a_k, b_n), row in rows.items():
        if not algo.startswith(WIDE_STORE_RUNGS):
            continue
        mine = [x for x in runs if x["algo"] == algo and x["split"] == 1]
        row["c_wide_gbs"], row["c_wide_gbs_note"] = fit_wide_rate(dev, row, sms, mine,
                                                                  row["c_gbs"])
    refitted = {algo for algo, _, _ in rows if algo.startswith(WIDE_STORE_RUNGS)}
    for key, row in rows.items():
        if key[0] in refitted:  # c_gbs stays, and so does its note
            row["c_gbs_note"] = None
    lines = open(path).readlines()
    cc = next(line.split("\t")[1] for line in lines if line.startswith("device\t"))
    header = [line for line in lines if line.startswith("#") and not line.startswith("# rung\t")
              and not (line.startswith("# c_wide_gbs of ") and line.split()[3] in refitted)]
    notes = [line for line in header if is_note(line)] + [
        note for note in rate_notes(rows) if note.split()[3] in refitted]
    header = [line for line in header if not is_note(line) and not line.startswith("# device\t")]
    header.append(f"# c_wide_gbs of {', '.join(sorted(refitted))}: by bench/fit_model.py "
                  f"--refit-c from {', '.join(sources)}, the rows' other fields as they were\n")
    device_rows = [line for line in lines if line.startswith("device\t")]
    with open(path, "w") as f:
        f.writelines(header + ["# device\tcc\tlaunch_us\tdram_gbs\n"] + device_rows +
                     sorted(notes, key=note_order) +
                     [COLUMNS] + [rung_line(cc, key, r) for key, r in sorted(rows.items())])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sweeps", nargs="+")
    ap.add_argument("-o", "--output", help="model file to write")
    ap.add_argument("--model", help="model file to read instead of fitting")
    ap.add_argument("--check", nargs="*", default=[], help="sweeps to judge the choice on")
    ap.add_argument("--cross-validate", action="store_true",
                    help="fit on half the shapes, check on the other half, both ways")
    ap.add_argument("--dram-gbs", type=float,
                    help="memory floor, GB/s: the device-to-device copy bandwidth measured on the "
                         "GPU (read plus write), default the sweep's 97th-percentile rate")
    ap.add_argument("--tiles", default="tuning/rung_tiles.tsv",
                    help="block tile of each rung: tilegemm algos --tsv > FILE")
    ap.add_argument("--cuts", metavar="DUMP",
                    help="test_plan_regret CORPUS --dump DUMP: each run's block tile and staged "
                         "bytes as the planner counts them (turned rungs, rung 9's planes)")
    ap.add_argument("--add-to", metavar="MODEL",
                    help="fit only the rungs of --rungs, against MODEL's device row, and write "
                         "their rows into MODEL (a new rung, or one re-timed)")
    ap.add_argument("--rungs", default="", help="with --add-to: the rungs to fit, comma-separated")
    ap.add_argument("--refit-c", metavar="MODEL",
                    help="fit c_wide_gbs of MODEL's wide-store rungs (WIDE_STORE_RUNGS) against its "
                         "device and rung rows, and rewrite MODEL")
    args = ap.parse_args()
    tiles = {}
    for line in open(args.tiles):
        if not line.startswith("#") and line.strip():
            name, bm, bn, arith = line.split()[:4]
            tiles[name] = (int(bm), int(bn), arith)
    arith = {a: t[2] for a, t in tiles.items()}
    tiles = {a: t[:2] for a, t in tiles.items()}
    cuts = read_cuts(args.cuts) if args.cuts else None
    device, runs = load(args.sweeps)
    cut(runs, tiles, cuts)
    sms, cc = device["sm_count"], device["compute_capability"].replace(".", "")
    modes = {"fp32": lambda a: arith.get(a) in ("ffma", "3xtf32"), "strict": lambda a: arith.get(a) == "ffma"}
    if args.cross_validate:
        half = lambda x: zlib.crc32(repr(x["key"]).encode()) % 2
        for fold in (0, 1):
            dev, rows = fit([x for x in runs if half(x) == fold], tiles, sms, args.dram_gbs)
            for mode, ok in modes.items():
                print(f"fitted on half {fold}, checked on the other, math {mode}:")
                check(dev, rows, tiles, sms, [x for x in runs if half(x) != fold], ok)
    if args.refit_c:
        refit_c_rates(args.refit_c, runs, sms, args.sweeps)
        print(f"fitted c_wide_gbs in {args.refit_c}")
        return
    if args.add_to:
        wanted = {a for a in args.rungs.split(",") if a}
        if not wanted:
            sys.exit("fit_model.py: --add-to needs --rungs")
        dev, _ = read_model(args.add_to)
        _, rows = fit([x for x in runs if x["algo"] in wanted], tiles, sms, dev=dev)
        if {a for a, _, _ in rows} != wanted:
            sys.exit(f"fit_model.py: no unsplit runs to fit for {sorted(wanted - {a for a, _, _ in rows})}")
        add_rows(args.add_to, rows, args.sweeps)
        print(f"wrote {len(rows)} rows of {', '.join(sorted(wanted))} into {args.add_to}")
        return
    if args.model:
        dev, rows = read_model(args.model)
    else:
        dev, rows = fit(runs, tiles, sms, args.dram_gbs)
    print(f"device: launch {dev['launch_us']} us, {dev['dram_gbs']} GB/s; {len(rows)} rung rows")
    for name, sweep in [("fitted", runs)] + [(p, load([p])[1]) for p in args.check]:
        cut(sweep, tiles, cuts)
        for mode, ok in modes.items():
            print(f"{name}, math {mode}:")
            check(dev, rows, tiles, sms, sweep, ok)
    if args.output and not args.model:
        write(args.output, device, dev, rows, cc, args.sweeps, args.dram_gbs)
        print(f"wrote {args.output}")


if __name__ == "__main__":
    sys.exit(main())
