#!/usr/bin/env python3
"""Each of rung 11's kernels' time in one call, from an ncu CSV of gpu__time_duration.sum.

    python3 bench/ozaki_kernels.py FILE

FILE is `ncu --csv --metrics gpu__time_duration.sum` over calls of the rung (only its kernels:
scripts/device_ozaki_profile.sh filters them).  The first call is the rows before the second
call's two scan_lines, which come just before its survey_lines.  Prints ms a kernel, the
s8gemm launches split into the bound products (one item) and the moduli's (a batch of 16).
"""
import collections
import csv
import io
import re
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    path = sys.argv[1]
    text = open(path).read()
    start = text.find('"ID"')
    if start < 0:
        sys.exit(f"{path}: no ncu CSV table")
    rows = list(csv.DictReader(io.StringIO(text[start:])))
    surveys = [i for i, row in enumerate(rows) if "survey_lines" in row["Kernel Name"]]
    if len(surveys) > 1:
        rows = rows[: surveys[1] - 2]
    per, total = collections.OrderedDict(), 0.0
    for row in rows:
        name = re.sub(r"<.*", "", re.sub(r"\(.*", "", row["Kernel Name"]).split("::")[-1])
        if name.startswith("s8gemm"):
            name = "s8gemm (R, P)" if row["Grid Size"].endswith(", 1)") else "s8gemm (moduli)"
        unit = row["Metric Unit"]
        value = float(row["Metric Value"].replace(",", ""))
        scale = {"ns": 1e-6, "nsecond": 1e-6, "us": 1e-3, "usecond": 1e-3, "ms": 1.0, "msecond": 1.0}
        if unit not in scale:
            sys.exit(f"{path}: unknown unit {unit!r}")
        ms = value * scale[unit]
        per[name] = per.get(name, 0.0) + ms
        total += ms
    for name, ms in per.items():
        print(f"{name:20s} {ms:8.3f}")
    print(f"{'total':20s} {total:8.3f}")


if __name__ == "__main__":
    main()
