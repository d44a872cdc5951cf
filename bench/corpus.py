#!/usr/bin/env python3
"""The regret corpus: `tilegemm bench --algo all --split-k pow2` JSON turned into one compact TSV
that the CTest plan_regret replays on the CPU (tuning/regret_corpus_sm_90.tsv).

    python3 bench/corpus.py --held-out SEED[,SEED...] OUT.tsv RUN.json [RUN.json ...]
    python3 bench/corpus.py --refresh OLD.tsv OUT.tsv RUN.json [...]
    python3 bench/corpus.py --add OLD.tsv OUT.tsv RUN.json [...]
    python3 bench/corpus.py --card BASE.tsv OUT.tsv RUN.json [...]
    python3 bench/corpus.py --shapes-below MS CORPUS.tsv
    python3 bench/corpus.py --shapes-k-at-most K CORPUS.tsv
    python3 bench/corpus.py --shapes-k-at-least K CORPUS.tsv
    python3 bench/corpus.py --shapes-side-above S CORPUS.tsv
    python3 bench/corpus.py --shapes-side-between LO,HI CORPUS.tsv
    python3 bench/corpus.py --shapes-lacking RUNG CORPUS.tsv
    python3 bench/corpus.py --shapes-unaligned K CORPUS.tsv
    python3 bench/corpus.py --shapes-longer-unaligned K CORPUS.tsv
    python3 bench/corpus.py --shapes-wide-unaligned S CORPUS.tsv
    python3 bench/corpus.py --shapes-c-unaligned K CORPUS.tsv
    python3 bench/corpus.py --shapes-c-aligned K CORPUS.tsv
    python3 bench/corpus.py --shapes-split-within F CORPUS.tsv
    python3 bench/corpus.py --shapes-all-at-least S[,RUNG] CORPUS.tsv
    python3 bench/corpus.py --unsplit-json CORPUS.tsv OUT.json [SIDE]


One line a case (a shape, its layout and transposes) with every entry that ran correctly, a
rung at a time: `rung=ms,ms,...`, the times at 1, 2, 4, ... slices of k in that order (empty
where that count was not timed), with `~` after the time of an entry timed once (--prune: a
lower bound).  Written so, rather than an item per entry, the 930 cases of 2026-11-26 take
1.0 MB instead of 1.8, and the corpus stays under 2 MB as it grows.
A case's set says which half it is in: `train` (the cost model may be fitted on it) or
`held_out` (never fitted on: plan_regret's targets are judged there).  Random cases are split
by seed; the rest (the fixed suites, and lists of shapes given on the command line, whose
suite is `custom`) are train, under their suite's name.

--refresh re-times rows: a rung's entries in the new runs replace all its old ones of the same
case (a kernel change re-timed with scripts/device_corpus.sh and --algo naming the changed
rungs), and the header keeps both runs' provenance.  Its counts between the powers of two are
kept where they run within 1.3 times the rung's fastest count on the case (FINE_KEPT_WITHIN),
so a re-timing at `--split-k planner` does not grow the corpus past 2 MB with counts no plan
would pick.  cuBLAS's times are replaced too where the runs have
them.  Cases the corpus lacks (runs of new seeds) are added, to the train set unless their seed
is named by --held-out.

--card BASE.tsv OUT.tsv writes the runs' cases that BASE has, re-timed whole on one card, into
that card's own file (OUT, tuning/regret_corpus_sm_90_<card>.tsv; its rows refreshed as
--refresh does where it exists): each case keeps BASE's set and suite, and the header names the
card, whose planner then reads these rows in place of BASE's (src/plan/measured.h).  Every run
must come from a GPU of the one name; cases BASE lacks are left out.

--add adds entries to the cases the corpus has, each (rung, slices) replacing only its own
older time: the counts between the powers of two (`tilegemm bench --split-k fine`) timed on
cases whose other entries stay.  Cases the corpus lacks are left out.

--shapes-below prints, a line per layout and transposes, `LAYOUT TRANS MxNxK ...` of the cases
whose fastest entry takes under MS milliseconds: the calls of a few microseconds, whose first
timing (5 runs) is the noisiest, for scripts/device_corpus.sh to re-time with more runs
(RETIME_BELOW).  --shapes-k-at-most lists the cases with k <= K alike: those a rung limited to
such k can run, for re-timing it when its limit grows (RETIME_K_AT_MOST).  --shapes-k-at-least
lists the cases with k >= K: those a 3xTF32 rung may run in the fp32 mode, which admits 3xTF32
from k = 256 on (RETIME_K_AT_LEAST).  --shapes-side-above
lists the cases whose shorter side of C, min(m, n), exceeds S: those a new rung for medium and
large outputs is timed on (RETIME_SIDE_ABOVE); --shapes-side-between those with LO < min(m, n) <=
HI: a new rung for thin and medium outputs (RETIME_SIDE_BETWEEN).  --shapes-lacking lists the cases with no entry
of RUNG: the rest of a new rung's rows (RETIME_LACKING).  --shapes-unaligned lists the cases
with k >= K where neither A's nor B's leading dimension is a multiple of 4 floats (16 bytes):
those the TMA can read neither operand of in place, re-timed when that path changes
(RETIME_UNALIGNED).  --shapes-longer-unaligned lists the cases with k >= K whose C is at least
twice as long as wide and whose longer side's operand alone has a leading dimension off 16
bytes: those rung 9's 3xTF32 forms feed by copying that operand (RETIME_LONGER_UNALIGNED).
--shapes-wide-unaligned lists the cases with both sides of C at least S and a leading dimension
of A or B off 16 bytes: those where rung 9's 3xTF32 forms pack the operand they would copy
into an aligned panel (from S = 2048), among others (RETIME_WIDE_UNALIGNED).
--shapes-c-unaligned lists the cases with k >= K whose C has rows or columns off 32 bytes (its
leading dimension not a multiple of 8 floats): those whose stores an epilogue staged through
shared memory changes (RETIME_C_UNALIGNED).  --shapes-c-aligned lists the rest of those with
k >= K (RETIME_C_ALIGNED): with both, a rung's rows are re-timed whole, in two calls.
--shapes-split-within lists the cases where an entry of 2 or more split-K slices runs within F
times the fastest: those where the counts between the powers of two may pay
(SPLITS=fine RETIME_SPLIT_WITHIN).
--shapes-all-at-least lists the cases with m, n and k all at least S and, with RUNG, those
where RUNG has entries besides: where auto may run a rung it admits only on large products
(ozaki2_int8: its rung entry's auto_min_side), and its older rows elsewhere, re-timed so that
none is stale (RETIME_ALL_AT_LEAST).
--unsplit-json writes the train cases' unsplit entries (1 slice; those timed once, lower bounds,
left out) as a `tilegemm bench` JSON file, the form bench/fit_model.py fits the cost model's
rows on: the model is then fitted on the corpus's train half alone, under the formula of the
build that reads it.  With SIDE, only the cases with min(m, n) > SIDE: a rung made for medium
and large outputs fitted where it runs.
"""
import argparse
import json
import os
import sys

COLUMNS = ["set", "suite", "layout", "trans", "m", "n", "k", "cublas_ms", "cublas_tf32_ms",
           "entries"]


ENTRIES_HEADER = ("entries: rung=ms at 1,2,4,... slices of k (empty: not timed), rung@S=ms at "
                  "S = 3, 5, 6 or 7 slices, ~ after the time of an entry timed once (--prune), "
                  "a lower bound.")


def case_key(r):
    return (r["layout"], r["trans"], r["m"], r["n"], r["k"])


def read_runs(paths, held_out):
    """{case key: case dict} from bench JSON files, and each run's provenance line."""
    cases, provenance = {}, []
    for path in paths:
        with open(path) as f:
            run = json.load(f)
        dev = run["device"]
        provenance.append(
            f"{dev['name']} (sm_{dev['compute_capability'].replace('.', '')}, "
            f"{dev['sm_count']} SMs), commit {run['commit']}, {run['date']}, cuBLAS "
            f"{run['cublas_version']}, {run['warmup']} warm-up + {run['repeats']} timed runs"
            + (f", more until they add up to {run['min_timed_ms']:g} ms"
               if run.get("min_timed_ms") else "") + ": "
            f"`{short_command(run['command'])}`")
        seed = run.get("random_seed")
        for r in run["results"]:
            key = case_key(r)
            suite = r["suite"]
            where = suite if suite != "random" else f"seed{seed}"
            c = cases.setdefault(key, {
                "set": "held_out" if suite == "random" and seed in held_out else "train",
                "suite": where, "entries": {}, "cublas_ms": None, "cublas_tf32_ms": None})
            if r["algo"] == "cublas":
                c["cublas_ms"] = r["median_ms"]
            elif r["algo"] == "cublas_tf32":
                c["cublas_tf32_ms"] = r["median_ms"]
            elif r["algo"].split("/")[0] != "auto" and "/k" in r["algo"] and r["status"] in ("OK", "LOWPREC"):
                if r["median_ms"] is None:
                    continue
                c["entries"][r["algo"].replace("/k", "/")] = (r["median_ms"],
                                                               bool(r.get("pruned")))
    return cases, provenance


# A re-timed count between the powers of two is kept when it runs within this factor of the
# rung's fastest count on the case: a plan may pick it (its neighbours timed it) and must then
# find it measured, while one that picks a count 1.3 times slower than the rung's best is one
# plan_regret should fail (here as unmeasured).
FINE_KEPT_WITHIN = 1.3


def is_pow2(n):
    return n & (n - 1) == 0


def short_command(command):
    """A bench command with a long list of shapes (a re-timing of chosen cases) cut to their
    count: the cases are the corpus's own, and the full list would be most of its header."""
    words = command.split(" ")
    shapes = [w for w in words if w.count("x") == 2 and w.replace("x", "").isdigit()]
    if len(shapes) <= 8:
        return command
    first = words.index(shapes[0])
    rest = [w for w in words[first:] if w not in shapes]
    return " ".join(words[:first] + [f"<{len(shapes)} of the corpus's shapes>"] + rest)


def shorten_provenance(line):
    """A header line with its bench command's shape list cut (short_command)."""
    start = line.find("`tilegemm ")
    end = line.rfind("`")
    if start < 0 or end <= start:
        return line
    return line[:start + 1] + short_command(line[start + 1:end]) + line[end:]


def format_ms(ms):
    """4 significant digits, without the leading zero of a time under 1 ms (".01491"), which
    every reader parses (strtod, float(), CMake's number match) and which keeps the corpus
    under 2 MB."""
    text = f"{ms:.4g}"
    return text[1:] if text.startswith("0.") else text


def format_entries(entries):
    """{"rung/slices": (ms, pruned)} as `rung=ms,ms,...` items, one a rung (see above)."""
    by_rung = {}
    for name, (ms, pruned) in entries.items():
        rung, slices = name.split("/")
        by_rung.setdefault(rung, {})[int(slices)] = f"{format_ms(ms)}{'~' if pruned else ''}"
    items = []
    for rung, times in sorted(by_rung.items()):
        pow2 = {n: t for n, t in times.items() if is_pow2(n)}
        if pow2:
            counts = [1 << i for i in range(max(pow2).bit_length())]
            items.append(f"{rung}=" + ",".join(pow2.get(n, "") for n in counts))
        items += [f"{rung}@{n}={t}" for n, t in sorted(times.items()) if n not in pow2]
    return " ".join(items)


def parse_entries(text):
    """The inverse of format_entries."""
    entries = {}
    for item in text.split():
        rung, times = item.split("=")
        if "@" in rung:  # rung@S=ms
            rung, slices = rung.split("@")
            entries[f"{rung}/{int(slices)}"] = (float(times.rstrip("~")), times.endswith("~"))
            continue
        for i, value in enumerate(times.split(",")):
            if value:
                entries[f"{rung}/{1 << i}"] = (float(value.rstrip("~")), value.endswith("~"))
    return entries


def retime(case, c):
    """Case `case` with the entries of its re-timing c: a rung re-timed takes all its old
    entries there with it (slice counts pruned this time must not keep times from before the
    change); its counts between the powers of two kept within FINE_KEPT_WITHIN of its fastest;
    cuBLAS's times replaced where c has them."""
    rungs = {name.split("/")[0] for name in c["entries"]}
    case["entries"] = {name: v for name, v in case["entries"].items()
                       if name.split("/")[0] not in rungs}
    fastest = {}  # each re-timed rung's fastest count here
    for name, (ms, pruned) in c["entries"].items():
        rung = name.split("/")[0]
        fastest[rung] = min(fastest.get(rung, ms), ms)
    case["entries"].update(
        (name, v) for name, v in c["entries"].items()
        if is_pow2(int(name.split("/")[1])) or
        v[0] <= FINE_KEPT_WITHIN * fastest[name.split("/")[0]])
    for field in ("cublas_ms", "cublas_tf32_ms"):
        if c[field] is not None:
            case[field] = c[field]


def write(path, cases, header_lines):
    with open(path, "w") as f:
        for line in header_lines:
            f.write(f"# {line}\n")
        f.write("# " + "\t".join(COLUMNS) + "\n")
        for key in sorted(cases, key=lambda k: (cases[k]["set"], cases[k]["suite"], k)):
            c = cases[key]
            if not c["entries"] or c["cublas_ms"] is None:
                continue
            layout, trans, m, n, k = key
            entries = format_entries(c["entries"])
            tf32 = c["cublas_tf32_ms"]
            f.write("\t".join([c["set"], c["suite"], layout, trans, str(m), str(n), str(k),
                               format_ms(c["cublas_ms"]),
                               format_ms(tf32) if tf32 is not None else "-", entries]) + "\n")


def read_tsv(path):
    header, cases = [], {}
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#"):
                if line.startswith("# entries:"):
                    header.append(ENTRIES_HEADER)
                elif not line.startswith("# set\t"):
                    header.append(line[2:])
                continue
            cols = line.split("\t")
            entries = parse_entries(cols[9])
            key = (cols[2], cols[3], int(cols[4]), int(cols[5]), int(cols[6]))
            cases[key] = {"set": cols[0], "suite": cols[1], "entries": entries,
                          "cublas_ms": float(cols[7]),
                          "cublas_tf32_ms": None if cols[8] == "-" else float(cols[8])}
    return header, cases


def leading_dimensions(layout, trans, m, n, k):
    """lda and ldb of a case as `tilegemm bench` stores it: each matrix packed."""
    ta, tb = trans[0] == "T", trans[1] == "T"
    if layout == "row":
        return (m if ta else k), (k if tb else n)
    return (k if ta else m), (n if tb else k)


def print_cases(corpus, keep):
    """The cases keep(m, n, k, case) accepts, grouped by layout and transposes."""
    groups = {}
    for (layout, trans, m, n, k), c in read_tsv(corpus)[1].items():
        if keep(m, n, k, dict(c, layout=layout, trans=trans)):
            groups.setdefault((layout, trans), []).append(f"{m}x{n}x{k}")
    for (layout, trans), shapes in sorted(groups.items()):
        print(layout, trans, " ".join(shapes))


def unsplit_json(corpus, out, side=0):
    """The train cases' unsplit, repeatedly timed entries as `tilegemm bench` results."""
    header, cases = read_tsv(corpus)
    device = next(line for line in header if " SMs), commit " in line).strip()
    name, sm = device.split(" (sm_")[0], device.split(" (sm_")[1]
    results = []
    for (layout, trans, m, n, k), c in sorted(cases.items()):
        if c["set"] != "train" or min(m, n) <= side:
            continue
        for entry, (ms, pruned) in sorted(c["entries"].items()):
            if entry.endswith("/1") and not pruned:
                results.append({"suite": c["suite"], "layout": layout, "trans": trans, "m": m,
                                "n": n, "k": k, "algo": entry.replace("/", "/k"), "split_k": 1,
                                "status": "OK", "median_ms": ms, "cublas_median_ms": c["cublas_ms"]})
    doc = {"device": {"name": name, "compute_capability": f"{sm[0]}.{sm[1:sm.index(',')]}",
                      "sm_count": int(sm.split(", ")[1].split(" SMs")[0])},
           "command": f"bench/corpus.py --unsplit-json {corpus} {out} {side}", "results": results}
    with open(out, "w") as f:
        json.dump(doc, f)
    print(f"{out}: {len(results)} unsplit entries of the train cases", file=sys.stderr)


def main():
    if len(sys.argv) in (4, 5) and sys.argv[1] == "--unsplit-json":
        unsplit_json(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) == 5 else 0)
        return
    if len(sys.argv) == 4 and sys.argv[1] == "--shapes-below":
        below = float(sys.argv[2])
        print_cases(sys.argv[3],
                    lambda m, n, k, c: min(ms for ms, _ in c["entries"].values()) < below)
        return
    if len(sys.argv) == 4 and sys.argv[1] == "--shapes-k-at-most":
        most = int(sys.argv[2])
        print_cases(sys.argv[3], lambda m, n, k, c: k <= most)
        return
    if len(sys.argv) == 4 and sys.argv[1] == "--shapes-k-at-least":
        least = int(sys.argv[2])
        print_cases(sys.argv[3], lambda m, n, k, c: k >= least)
        return
    if len(sys.argv) == 4 and sys.argv[1] == "--shapes-side-above":
        side = int(sys.argv[2])
        print_cases(sys.argv[3], lambda m, n, k, c: min(m, n) > side)
        return
    if len(sys.argv) == 4 and sys.argv[1] == "--shapes-side-between":
        low, high, *k_range = (int(x) for x in sys.argv[2].split(","))
        least_k = k_range[0] if len(k_range) > 0 else 1
        most_k = k_range[1] if len(k_range) > 1 else 1 << 62
        print_cases(sys.argv[3], lambda m, n, k, c: low < min(m, n) <= high and
                    least_k <= k <= most_k)
        return
    if len(sys.argv) == 4 and sys.argv[1] == "--shapes-lacking":
        rung = sys.argv[2]
        print_cases(sys.argv[3], lambda m, n, k, c: not any(
            name.split("/")[0] == rung for name in c["entries"]))
        return
    if len(sys.argv) == 4 and sys.argv[1] == "--shapes-unaligned":
        least = int(sys.argv[2])
        print_cases(sys.argv[3], lambda m, n, k, c: k >= least and all(
            ld % 4 for ld in leading_dimensions(c["layout"], c["trans"], m, n, k)))
        return
    if len(sys.argv) == 4 and sys.argv[1] == "--shapes-longer-unaligned":
        least = int(sys.argv[2])

        def longer_unaligned(m, n, k, c):
            lda, ldb = leading_dimensions(c["layout"], c["trans"], m, n, k)
            longer, shorter = (lda, ldb) if m >= n else (ldb, lda)
            return (k >= least and max(m, n) >= 2 * min(m, n) and longer % 4 != 0 and
                    shorter % 4 == 0)
        print_cases(sys.argv[3], longer_unaligned)
        return
    if len(sys.argv) == 4 and sys.argv[1] == "--shapes-split-within":
        within = float(sys.argv[2])

        def split_near_best(m, n, k, c):
            best = min(ms for ms, _ in c["entries"].values())
            return any(ms <= within * best and int(name.split("/")[1]) > 1
                       for name, (ms, _) in c["entries"].items())
        print_cases(sys.argv[3], split_near_best)
        return
    if len(sys.argv) == 4 and sys.argv[1] == "--shapes-all-at-least":
        least, _, rung = sys.argv[2].partition(",")
        print_cases(sys.argv[3], lambda m, n, k, c: min(m, n, k) >= int(least) or any(
            name.split("/")[0] == rung for name in c["entries"]))
        return
    if len(sys.argv) == 4 and sys.argv[1] in ("--shapes-c-unaligned", "--shapes-c-aligned"):
        least, unaligned = int(sys.argv[2]), sys.argv[1] == "--shapes-c-unaligned"
        print_cases(sys.argv[3], lambda m, n, k, c: k >= least and
                    ((n if c["layout"] == "row" else m) % 8 != 0) == unaligned)
        return
    if len(sys.argv) == 4 and sys.argv[1] == "--shapes-wide-unaligned":
        side = int(sys.argv[2])
        print_cases(sys.argv[3], lambda m, n, k, c: min(m, n) >= side and any(
            ld % 4 for ld in leading_dimensions(c["layout"], c["trans"], m, n, k)))
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--held-out", default="", help="seeds whose cases are held out")
    ap.add_argument("--refresh", help="an existing corpus whose entries the runs replace")
    ap.add_argument("--add", help="an existing corpus the runs' entries are added to, each "
                                  "(rung, slices) replacing only itself")
    ap.add_argument("--card", help="the corpus whose cases the runs re-timed on one card, "
                                   "written to that card's own file (out)")
    ap.add_argument("out")
    ap.add_argument("runs", nargs="+")
    args = ap.parse_args()
    held_out = {int(s) for s in args.held_out.split(",") if s}
    new, provenance = read_runs(args.runs, held_out)
    if args.add:
        header, cases = read_tsv(args.add)
        for key, c in new.items():
            if key in cases:  # its cuBLAS times stay those its other entries were timed beside
                cases[key]["entries"].update(c["entries"])
        header += ["added entries: " + p for p in provenance]
    elif args.refresh:
        header, cases = read_tsv(args.refresh)
        header = [shorten_provenance(line) for line in header]
        added = 0
        for key, c in new.items():
            if key not in cases:
                cases[key] = c
                added += 1
                continue
            retime(cases[key], c)
        header += [("added: " if added else "re-timed: ") + p for p in provenance]
    elif args.card:
        _, base = read_tsv(args.card)
        names = {p.split(" (sm_")[0] for p in provenance}
        if len(names) != 1:
            sys.exit(f"--card: runs from {len(names)} GPUs ({', '.join(sorted(names))}), not one")
        if os.path.exists(args.out):
            header, cases = read_tsv(args.out)
            header = [shorten_provenance(line) for line in header]
            name = next(iter(names))
            if not any(line.startswith(f"  {name} (sm_") for line in header):
                sys.exit(f"--card: {args.out} holds another card's rows")
        else:
            header = [
                f"tilegemm regret corpus of one card: cases of {os.path.basename(args.card)} "
                "re-timed whole on the GPU named below, which plans from these rows in place of "
                "that file's (src/plan/measured.h); each case keeps that file's set.  Written "
                "by bench/corpus.py --card.  Generated: do not edit.",
                ENTRIES_HEADER]
            cases = {}
        for key, c in new.items():
            if key not in base:
                continue
            c["set"], c["suite"] = base[key]["set"], base[key]["suite"]
            retime(cases.setdefault(key, {**c, "entries": {}}), c)
        header[1:1] = ["  " + p for p in provenance]
    else:
        cases = new
        header = [
            "tilegemm regret corpus: every rung at the split-K slice counts the planner may weigh "
            "(tg_split_k_counts), median ms, on:",
            *("  " + p for p in provenance),
            "set: train cases may be fitted on; held_out cases (random seeds "
            f"{', '.join(str(s) for s in sorted(held_out)) or 'none'}) never are.  "
            "Written by bench/corpus.py; re-time changed rungs with --refresh.  Generated: do "
            "not edit.",
            ENTRIES_HEADER,
        ]
    write(args.out, cases, header)
    kept = sum(1 for c in cases.values() if c["entries"] and c["cublas_ms"] is not None)
    print(f"{args.out}: {kept} cases", file=sys.stderr)


if __name__ == "__main__":
    main()
