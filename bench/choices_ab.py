#!/usr/bin/env python3
"""Two planners judged on the same shapes: `tilegemm bench --algo auto` of build A and of build B
(one seed, one math mode, ideally one device call with the runs in turns), compared call by call.

Two runs of the same binary drift apart by a few percent (on an H200, 2-6% between rounds of one
call, cuBLAS's times alike), which is as large as most planner changes.  So the geometric means
of two runs say little; this compares what the planners chose:
  - calls where both chose the same rung and slices: their time ratio is the runs' drift alone;
  - calls where the choice changed: A's time over B's, by category (thin: min(m, n) <= 64, mid:
    <= 512, big: above; k <= 256, <= 4096, above), and each such call.
A ratio above 1 means B's choice ran faster.

    python3 bench/choices_ab.py A.json B.json [--json OUT.json]
"""
import argparse
import json
import math


def category(m, n, k):
    side = min(m, n)
    outputs = "thin" if side <= 64 else "mid" if side <= 512 else "big"
    depth = "k<=256" if k <= 256 else "k<=4096" if k <= 4096 else "k>4096"
    return f"{outputs}, {depth}"


def auto_calls(path):
    with open(path) as f:
        run = json.load(f)
    calls = {}
    for r in run["results"]:
        if r["algo"] == "auto" and r.get("median_ms") and r["status"] in ("OK", "LOWPREC"):
            key = (r["m"], r["n"], r["k"], r["trans"], r["layout"])
            calls[key] = (f"{r['ran']}/{r['ran_split_k'] or 1}", r["median_ms"])
    return run, calls


def geomean(logs):
    return math.exp(sum(logs) / len(logs)) if logs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--json", help="write the comparison here")
    args = ap.parse_args()
    run_a, a = auto_calls(args.a)
    run_b, b = auto_calls(args.b)
    shared = sorted(set(a) & set(b))
    same = [math.log(a[k][1] / b[k][1]) for k in shared if a[k][0] == b[k][0]]
    changed = [(k, a[k], b[k], math.log(a[k][1] / b[k][1])) for k in shared if a[k][0] != b[k][0]]
    print(f"{args.a} (A) against {args.b} (B), math {run_a.get('math')}: {len(shared)} calls")
    print(f"  same choice: {len(same)} calls, A / B time {geomean(same):.3f} (the runs' drift)")
    print(f"  changed: {len(changed)} calls, A / B time {geomean([c[3] for c in changed]):.3f}")
    by = {}
    for c in changed:
        by.setdefault(category(*c[0][:3]), []).append(c[3])
    for name in sorted(by):
        print(f"    {name:16s} {len(by[name]):3d} calls, A / B {geomean(by[name]):.3f}")
    for key, (ran_a, ms_a), (ran_b, ms_b), lr in sorted(changed, key=lambda c: c[3]):
        m, n, k, trans, layout = key
        print(f"    {math.exp(lr):5.2f}  {m}x{n}x{k} {layout} {trans}: {ran_a} {ms_a:.4g} ms -> "
              f"{ran_b} {ms_b:.4g} ms")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"a": args.a, "b": args.b, "math": run_a.get("math"),
                       "device": run_a.get("device", {}).get("name"),
                       "same_choice": {"calls": len(same), "a_over_b": geomean(same)},
                       "changed": [{"m": c[0][0], "n": c[0][1], "k": c[0][2], "trans": c[0][3],
                                    "layout": c[0][4], "a": c[1][0], "a_ms": c[1][1],
                                    "b": c[2][0], "b_ms": c[2][1]} for c in changed]},
                      f, indent=1)


if __name__ == "__main__":
    main()
