#!/usr/bin/env python3
"""The cost model's measured correction (src/plan/cost_model.h): for each rung and orientation
class, the coefficients c of ln(measured time / the formula's time) ~ c . terms, by ridge least
squares over the regret corpus's train cases, written as `correction` rows that
cmake/tuning.cmake embeds beside the formula's rows.

    build/tests/test_plan_regret tuning/regret_corpus_sm_90.tsv --dump DUMP
    python3 bench/fit_correction.py DUMP tuning/model_sm_90_correction.tsv [--ridge 1.0]
    python3 bench/fit_correction.py DUMP --check tuning/model_sm_90_correction.tsv

--check refits and compares with the committed rows (the CTest model_correction_current): a
corpus or formula changed without refitting fails there, naming the first row that moved.

The dump gives, for every timed entry of every case, the formula's own time and the terms
(tg_model_correction_terms), so the terms are written once, in C.  Held-out cases and entries
timed once (--prune: a lower bound) are left out of the fit.  The ridge term keeps a rung with few timed entries near the formula; 1.0 was
chosen, with the planner's ALPHA, by leaving out one seed of the train half at a time.
"""
import argparse
import math
import sys
from collections import defaultdict

TERMS = 12


def read_dump(path):
    """{(algo, a_k, b_n): [(terms, ln(ms / formula))]} over the train cases' timed entries."""
    cases, samples = {}, defaultdict(list)
    with open(path) as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if fields[0] == "case":
                cases[int(fields[1])] = (int(fields[2]), int(fields[6]), int(fields[7]))
            elif fields[0] == "entry":
                held_out, a_k, b_n = cases[int(fields[1])]
                ms, pruned, formula = float(fields[4]), int(fields[5]), float(fields[9])
                if held_out or pruned or not formula > 0.0 or not ms > 0.0:
                    continue
                terms = [float(x) for x in fields[10:10 + TERMS]]
                if len(terms) != TERMS:
                    sys.exit(f"{path}: an entry line has {len(terms)} terms, not {TERMS}: "
                             "a dump of another build")
                samples[(fields[2], a_k, b_n)].append((terms, math.log(ms / formula)))
    return samples


def solve(a, b):
    """x with a x = b, a symmetric positive definite (Gaussian elimination, pivoting)."""
    n = len(b)
    rows = [a[i][:] + [b[i]] for i in range(n)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(rows[r][col]))
        rows[col], rows[pivot] = rows[pivot], rows[col]
        for r in range(col + 1, n):
            f = rows[r][col] / rows[col][col]
            for c in range(col, n + 1):
                rows[r][c] -= f * rows[col][c]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (rows[r][n] - sum(rows[r][c] * x[c] for c in range(r + 1, n))) / rows[r][r]
    return x


def fit(pairs, ridge):
    ata = [[0.0] * TERMS for _ in range(TERMS)]
    aty = [0.0] * TERMS
    for terms, y in pairs:
        for i in range(TERMS):
            aty[i] += terms[i] * y
            for j in range(TERMS):
                ata[i][j] += terms[i] * terms[j]
    for i in range(TERMS):
        ata[i][i] += ridge
    return solve(ata, aty)


def check(path, lines):
    """0 when the rows of `path` match the refit `lines` (to printing and libm's last digits)."""
    def rows(text):
        return {tuple(f[:5]): [float(x) for x in f[5:]]
                for f in (line.split("\t") for line in text) if f[0] == "correction"}
    with open(path) as f:
        committed = rows(f.read().splitlines())
    refit = rows(lines)
    if committed.keys() != refit.keys():
        print(f"{path}: rows for {sorted(committed.keys() ^ refit.keys())[:3]} differ from a "
              "refit: run bench/fit_correction.py (see its docstring)")
        return 1
    for key, coef in refit.items():
        if any(abs(a - b) > 1e-4 + 1e-3 * abs(b) for a, b in zip(committed[key], coef)):
            print(f"{path}: the row of {' '.join(key[2:])} differs from a refit "
                  f"({committed[key][:3]}... against {coef[:3]}...): refit it with "
                  "bench/fit_correction.py")
            return 1
    print(f"{path}: {len(refit)} rows match a refit on the corpus's train half")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dump")
    ap.add_argument("out", nargs="?")
    ap.add_argument("--check", metavar="TSV", help="compare with these rows instead of writing")
    ap.add_argument("--ridge", type=float, default=1.0)
    ap.add_argument("--cc", type=int, default=90)
    args = ap.parse_args()
    samples = read_dump(args.dump)
    if not samples:
        sys.exit(f"{args.dump}: no timed train entries with a formula time")
    lines = [
        f"# tilegemm cost model's measured correction for sm_{args.cc} (src/plan/cost_model.h), "
        f"fitted by bench/fit_correction.py --ridge {args.ridge} from the train half of "
        "tuning/regret_corpus_sm_90.tsv (test_plan_regret --dump). Generated: do not edit.",
        "# correction\tcc\talgo\ta_k_contiguous\tb_n_contiguous\tc0 .. c11 (the terms of "
        "tg_model_correction_terms)",
    ]
    for (algo, a_k, b_n), pairs in sorted(samples.items()):
        coef = fit(pairs, args.ridge)
        rms = math.sqrt(sum((sum(c * t for c, t in zip(coef, terms)) - y) ** 2
                            for terms, y in pairs) / len(pairs))
        raw = math.sqrt(sum(y * y for _, y in pairs) / len(pairs))
        lines.append(f"# {algo} ({a_k}, {b_n}): {len(pairs)} entries, rms ln error "
                     f"{raw:.3f} -> {rms:.3f}")
        lines.append("\t".join(["correction", str(args.cc), algo, str(a_k), str(b_n)] +
                               [f"{c:.6g}" for c in coef]))
    if args.check:
        sys.exit(check(args.check, lines))
    if not args.out:
        ap.error("name the file to write, or --check one")
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"{args.out}: {len(samples)} rung rows corrected")


if __name__ == "__main__":
    main()
