#!/usr/bin/env python3
"""bench/fit_model.py reads every sweep it is given.

    python3 tests/fit_model_load.py
        exit 0 when, of sweeps written to a scratch folder:
        - a rung's runs of different cases in different files (a re-timing split by layout)
          all load;
        - a case measured again in a later file replaces the earlier run of that rung alone,
          and other rungs' runs of the case stay;
        - failed runs are left out;
        exit 1, saying what, when not.
"""
import json
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "bench"))
import fit_model  # noqa: E402

DEVICE = {"name": "test GPU", "compute_capability": "9.0", "sm_count": 132}


def run(algo, m, n, k, trans, layout, ms, status="OK"):
    return {"algo": algo, "m": m, "n": n, "k": k, "trans": trans, "layout": layout,
            "median_ms": ms, "cublas_median_ms": 1.0, "status": status, "split_k": 1, "ran": algo}


def main():
    sweeps = [
        [run("r1", 100, 200, 300, "NN", "col", 1.0), run("r2", 100, 200, 300, "NN", "col", 2.0)],
        [run("r1", 400, 500, 600, "TN", "row", 3.0),
         run("r1", 7, 8, 9, "NN", "col", 0.5, "MISMATCH")],
        [run("r1", 100, 200, 300, "NN", "col", 1.5)],  # r1 of the first case, re-timed
    ]
    failures = []
    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for i, results in enumerate(sweeps):
            path = pathlib.Path(folder) / f"sweep{i}.json"
            path.write_text(json.dumps({"device": DEVICE, "results": results}))
            paths.append(str(path))
        _, runs = fit_model.load(paths)
    got = sorted((x["algo"], x["key"], round(x["us"])) for x in runs)
    want = sorted([("r1", (100, 200, 300, "NN", "col"), 1500),
                   ("r2", (100, 200, 300, "NN", "col"), 2000),
                   ("r1", (400, 500, 600, "TN", "row"), 3000)])
    if got != want:
        failures.append(f"load kept {got}, expected {want}")
    for f in failures:
        print("fit_model_load:", f)
    print("fit_model_load:", "FAILED" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
