#!/usr/bin/env python3
"""bench/plot.py's scaling section reads both forms of the multi-GPU records.

    python3 tests/plot_scaling.py
        exit 0 when it does, 1 (saying what) when not:
        - bench/results/multi-gpu/ as committed: the newest torch and host-operand runs load,
          and their tables give the figures of their own files;
        - records as a run at several GPU counts leaves them, written to a scratch folder:
          torch records one a file and a list in one file, host-operand rows at 1, 2 and 4
          GPUs with each count's bound; an older run of another commit is passed over, the
          scaling is each library's step at 1 GPU over its step at N, and a run without 1 GPU
          gets none;
        - `plot.py --scaling DIR` prints those tables, and fails on a folder without records;
        - with matplotlib, the plot is drawn (a PNG).
"""
import contextlib
import copy
import io
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.dont_write_bytecode = True  # nothing left in bench/
sys.path.insert(0, str(ROOT / "bench"))
import plot  # noqa: E402

failures = []


def expect(condition, what):
    if not condition:
        failures.append(what)
        print(f"plot_scaling: FAILED: {what}")


def rows_of(table):
    """The data rows of a Markdown table, as lists of cells."""
    return [[c.strip() for c in line.strip("|").split("|")] for line in table.splitlines()[2:]]


def committed():
    """The committed records load as the newest run of each kind, and the tables say what the
    files hold (checked against the files themselves, so a new run committed keeps it true)."""
    records, hosts = plot.scaling_files(plot.MULTI_GPU)
    runs, host = plot.newest_torch_runs(records), plot.newest_host_run(hosts)
    expect(set(runs) == {"tp", "fsdp"} and all(runs.values()),
           f"the committed torch runs hold tensor parallel and FSDP2 (got {sorted(runs)})")
    for row in rows_of(plot.torch_scaling_table(runs)):
        mode = "tp" if row[0] == "tensor parallel" else "fsdp"
        r = runs[mode][int(row[1])]
        expect(row[2:4] == [f"{r['runs']['torch']['step_ms']:.2f}",
                            f"{r['runs']['tilegemm']['step_ms']:.2f}"],
               f"the {row[0]} row at {row[1]} GPUs gives its record's step times (got {row})")
        one = runs[mode].get(1)
        expect((row[6] == "-") == (one is None),
               f"the {row[0]} row at {row[1]} GPUs: a scaling exactly where a 1-GPU run is")
    table = rows_of(plot.host_scaling_table(host))
    pinned = {(r["shape"], r["gpus"]): r["tflops"] for r in host["results"]
              if r["library"] == "tilegemm" and r["memory"] == "pinned"}
    shown = 0
    for row in table:
        shape = next((s for s, g in pinned if plot.shape_text(s) == row[0]), None)
        rate = pinned.get((shape, int(row[1])))
        one = pinned.get((shape, 1))
        expect(rate is not None and row[2] == f"{rate:.1f}" and
               row[3] == f"{rate / one:.2f}x", f"the host-operand row {row} gives its file's rate")
        shown += 1
    expect(shown == len(pinned), f"every pinned tilegemm rate of the newest host run is shown "
                                 f"({shown} of {len(pinned)})")


def torch_record(template, mode, gpus, torch_ms, tilegemm_ms, commit, date):
    r = copy.deepcopy(template)
    r.update(mode=mode, gpus=gpus, commit=commit, date=date)
    r["config"]["fsdp"] = mode == "fsdp"
    r["runs"]["torch"]["step_ms"], r["runs"]["tilegemm"]["step_ms"] = torch_ms, tilegemm_ms
    return r


def host_run(template, counts):
    """A host_operands record at `counts` GPUs: 100 * N**0.9 TFLOP/s pinned, 80 % of it
    pageable, 6 * N cublasXt; each count's bound 200 * N."""
    run = copy.deepcopy(template)
    run.update(date="2026-12-01T10:00:00Z", commit="fedcba9", gpu_count=max(counts),
               gpu_counts=counts)
    shapes = [s["shape"] for s in run["shapes"]]
    run["results"] = []
    for shape in shapes:
        for library, memory in (("tilegemm", "pinned"), ("tilegemm", "pageable"),
                                ("cublasXt", "pinned"), ("cublasXt", "pageable")):
            for n in counts:
                tflops = 6.0 * n if library == "cublasXt" else 100.0 * n ** 0.9
                run["results"].append({"shape": shape, "library": library, "memory": memory,
                                       "gpus": n, "tflops": tflops * (0.8 if memory == "pageable"
                                                                      else 1.0)})
    for s in run["shapes"]:
        s["by_gpus"] = [{"gpus": n, "h2d_bound_tflops": 200.0 * n,
                         "bits_identical_to_1_gpu": True} for n in counts]
    return run


def several_counts(scratch):
    tp = json.loads((plot.MULTI_GPU / "h100x2-2026-11-26-744717f-torch-tp.json").read_text())
    host = json.loads((plot.MULTI_GPU / "h100x2-2026-11-26-199e977-host-operands.json")
                      .read_text())
    newer = "2026-12-01T10:00:00Z"
    for n in (1, 2, 4):  # tensor parallel: a file a count
        record = torch_record(tp, "tp", n, 200.0 / n, 100.0 / n * 1.25 ** (n > 1), "fedcba9",
                              newer)
        (scratch / f"torch-tp-{n}.json").write_text(json.dumps(record))
    # FSDP2: one file holding every count
    (scratch / "torch-fsdp.json").write_text(json.dumps(
        [torch_record(tp, "fsdp", n, 240.0 * (1 + n / 10), 120.0, "fedcba9", newer)
         for n in (1, 2, 4)]))
    # an older run of another commit, to be passed over
    (scratch / "old-torch-tp.json").write_text(json.dumps(tp))
    (scratch / "old-host.json").write_text(json.dumps(host))
    (scratch / "host-gpus.json").write_text(json.dumps(host_run(host, [1, 2, 4])))
    (scratch / "unrelated.json").write_text(json.dumps({"schema": "something else"}))

    records, hosts = plot.scaling_files(scratch)
    runs, run = plot.newest_torch_runs(records), plot.newest_host_run(hosts)
    counts = {m: sorted(by_gpus) for m, by_gpus in runs.items()}
    expect(counts == {"tp": [1, 2, 4], "fsdp": [1, 2, 4]},
           f"the newest run of each mode, at 1, 2 and 4 GPUs (got {counts})")
    expect(all(r["commit"] == "fedcba9" for by in runs.values() for r in by.values()),
           "the older run of another commit is passed over")
    table = rows_of(plot.torch_scaling_table(runs))
    expect(table[1][:7] == ["tensor parallel", "2", "100.00", "62.50", "1.60x", "2.00x",
                            "1.60x"],
           f"tensor parallel at 2 GPUs: step times, speedup, each library's scaling "
           f"(got {table[1]})")
    expect(table[2][5:7] == ["4.00x", "3.20x"], f"tensor parallel at 4 GPUs (got {table[2]})")
    expect(table[5][:7] == ["FSDP2", "4", "336.00", "120.00", "2.80x", "0.79x", "1.00x"],
           f"FSDP2 at 4 GPUs, from the list file (got {table[5]})")
    without_one = {"tp": {n: r for n, r in runs["tp"].items() if n > 1}}
    expect(all(r[5:7] == ["-", "-"] for r in rows_of(plot.torch_scaling_table(without_one))),
           "no scaling without a 1-GPU step")

    expect(run["commit"] == "fedcba9", "the newest host-operand run")
    table = rows_of(plot.host_scaling_table(run))
    expect([r[1] for r in table] == ["1", "2", "4"] * 2, f"host rows at 1, 2, 4 GPUs (got {table})")
    expect(table[2][2:] == ["348.2", "3.48x", "278.6", "24.0", "800"],
           f"host row at 4 GPUs: pinned, over 1 GPU, pageable, cublasXt, bound (got {table[2]})")

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = plot.main(["--scaling", str(scratch)])
    expect(status == 0 and "| FSDP2 | 4 |" in out.getvalue() and "| 16384³ | 4 |" in
           out.getvalue(), "plot.py --scaling prints both tables")
    empty = scratch / "empty"
    empty.mkdir()
    with contextlib.redirect_stdout(io.StringIO()):
        expect(plot.main(["--scaling", str(empty)]) == 1, "plot.py --scaling fails on no records")

    if plot.pyplot() is None:
        print("plot_scaling: matplotlib not installed: the plot is not drawn")
        return
    png = scratch / "scaling.png"
    with contextlib.redirect_stdout(io.StringIO()):
        plot.scaling_plot(runs, run, png)
    expect(png.exists() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", "the plot is a PNG")


def main():
    committed()
    with tempfile.TemporaryDirectory() as scratch:
        several_counts(Path(scratch))
    if failures:
        return 1
    print("plot_scaling: the committed records and records at 1, 2 and 4 GPUs load")
    return 0


if __name__ == "__main__":
    sys.exit(main())
