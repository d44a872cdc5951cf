#!/usr/bin/env python3
"""The table of scripts/device_ab.sh: for each entry (shape, transposes, layout, rung) its
faster median over the rounds of side A (ab-a-*.json) and of side B (ab-b-*.json) in DIR, and
B / A, with the geometric mean last.

    python3 scripts/ab_table.py DIR
"""
import glob
import json
import math
import sys


def fastest(paths):
    best = {}
    for path in paths:
        try:
            results = json.load(open(path))["results"]
        except (OSError, ValueError, KeyError):
            print(f"{path}: unreadable")
            continue
        for r in results:
            ms = r.get("median_ms")
            if r.get("status") not in ("OK", "LOWPREC") or not isinstance(ms, (int, float)):
                continue
            key = (f'{r["m"]}x{r["n"]}x{r["k"]}', r.get("trans", "NN"), r.get("layout", "row"),
                   r["algo"])
            best[key] = min(ms, best.get(key, math.inf))
    return best


def main():
    top = sys.argv[1]
    a = fastest(sorted(glob.glob(f"{top}/ab-a-*.json")))
    b = fastest(sorted(glob.glob(f"{top}/ab-b-*.json")))
    logs = []
    for key in sorted(a.keys() & b.keys()):
        ratio = b[key] / a[key]
        logs.append(math.log(ratio))
        print(f"{' '.join(key):56} A {a[key]:9.4f} ms  B {b[key]:9.4f} ms  B/A {ratio:.3f}")
    if logs:
        print(f"geometric mean B/A over {len(logs)} entries: {math.exp(sum(logs) / len(logs)):.3f}")
    else:
        print("no entry timed on both sides")
    return 0 if logs else 1


if __name__ == "__main__":
    sys.exit(main())
