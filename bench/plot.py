#!/usr/bin/env python3
"""The results pages, generated from `tilegemm bench` JSON and nothing else.

    python3 bench/plot.py            rewrite docs/results.md, its plots (docs/img/) and the
                                     README's summary table from bench/results/*.json
    python3 bench/plot.py --check    exit 1, saying what differs, when docs/results.md or the
                                     README's summary is not what the JSON gives (no plots drawn)
    python3 bench/plot.py FILE.json [MORE.json ...] [--out PNG]
                                     print one table of these files; draw them with --out
    python3 bench/plot.py --scaling DIR [--out PNG]
                                     print the scaling tables of the multi-GPU runs in DIR
                                     (examples/torch_tp_train.py's and bench/host_operands'
                                     JSON, as a device run leaves them or as
                                     bench/results/multi-gpu/ keeps them); draw them with --out

The README's table sits between `<!-- summary:begin -->` and `<!-- summary:end -->`.  Of each
device's files the newest date's are the current results; older ones are listed as earlier
runs.  Plots need matplotlib (pip install matplotlib); the text needs only the standard library.
"""
import argparse
import json
import math
import os
import re
import sys
from pathlib import Path

BEGIN = "<!-- summary:begin -->"
END = "<!-- summary:end -->"
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
README = ROOT / "README.md"
RESULTS_MD = ROOT / "docs" / "results.md"
IMG = ROOT / "docs" / "img"
MODES = {"fp32": "`fp32` (default): FP32 accuracy", "strict": "`strict`: FP32 FMA only",
         "tf32": "`tf32` (opt-in): TF32 inputs"}
SHOWN = ("OK", "LOWPREC", "MISMATCH")  # statuses that carry a timing


def load(paths):
    """Rows from every file, each tagged with its file's device and metadata."""
    files = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        if "results" not in data:
            sys.exit(f"plot.py: {path} has no 'results': not a tilegemm bench file")
        data["_path"] = str(path)
        files.append(data)
    return files


def is_cpu(data):
    return data.get("mode") == "cpu"


def number(value):
    return value is not None and isinstance(value, (int, float)) and math.isfinite(value)


def rate(row, cpu_units):
    """The row's speed in the plot's unit (GFLOP/s for CPU-only plots, else TFLOP/s)."""
    key = "gflops" if cpu_units else "tflops"
    value = row.get(key)
    if not number(value) and number(row.get("median_ms")) and row["median_ms"] > 0:
        flops = 2.0 * row["m"] * row["n"] * row["k"] / (row["median_ms"] * 1e-3)
        value = flops / (1e9 if cpu_units else 1e12)
    return value if number(value) else None


def shape_label(row):
    return f'{row["m"]}x{row["n"]}x{row["k"]}'


def collect(files):
    """Ordered shape keys, ordered algorithms and a cell table keyed by (shape key, algo)."""
    several_devices = len({d["device"]["name"] for d in files}) > 1
    # `auto` timed in several math modes gets a column per mode, e.g. "auto (strict)".
    several_modes = len({d.get("math") for d in files}) > 1
    keys, algos, cells = [], [], {}
    for data in files:
        device = data["device"]["name"]
        for row in data["results"]:
            key = (device if several_devices else "", shape_label(row), row["trans"],
                   row["layout"])
            if key not in keys:
                keys.append(key)
            algo = row["algo"]
            if algo == "auto" and several_modes and data.get("math"):
                algo = f'auto ({data["math"]})'
            if algo not in algos:
                algos.append(algo)
            cells[(key, algo)] = row  # a later file wins for the same shape and algo
    # cuBLAS last: it is the column every ratio refers to.
    algos = [a for a in algos if a != "cublas"] + (["cublas"] if "cublas" in algos else [])
    return several_devices, keys, algos, cells


def cell_text(row, cpu_units):
    if row is None:
        return ""
    status = row.get("status", "")
    if status == "SKIPPED":
        return "skipped"
    if status == "UNSUPPORTED":
        return "n/a"
    value = rate(row, cpu_units)
    if status not in SHOWN or value is None:
        return status.lower() or "-"
    text = f"{value:.1f}" if value >= 10 else f"{value:.2f}"
    if row.get("algo") != "cublas" and number(row.get("ratio")):
        text += f" ({row['ratio']:.2f}x)"
    if status == "MISMATCH":
        text += " **MISMATCH**"
    return text


def describe(data, commit=True):
    dev = data["device"]
    parts = [dev["name"]]
    if is_cpu(data):
        parts.append(f'{dev.get("cpu_threads", "?")} threads, no GPU: CPU backend')
    else:
        parts.append(f'sm_{dev.get("compute_capability", "?").replace(".", "")}')
        parts.append(f'driver {data.get("driver_version")}, CUDA {data.get("runtime_version")}, '
                     f'cuBLAS {data.get("cublas_version")}')
    if commit:
        parts.append("commit " + data.get("commit", "unknown") + ("+dirty" if data.get("dirty") else ""))
    parts.append(data.get("date", "?"))
    return ", ".join(parts)


def source_name(data):
    return os.path.relpath(data["_path"], ROOT).replace(os.sep, "/")


def runs_text(data):
    """How many timed runs each median is of: --repeats, and --min-timed-ms where given."""
    text = f"{data.get('repeats')} timed runs"
    if data.get("min_timed_ms"):
        text = (f"at least {data.get('repeats')} timed runs (more, up to 200, until they add up "
                f"to {data['min_timed_ms']:g} ms)")
    return text


def make_table(files, commit=True):
    cpu_units = all(is_cpu(d) for d in files)
    unit = "GFLOP/s" if cpu_units else "TFLOP/s"
    several_devices, keys, algos, cells = collect(files)
    lines = []
    for data in files:
        lines.append(f"- `{source_name(data)}`: {describe(data, commit)}; {runs_text(data)} "
                     f"after {data.get('warmup')} warm-up")
    if cpu_units:
        lines.append(f"\n{unit} of the CPU backend (no cuBLAS comparison).\n")
    else:
        lines.append(f"\n{unit}, and in brackets the ratio to cuBLAS SGEMM (FP32, no TF32) measured "
                     "in the same run on the same buffers.\n")
    header = (["Device"] if several_devices else []) + ["Shape (MxNxK)", "Op", "Layout"]
    header += ["cuBLAS" if a == "cublas" else f"`{a}`" for a in algos]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "|".join(["---"] * (len(header) - len(algos)) + ["---:"] * len(algos))
                 + "|")
    for key in keys:
        device, shape, trans, layout = key
        row = ([device] if several_devices else []) + [shape, trans, layout]
        row += [cell_text(cells.get((key, a)), cpu_units) for a in algos]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def draw(files, out):
    """Bars of every algorithm's speed per shape, cuBLAS in black, MISMATCH hatched."""
    plt = pyplot()
    if not plt:
        return False
    cpu_units = all(is_cpu(d) for d in files)
    unit = "GFLOP/s" if cpu_units else "TFLOP/s"
    several_devices, keys, algos, cells = collect(files)
    labels = [" ".join(p for p in (k[0], k[1], k[2], k[3]) if p) for k in keys]
    width = 0.8 / max(len(algos), 1)
    fig, ax = plt.subplots(figsize=(min(18.0, max(8.0, 0.8 * len(keys) + 4.0)), 5.5))
    for i, algo in enumerate(algos):
        xs, ys, hatches = [], [], []
        for j, key in enumerate(keys):
            row = cells.get((key, algo))
            if row is None or row.get("status") not in SHOWN:
                continue
            value = rate(row, cpu_units)
            if value is None:
                continue
            xs.append(j - 0.4 + width * (i + 0.5))
            ys.append(value)
            hatches.append("xx" if row.get("status") == "MISMATCH" else "")
        if not xs:
            continue
        bars = ax.bar(xs, ys, width, label="cuBLAS" if algo == "cublas" else algo,
                      color="black" if algo == "cublas" else None)
        for bar, hatch in zip(bars, hatches):
            bar.set_hatch(hatch)
    ax.set_xticks(range(len(keys)))
    ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=8)
    ax.set_ylabel(unit)
    ax.grid(axis="y", alpha=0.3)
    title = "; ".join(describe(d) for d in files)
    ax.set_title(title if len(title) < 110 else title[:107] + "...", fontsize=8)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0),
              title="hatched: MISMATCH", title_fontsize=7)
    save(fig, plt, out)
    return True


# --- The results pages -------------------------------------------------------------------

def bench_files(folder=RESULTS):
    """Every `tilegemm bench` file in the folder (not its subfolders), oldest first."""
    files = []
    for path in sorted(folder.glob("*.json")):
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        if str(data.get("schema", "")).startswith("tilegemm-bench") and "results" in data:
            data["_path"] = str(path)
            files.append(data)
    return files


def run_day(data):
    return data.get("date", "")[:10]


def current_and_earlier(files):
    """Of each device's files, those of its newest day, and the rest.  A fixed suite or a
    random seed in a math mode the newest day did not measure keeps its newest earlier file
    among the current ones, so a run that re-measured one mode does not drop the others."""
    newest = {}
    for d in files:
        name = d["device"]["name"]
        newest[name] = max(newest.get(name, ""), run_day(d))
    current = [d for d in files if run_day(d) == newest[d["device"]["name"]]]
    measured = {(d["device"]["name"], d.get("suite"), d.get("math")) for d in current}
    for d in sorted(files, key=run_day, reverse=True):
        key = (d["device"]["name"], d.get("suite"), d.get("math"))
        if d.get("suite") == "all" and d.get("math") in MODES and key not in measured:
            current.append(d)
            measured.add(key)
    return current, [d for d in files if d not in current]


def auto_rows(data):
    """`auto`'s checked results: OK, or in TF32 mode LOWPREC (within TF32's bound, beyond
    FP32's, which is what TF32 arithmetic gives at short k)."""
    passed = ("OK", "LOWPREC") if data.get("math") == "tf32" else ("OK",)
    return [r for r in data["results"]
            if r["algo"] == "auto" and r.get("status") in passed and number(r.get("ratio"))]


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def fitted_seeds():
    """Random-suite seeds the planner learned from: those the cost model's headers name, and
    the seeds of the regret corpus's train rows (embedded in the library)."""
    seeds = set()
    for path in (ROOT / "tuning").glob("model_*.tsv"):
        with open(path, encoding="utf-8") as f:
            seeds |= {int(x) for x in re.findall(r"random-seed(\d+)", f.readline())}
    for path in (ROOT / "tuning").glob("regret_corpus_*.tsv"):
        with open(path, encoding="utf-8") as f:
            seeds |= {int(line.split("\t")[1][4:]) for line in f
                      if line.startswith("train\tseed")}
    return seeds


CATEGORIES = [f"{size}, {depth}" for size in ("thin", "mid", "big")
              for depth in ("k<=256", "k<=4096", "k>4096")]


def category(row):
    """thin: min(m, n) <= 64, mid: <= 512, big: above; by k <= 256, <= 4096, above (as
    `tilegemm bench` writes it)."""
    if row.get("category"):
        return row["category"]
    side = min(row["m"], row["n"])
    size = "thin" if side <= 64 else "mid" if side <= 512 else "big"
    depth = "k<=256" if row["k"] <= 256 else "k<=4096" if row["k"] <= 4096 else "k>4096"
    return f"{size}, {depth}"


def category_table(randoms):
    """auto on the random shapes by category, one column per math mode measured: count,
    geometric mean against cuBLAS (SGEMM; TF32 mode against FAST_TF32), share at >= 0.9x,
    worst, and the speed of light reached by auto / cuBLAS."""
    by_mode = {d.get("math"): auto_rows(d) for d in randoms}
    modes = [m for m in MODES if m in by_mode]
    head = "| category | shapes | " + " | ".join(
        f"`{m}`: geo-mean, >= 0.9x, worst | `{m}`: speed of light, auto / cuBLAS"
        for m in modes) + " |"
    lines = [head, "|---|---:|" + "---:|---:|" * len(modes)]
    for cat in CATEGORIES:
        cells, count = [], 0
        for m in modes:
            rows = [r for r in by_mode[m] if category(r) == cat]
            count = max(count, len(rows))
            if not rows:
                cells += ["-", "-"]
                continue
            key = "ratio_tf32" if m == "tf32" else "ratio"
            ratios = [r[key] for r in rows]
            cells.append(f"{geomean(ratios):.2f}x, {sum(x >= 0.9 for x in ratios) / len(ratios):.0%}"
                         f", {min(ratios):.2f}x")
            cells.append(sol_text(rows, m))
        lines.append(f"| {cat} | {count} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def large_square(row):
    return row["m"] == row["n"] == row["k"] >= 4096 and row["trans"] == "NN" and \
        row["layout"] == "row"


def held_out_random(files):
    """The random-suite files of the newest seed the cost model was not fitted on."""
    randoms = [d for d in files if d.get("suite") == "random"
               and d.get("random_seed") not in fitted_seeds()]
    if not randoms:
        return None, []
    seed = max(d["random_seed"] for d in randoms)
    return seed, [d for d in randoms if d["random_seed"] == seed]


def sol_text(rows, mode=None):
    """The geometric mean of the fraction of the speed of light `auto` and cuBLAS reached
    (sol_ms in the JSON; in the tf32 mode cuBLAS's TF32 run), or "-" for files from before it
    was recorded."""
    theirs = "cublas_tf32_median_ms" if mode == "tf32" else "cublas_median_ms"
    pairs = [(r["sol_ms"] / r["median_ms"], r["sol_ms"] / r[theirs]) for r in rows
             if number(r.get("sol_ms")) and number(r.get(theirs))]
    if not pairs:
        return "-"
    return (f"{geomean([a for a, _ in pairs]):.2f} / "
            f"{geomean([c for _, c in pairs]):.2f}")


def random_stats(rows, key="ratio"):
    ratios = [r[key] for r in rows]
    return {"shapes": len(ratios), "geomean": geomean(ratios),
            "at_09": sum(x >= 0.9 for x in ratios) / len(ratios),
            "at_10": sum(x >= 1.0 for x in ratios) / len(ratios),
            "worst": min(ratios), "best": max(ratios)}


def summary(files, img="docs/img", design="docs/design.md"):
    """The README's table: each math mode against cuBLAS on the large squares and the fixed
    suites, and on random shapes of a seed the planner never saw; then the plot of those.  img
    and design: the plots' folder and docs/design.md, relative to the page the table is on."""
    # the newest run of each mode (files come sorted by name, not by time)
    fixed = {d.get("math"): d for d in sorted(files, key=lambda d: d.get("date", ""))
             if d.get("suite") == "all"}
    seed, randoms = held_out_random(files)
    random_by_mode = {d.get("math"): d for d in randoms}
    lines = ["| math mode | large squares, TFLOP/s | vs cuBLAS SGEMM | vs cuBLAS TF32 | "
             f"fixed suites ({len(auto_rows(next(iter(fixed.values()))))} shapes) | "
             f"random shapes (seed {seed}): geometric mean, share at >= 0.9x, worst | "
             "speed of light reached on them, `auto` / cuBLAS |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for mode in MODES:
        if mode not in fixed:
            continue
        rows = auto_rows(fixed[mode])
        big = [r for r in rows if large_square(r)]
        tflops = [r["tflops"] for r in big]
        cell, sol = "not measured", "-"
        if mode in random_by_mode:
            # the tf32 mode against cuBLAS's TF32, as in the category table
            st = random_stats(auto_rows(random_by_mode[mode]),
                              "ratio_tf32" if mode == "tf32" else "ratio")
            cell = f"{st['geomean']:.2f}x, {st['at_09']:.0%}, {st['worst']:.2f}x"
            sol = sol_text(auto_rows(random_by_mode[mode]), mode)
        lines.append(f"| {MODES[mode]} | {min(tflops):.0f}-{max(tflops):.0f} | "
                     f"{geomean([r['ratio'] for r in big]):.2f}x | "
                     f"{geomean([r['ratio_tf32'] for r in big]):.2f}x | "
                     f"{geomean([r['ratio'] for r in rows]):.2f}x | {cell} | {sol} |")
    some = next(iter(fixed.values()))
    sizes = sorted({r["m"] for r in auto_rows(some) if large_square(r)})
    lines.append("")
    lines.append(f"{some['device']['name']}, CUDA {some.get('runtime_version')}, cuBLAS "
                 f"{some.get('cublas_version')}: `auto` against cuBLAS in the same run, median of "
                 f"{runs_text(some)}, geometric means of the ratios.  Large squares: "
                 f"{', '.join(f'{n}³' for n in sizes)}.  Random shapes: `--suite random --seed "
                 f"{seed}`, {random_stats(auto_rows(randoms[0]))['shapes'] if randoms else 0} "
                 "shapes, all layouts and transposes, a seed the planner never learned from; "
                 "the `tf32` mode there against cuBLAS's TF32 (CUBLAS_COMPUTE_32F_FAST_TF32).  "
                 "Speed of light: max(flops / the mode's peak, compulsory bytes / the measured "
                 f"copy rate, 5 us), as [docs/design.md]({design}#speed-of-light) "
                 "defines it.  Generated by `bench/plot.py` from "
                 + ", ".join(f"`{source_name(d)}`" for d in list(fixed.values()) + randoms) + ".")
    if randoms:
        lines += ["", f"By category on those shapes (thin: min(m, n) <= 64, mid: <= 512, big: "
                  "above):", "", category_table(randoms).rstrip("\n")]
        lines += ["", f"![auto against cuBLAS SGEMM on the random shapes of seed {seed}]"
                  f"({img}/random-seed{seed}.png)"]
    return "\n".join(lines) + "\n"


def ratio_bars(files, out, title):
    """Bars of auto's ratio to cuBLAS SGEMM per shape, one colour per math mode."""
    plt = pyplot()
    if not plt:
        return
    keys = [(r["m"], r["n"], r["k"], r["trans"], r["layout"]) for r in auto_rows(files[0])]
    fig, ax = plt.subplots(figsize=(max(8.0, 0.45 * len(keys) + 3.0), 4.8))
    width = 0.8 / len(files)
    for i, d in enumerate(files):
        by_key = {(r["m"], r["n"], r["k"], r["trans"], r["layout"]): r["ratio"] for r in auto_rows(d)}
        xs = [j - 0.4 + width * (i + 0.5) for j, key in enumerate(keys) if key in by_key]
        ax.bar(xs, [by_key[key] for key in keys if key in by_key], width, label=d.get("math"))
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(keys)))
    ax.set_xticklabels([f"{m}x{n}x{k} {t}" for m, n, k, t, _ in keys], rotation=45, ha="right",
                       fontsize=7)
    ax.set_ylabel("auto / cuBLAS SGEMM")
    ax.set_title(title, fontsize=9)
    ax.legend(title="math mode", fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    save(fig, plt, out)


def ratio_scatter(files, out, title):
    """auto's ratio to cuBLAS SGEMM against the product's size, one colour per math mode."""
    plt = pyplot()
    if not plt:
        return
    fig, ax = plt.subplots(figsize=(8.0, 4.8))
    for d in files:
        rows = auto_rows(d)
        ax.scatter([2.0 * r["m"] * r["n"] * r["k"] for r in rows], [r["ratio"] for r in rows],
                   s=10, alpha=0.7, label=d.get("math"))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ticks = [0.25, 0.5, 0.75, 1, 1.5, 2, 3, 4, 6, 8]
    ax.set_yticks(ticks, [f"{t:g}x" for t in ticks])
    ax.yaxis.set_minor_formatter(plt.NullFormatter())
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xlabel("FLOPs of the product (2mnk)")
    ax.set_ylabel("auto / cuBLAS SGEMM")
    ax.set_title(title, fontsize=9)
    ax.legend(title="math mode", fontsize=8)
    ax.grid(alpha=0.3)
    save(fig, plt, out)


def pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        print("plot.py: matplotlib is not installed (pip install matplotlib): no plots drawn",
              file=sys.stderr)
        return None


def save(fig, plt, out):
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110, metadata={"Software": None})
    plt.close(fig)
    print(f"wrote {os.path.relpath(out.resolve(), ROOT)}")


def stats_table(files):
    lines = ["| math mode | shapes | geometric mean | >= 0.9x | >= 1.0x | worst | best |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for d in files:
        if not auto_rows(d):
            continue  # rungs timed alone (a sweep of forced rungs): no auto to summarize
        st = random_stats(auto_rows(d))
        lines.append(f"| `{d.get('math')}` | {st['shapes']} | {st['geomean']:.2f}x | "
                     f"{st['at_09']:.0%} | {st['at_10']:.0%} | {st['worst']:.2f}x | "
                     f"{st['best']:.2f}x |")
    return "\n".join(lines) + "\n"


def cpu_section():
    """The newest cpu-vs-openblas file in full; earlier ones one line each (older files, with no
    "method", timed both libraries in one process, taking turns)."""
    runs = []
    for path in RESULTS.glob("cpu-vs-openblas-*.json"):
        with open(path, encoding="utf-8") as f:
            runs.append((path, json.load(f)))
    if not runs:
        return ""
    runs.sort(key=lambda pd: pd[1].get("date", ""))
    path, d = runs[-1]
    load = d.get("load_average_1min")
    lines = [f"`{os.path.relpath(path, ROOT)}`: {d.get('cpu')}, {d.get('threads')} threads "
             f"(OpenBLAS {d.get('openblas_threads')}), {d.get('layout')}, commit "
             f"{d.get('commit')}, {d.get('date')}.", ""]
    if d.get("method"):
        lines += [f"Method: {d['method']}."
                  + (f"  Load average (1 minute) {load['start']:.2f} at the start, "
                     f"{load['end']:.2f} at the end." if load else "")
                  + (f"  {d['note']}" if d.get("note") else ""), ""]
    rounds = any("tilegemm_round_gflops" in r for r in d["results"])
    head = "| n (n x n x n) | tilegemm GFLOP/s | OpenBLAS GFLOP/s | ratio |"
    rule = "|---:|---:|---:|---:|"
    if rounds:
        head += " tilegemm, each round | OpenBLAS, each round |"
        rule += "---|---|"
    lines += [head, rule]
    for r in d["results"]:
        # three decimals: parity is what these runs are about, and 0.997 is not 1.00
        row = (f"| {r['size']} | {r['tilegemm_gflops']:.1f} | {r['openblas_gflops']:.1f} | "
               f"{r['ratio']:.3f}x |")
        if rounds:
            row += (" " + ", ".join(f"{x:.0f}" for x in r.get("tilegemm_round_gflops", []))
                    + " | " + ", ".join(f"{x:.0f}" for x in r.get("openblas_round_gflops", []))
                    + " |")
        lines.append(row)
    lines.append("")
    if len(runs) > 1:
        lines += ["Earlier runs:", ""]
        for path, e in reversed(runs[:-1]):
            how = e.get("method", "both libraries in one process, taking turns")
            ratios = ", ".join(f"{r['size']}: {r['ratio']:.2f}x" for r in e["results"])
            lines.append(f"- `{os.path.relpath(path, ROOT)}` (commit {e.get('commit')}, "
                         f"{e.get('date')}; {how}): {ratios}")
        lines.append("")
    return "\n".join(lines)


# --- Past one GPU: scaling with the GPU count ---------------------------------------------

MULTI_GPU = RESULTS / "multi-gpu"
TORCH_MODES = {"tp": "tensor parallel", "fsdp": "FSDP2"}
TORCH_LIBRARIES = ("tilegemm", "torch")
HOST_SERIES = (("tilegemm", "pinned"), ("tilegemm", "pageable"), ("cublasXt", "pinned"))


def scaling_files(folder):
    """The multi-GPU records in a folder: examples/torch_tp_train.py's (a file holds one
    record, one mode at one GPU count, or a list of them) and bench/host_operands' (a file a
    run, each row with its GPU count).  Other JSON files are left alone."""
    torch_records, host_runs = [], []
    for path in sorted(Path(folder).glob("*.json")):
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        for record in data if isinstance(data, list) else [data]:
            if not isinstance(record, dict):
                continue
            if record.get("example") == "torch_tp_train":
                torch_records.append(dict(record, _path=str(path)))
            elif record.get("benchmark") == "host_operands":
                host_runs.append(dict(record, _path=str(path)))
    return torch_records, host_runs


def newest_torch_runs(records):
    """Per mode, its newest run (records of one commit and one model), the newest record of
    each GPU count in it: {mode: {gpus: record}}."""
    groups = {}
    for r in records:
        c = r.get("config", {})
        key = (r["mode"], r.get("commit"), c.get("width"), c.get("hidden"), c.get("batch"))
        groups.setdefault(key, []).append(r)
    chosen = {}
    for (mode, *_), group in groups.items():
        if mode not in chosen or max(r["date"] for r in group) > max(r["date"] for r in
                                                                    chosen[mode]):
            chosen[mode] = group
    modes = [m for m in TORCH_MODES if m in chosen] + sorted(set(chosen) - set(TORCH_MODES))
    return {m: {r["gpus"]: r for r in sorted(chosen[m], key=lambda r: r["date"])} for m in modes}


def newest_host_run(runs):
    return max(runs, key=lambda r: r.get("date", "")) if runs else None


def step_ms(record, library):
    return record["runs"][library]["step_ms"]


def shape_text(name):
    m, n, k = name.split("x")
    return f"{m}³" if m == n == k else name


def torch_scaling_table(runs):
    """Step times per mode and GPU count, tilegemm's speedup over torch, and each library's
    scaling: its step at 1 GPU over its step at N, where the run has 1 GPU."""
    lines = ["| mode | GPUs | torch ms | tilegemm ms | speedup | torch scaling | "
             "tilegemm scaling | largest loss difference |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for mode, by_gpus in runs.items():
        one = by_gpus.get(1)
        for gpus in sorted(by_gpus):
            r = by_gpus[gpus]
            cells = [f"{step_ms(r, 'torch'):.2f}", f"{step_ms(r, 'tilegemm'):.2f}",
                     f"{step_ms(r, 'torch') / step_ms(r, 'tilegemm'):.2f}x"]
            cells += [f"{step_ms(one, lib) / step_ms(r, lib):.2f}x" if one else "-"
                      for lib in ("torch", "tilegemm")]
            cells.append(f"{r['max_loss_diff']:.1e}")
            lines.append(f"| {TORCH_MODES.get(mode, mode)} | {gpus} | " + " | ".join(cells)
                         + " |")
    return "\n".join(lines) + "\n"


def host_series(run):
    """{shape: {(library, memory): {gpus: TFLOP/s}}} of a host_operands run's rows that ran, in
    the order the run measured the shapes."""
    series = {}
    for r in run["results"]:
        if number(r.get("tflops")) and r["tflops"] > 0:
            by_gpus = series.setdefault(r["shape"], {}).setdefault((r["library"], r["memory"]), {})
            by_gpus[r["gpus"]] = r["tflops"]
    return series


def copy_bounds(shape, gpu_count):
    """{gpus: TFLOP/s} the pinned copies allow a shape entry: each count's, or, in files that
    measured 1 GPU and all, those two."""
    if "by_gpus" in shape:
        return {b["gpus"]: b["h2d_bound_tflops"] for b in shape["by_gpus"]}
    return {1: shape["h2d_bound_tflops_1_gpu"], gpu_count: shape["h2d_bound_tflops_all"]}


def host_scaling_table(run):
    """TFLOP/s per shape and GPU count: tilegemm from pinned memory and its scaling over 1 GPU,
    from pageable memory, cublasXt from pinned memory, and the copy bound."""
    bounds = {s["shape"]: copy_bounds(s, run.get("gpu_count")) for s in run.get("shapes", [])}
    lines = ["| shape | GPUs | tilegemm pinned | / 1 GPU | tilegemm pageable | cublasXt pinned "
             "| copy bound |", "|---|---:|---:|---:|---:|---:|---:|"]
    for shape, series in host_series(run).items():
        pinned = series.get(HOST_SERIES[0], {})
        for gpus in sorted({g for by_gpus in series.values() for g in by_gpus}):
            cells = [f"{pinned[gpus]:.1f}" if gpus in pinned else "-",
                     f"{pinned[gpus] / pinned[1]:.2f}x" if gpus in pinned and 1 in pinned
                     else "-"]
            for key in HOST_SERIES[1:]:
                value = series.get(key, {}).get(gpus)
                cells.append(f"{value:.1f}" if value is not None else "-")
            bound = bounds.get(shape, {}).get(gpus)
            cells.append(f"{bound:.0f}" if number(bound) else "-")
            lines.append(f"| {shape_text(shape)} | {gpus} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def scaling_plot(runs, host, out):
    """Steps per second of examples/torch_tp_train.py and TFLOP/s of host-operand products,
    against the GPU count."""
    plt = pyplot()
    if not plt:
        return
    fig, (steps, rates) = plt.subplots(1, 2, figsize=(11.0, 4.6))
    counts = {1}
    for i, (mode, by_gpus) in enumerate(runs.items()):
        gpus = sorted(by_gpus)
        counts.update(gpus)
        for library, style, marker in zip(TORCH_LIBRARIES, ("-", "--"), "os"):
            steps.plot(gpus, [1e3 / step_ms(by_gpus[g], library) for g in gpus], style,
                       marker=marker, color=f"C{i}",
                       label=f"{library}, {TORCH_MODES.get(mode, mode)}")
    tflops = []
    for i, (shape, series) in enumerate(host_series(host).items() if host else []):
        for (library, memory), style, marker in zip(HOST_SERIES, ("-", "--", ":"), "os^"):
            by_gpus = series.get((library, memory), {})
            gpus = sorted(by_gpus)
            counts.update(gpus)
            tflops += by_gpus.values()
            rates.plot(gpus, [by_gpus[g] for g in gpus], style, marker=marker,
                       color=f"C{i + 2}", label=f"{library} {memory}, {shape_text(shape)}")
    for ax in (steps, rates):
        ax.set_xscale("log", base=2)
        ax.set_xticks(sorted(counts), [str(c) for c in sorted(counts)])
        ax.minorticks_off()
        ax.set_xlim(min(counts) / 1.25, max(counts) * 1.25)
        ax.set_xlabel("GPUs")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    steps.set_ylim(bottom=0)
    steps.set_ylabel("steps per second")
    steps.set_title("examples/torch_tp_train.py (TP: one batch split; FSDP2: a batch a GPU)",
                    fontsize=8)
    rates.set_yscale("log")
    if tflops:  # plain numbers on the log scale, from under the slowest to over the fastest
        ticks = [t for t in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000)
                 if min(tflops) / 2 <= t <= max(tflops) * 2]
        rates.set_yticks(ticks, [str(t) for t in ticks])
        rates.minorticks_off()
    rates.set_ylabel("TFLOP/s")
    rates.set_title("products of host operands (bench/host_operands)", fontsize=8)
    save(fig, plt, out)


def scaling_section(folder, plots, img):
    """docs/results.md's section on the multi-GPU runs: the newest of each kind in `folder`."""
    torch_records, host_runs = scaling_files(folder)
    runs, host = newest_torch_runs(torch_records), newest_host_run(host_runs)
    if not runs and not host:
        return []
    name = "multi-gpu-scaling.png"
    out = ["## Past one GPU: scaling with the GPU count", "",
           f"The newest runs in `{os.path.relpath(folder, ROOT)}/` (its README says how each was "
           "made), at each GPU count they measured.", "",
           f"![steps per second and TFLOP/s against the GPU count]({img}/{name})", ""]
    if runs:
        some = next(iter(next(iter(runs.values())).values()))
        c = some["config"]
        files = [r for by_gpus in runs.values() for r in by_gpus.values()]
        out += [f"**tilegemm.torch under torch.distributed** (`examples/torch_tp_train.py` on "
                f"{some['devices'][0]}, MLP {c['width']} -> {c['hidden']} -> {c['width']}, batch "
                f"{c['batch']} (FSDP2: {c['batch']} on each GPU), {c['steps']} steps, TF32 off; "
                + ", ".join(f"`{source_name(r)}`" for r in files) + "): the median step of the "
                "slowest rank, and each library's scaling, its step at 1 GPU over its step at N.  "
                "Tensor parallel splits one batch over the GPUs (ideal scaling: N); FSDP2 gives "
                "each GPU a batch of its own (ideal: 1, with N times the rows).", "",
                torch_scaling_table(runs)]
    if host:
        same = all(s.get("bits_identical_1_vs_all") for s in host.get("shapes", []))
        out += [f"**Products of host operands** (`bench/host_operands` on {host['devices'][0]}, "
                f"commit {host.get('commit')}, `{source_name(host)}`): TFLOP/s of column-major "
                "NN products from host memory, wall-clock medians with C written back; copy "
                "bound: the rate at which A and B would cross once at the pinned bandwidth of "
                "those GPUs copying at once.  C bit-identical to 1 GPU's at every count, from "
                f"pinned and pageable memory: {'yes' if same else '**no**'}.", "",
                host_scaling_table(host)]
    if plots:
        scaling_plot(runs, host, IMG / name)
    return out


def results_page(files, plots):
    """docs/results.md, and its plots when `plots` is set."""
    current, earlier = current_and_earlier(files)
    img = os.path.relpath(IMG, RESULTS_MD.parent)
    out = ["# Results", "",
           "<!-- Generated by bench/plot.py from bench/results/*.json; do not edit by hand. -->",
           "", "Every figure here comes from a `tilegemm bench --json` file in `bench/results/`, "
           "which records the device, driver, cuBLAS, the command, the commit and the date.  "
           "`python3 bench/plot.py` regenerates this page, its plots and the README's table.  "
           "Ratios are to cuBLAS SGEMM (FP32, no TF32) timed in the same run on the same buffers; "
           "`tilegemm bench` checks every result against float64 on 256 sampled entries.", "",
           "## Summary", "", summary(current, img, os.path.relpath(ROOT / "docs" / "design.md", RESULTS_MD.parent))]
    fixed = [d for d in current if d.get("suite") == "all"]
    if fixed:
        out += ["## The fixed suites in every math mode", "",
                f"`{fixed[0].get('command', '').split(' --json')[0]}` and the same in the other modes.",
                "", f"![auto against cuBLAS on the fixed suites]({img}/fixed-suites.png)", "",
                make_table(fixed, commit=False)]
        if plots:
            ratio_bars(fixed, IMG / "fixed-suites.png", "auto / cuBLAS SGEMM, fixed suites")
    seeds = sorted({d["random_seed"] for d in current if d.get("suite") == "random"}, reverse=True)
    fitted = fitted_seeds()
    for seed in seeds:
        files_seed = [d for d in current if d.get("suite") == "random" and d["random_seed"] == seed]
        note = ("the planner learned from it" if seed in fitted else
                f"not one the planner learned from (seeds {', '.join(map(str, sorted(fitted)))}"
                ": the cost model's sweeps, named in `tuning/model_sm_90.tsv`, and the regret "
                "corpus's train half)")
        name = f"random-seed{seed}.png"
        out += [f"## Random shapes, seed {seed}", "",
                f"`{files_seed[0].get('command', '').split(' --json')[0]}`: a seed {note}.", "",
                stats_table(files_seed), f"![auto against cuBLAS on random shapes]({img}/{name})",
                "", "<details><summary>Every shape</summary>", "",
                make_table(files_seed, commit=False), "</details>", ""]
        if plots:
            ratio_scatter(files_seed, IMG / name, f"auto / cuBLAS SGEMM, random shapes, seed {seed}")
    named = [d for d in current if d.get("suite") == "custom"]
    if named:
        out += ["## Named shapes", "", "Shapes named one by one, in every transpose, per layout "
                "(the command is in each file).", "", stats_table(named),
                "<details><summary>Every shape</summary>", "", make_table(named, commit=False),
                "</details>", ""]
    out += ["## The CPU backend beside OpenBLAS", "",
            "`bench/cpu_vs_openblas` (run by `scripts/run.sh` where OpenBLAS is installed).", "",
            cpu_section()]
    out += scaling_section(MULTI_GPU, plots, img)
    if earlier:
        out += ["## Earlier runs", "", "Kept for reference; the sections above use the newest."
                "", ""]
        out += [f"- `{source_name(d)}`: {describe(d, commit=False)}" for d in earlier]
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def with_summary(readme_text, table):
    start = readme_text.find(BEGIN)
    end = readme_text.find(END, start + len(BEGIN)) if start >= 0 else -1
    if start < 0 or end < 0:
        sys.exit(f"plot.py: README.md has no {BEGIN} / {END} markers")
    return readme_text[:start + len(BEGIN)] + "\n" + table + readme_text[end:]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("json", nargs="*", help="print one table of these files instead")
    ap.add_argument("--out", help="with files: draw them into this PNG")
    ap.add_argument("--check", action="store_true",
                    help="only compare docs/results.md and the README's summary with the JSON")
    ap.add_argument("--scaling", metavar="DIR",
                    help="print the scaling tables of the multi-GPU runs in DIR instead")
    args = ap.parse_args(argv)

    if args.scaling:
        torch_records, host_runs = scaling_files(args.scaling)
        runs, host = newest_torch_runs(torch_records), newest_host_run(host_runs)
        if runs:
            print(torch_scaling_table(runs))
        if host:
            print(host_scaling_table(host))
        if not runs and not host:
            print(f"plot.py: no examples/torch_tp_train.py or host_operands JSON in {args.scaling}")
            return 1
        if args.out:
            scaling_plot(runs, host, Path(args.out))
        return 0

    if args.json:
        files = load(args.json)
        print(make_table(files), end="")
        return 0 if not args.out or draw(files, Path(args.out)) else 1

    files = bench_files()
    page = results_page(files, plots=not args.check)
    readme_text = README.read_text(encoding="utf-8")
    readme_new = with_summary(readme_text, summary(current_and_earlier(files)[0]))
    stale = [path for path, old, new in ((RESULTS_MD, RESULTS_MD.read_text(encoding="utf-8")
                                          if RESULTS_MD.exists() else "", page),
                                         (README, readme_text, readme_new)) if old != new]
    if args.check:
        for path in stale:
            print(f"plot.py: {os.path.relpath(path, ROOT)} is not what bench/results/*.json "
                  "gives: run python3 bench/plot.py and commit the result")
        return 1 if stale else 0
    RESULTS_MD.write_text(page, encoding="utf-8")
    README.write_text(readme_new, encoding="utf-8")
    for path in stale:
        print(f"updated {os.path.relpath(path, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
