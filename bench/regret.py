#!/usr/bin/env python3
"""auto's regret within one `tilegemm bench` run that timed every rung beside it
(`--algo all --split-k pow2`): per case, auto's median over the fastest entry its math mode
allows (FFMA rungs in strict; FFMA and 3xTF32 from k = 256 in fp32; any in tf32), the same
run, the same buffers.  With TILEGEMM_AUTOTUNE=1 this is autotuning's regret on a warm cache.
Where the run rechecked its fastest entries (`--recheck N`: auto and each arithmetic's fastest
entries timed again in turn, `recheck_ms`), the regret is also given on those times, and the
JSON keeps them: the fastest of a hundred entries each timed once is flattered by its noise.

    python3 bench/regret.py RUN.json [--json OUT.json]
"""
import argparse
import json
import math


def allowed(mode, arith, k):
    if arith == "ffma":
        return True
    if arith == "3xtf32":
        return mode != "strict" and k >= 256
    return mode == "tf32"


def regrets_of(run, mode, field):
    """Per case: auto's time over the fastest allowed entry's, both read from `field`."""
    cases = {}
    for r in run["results"]:
        key = (r["m"], r["n"], r["k"], r["trans"], r["layout"])
        c = cases.setdefault(key, {"auto": None, "best": None, "best_algo": None})
        if r["status"] not in ("OK", "LOWPREC") or r.get(field) is None:
            continue
        if r["algo"] == "auto":
            c["auto"], c["auto_ran"] = r[field], f"{r['ran']}/{r['ran_split_k'] or 1}"
        elif "/k" in r["algo"] and allowed(mode, r["arith"], r["k"]) and (
                c["best"] is None or r[field] < c["best"]):
            c["best"], c["best_algo"] = r[field], r["algo"]
    return [(k, c["auto"] / c["best"], c) for k, c in cases.items() if c["auto"] and c["best"]]


def report(run, mode, rows, what):
    regrets = [x for _, x, _ in rows]
    geo = math.exp(sum(math.log(x) for x in regrets) / len(regrets))
    print(f"{run['device']['name']}, math {mode}, {len(regrets)} cases, {what}: auto over the "
          f"fastest allowed entry: geometric mean {geo:.3f}, within 1.02 on "
          f"{sum(x <= 1.02 for x in regrets) / len(regrets):.0%}, within 1.10 on "
          f"{sum(x <= 1.10 for x in regrets) / len(regrets):.0%}, worst {max(regrets):.2f}")
    for key, x, c in sorted(rows, key=lambda t: -t[1])[:8]:
        print(f"  {x:5.2f}  {key[0]}x{key[1]}x{key[2]} {key[3]} {key[4]}: auto ran "
              f"{c['auto_ran']} {c['auto']:.4g} ms, fastest {c['best_algo']} {c['best']:.4g} ms")
    return geo


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run")
    ap.add_argument("--json", help="write the per-case regrets here")
    args = ap.parse_args()
    with open(args.run) as f:
        run = json.load(f)
    mode = run["math"]
    rows = regrets_of(run, mode, "median_ms")
    if not rows:
        raise SystemExit("regret.py: no case has both auto and a timed rung")
    geo = report(run, mode, rows, "as swept")
    rechecked = regrets_of(run, mode, "recheck_ms")
    if rechecked:
        geo = report(run, mode, rechecked, "rechecked in turn (--recheck)")
        rows = rechecked
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"source": args.run, "commit": run.get("commit"), "date": run.get("date"),
                       "device": run["device"], "math": mode, "geomean": geo,
                       "times": "recheck_ms" if rechecked else "median_ms",
                       "cases": [{"m": k[0], "n": k[1], "k": k[2], "trans": k[3],
                                  "layout": k[4], "regret": x, "auto_ran": c["auto_ran"],
                                  "fastest": c["best_algo"]} for k, x, c in rows]}, f, indent=1)


if __name__ == "__main__":
    main()
