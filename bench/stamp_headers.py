#!/usr/bin/env python3
"""Rewrite each kernel file's `Measured:` header line from the committed benchmark JSON.

    python3 bench/stamp_headers.py [--results bench/results] [--kernels src/cuda/kernels]
                                   [--check]

For every kernel file (k*.cu) the rungs it registers (`.name = "..."`, or `TG_IN_UNIT(name)`
around a macro's entry) are looked up in the newest GPU-mode JSON under --results that has them
(by the file's "date"), and the line

    * Measured:    <rung> <T> TFLOP/s (<R>x cuBLAS) at <shape>, ... on <device>, <file>

replaces the old `Measured:` line (one line; shapes are those of the file, at most four,
squares first; a rung timed at several split-K counts, `rung/kS`, by its fastest).  A
`Measured:` paragraph of several lines is left as it is.  Nothing else in the file changes.
--check writes nothing and exits 1 when a file would change (for CI).  Files whose rungs have
no results keep their line.
"""
import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def gpu_files(results_dir):
    files = []
    for path in sorted(Path(results_dir).glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if data.get("mode") == "gpu" and data.get("results"):
            files.append((data.get("date", ""), path, data))
    return [(p, d) for _, p, d in sorted(files, key=lambda f: f[0], reverse=True)]


def measured_text(rungs, files, root):
    """The text after `Measured:` for these rungs, from the newest file that has them."""
    for path, data in files:
        rows = [r for r in data["results"] if rung_of(r) in rungs and r.get("status") == "OK"
                and isinstance(r.get("tflops"), (int, float))]
        if not rows:
            continue
        parts = []
        for rung in rungs:
            mine = fastest_split([r for r in rows if rung_of(r) == rung])
            # squares first, NN before the transposes, largest first
            mine.sort(key=lambda r: (not (r["m"] == r["n"] == r["k"]), r.get("trans", "NN") != "NN",
                                     -r["m"] * r["n"] * r["k"]))

            def where(r):
                trans = r.get("trans", "NN")
                slices = r["algo"].split("/k")[1] if "/k" in r["algo"] else "1"
                return (f'{r["m"]}x{r["n"]}x{r["k"]}' + ("" if trans == "NN" else f" {trans}") +
                        ("" if slices == "1" else f" in {slices} slices"))

            shapes = ", ".join(
                f'{r["tflops"]:.1f} TFLOP/s ({r["ratio"]:.2f}x cuBLAS) at {where(r)}'
                if isinstance(r.get("ratio"), (int, float)) else
                f'{r["tflops"]:.1f} TFLOP/s at {where(r)}'
                for r in mine[:4])
            if shapes:
                parts.append(f"{rung} {shapes}")
        if parts:
            try:
                where = path.resolve().relative_to(root)
            except ValueError:
                where = path
            device = data.get("device", {}).get("name", "unknown device")
            return "; ".join(parts) + f" on {device}, commit {data.get('commit', '?')} ({where})"
    return None


def rung_of(r):
    """The rung of a result: its algo without a split-K suffix (`skinny32x32/k4`)."""
    return r.get("algo", "").split("/")[0]


def fastest_split(rows):
    """Of a rung's results timed at several split-K counts (`rung/kS`), each case's fastest."""
    best = {}
    for r in rows:
        case = (r["m"], r["n"], r["k"], r.get("trans", "NN"), r.get("layout", "row"))
        if case not in best or r["tflops"] > best[case]["tflops"]:
            best[case] = r
    return list(best.values())


def stamp(kernel, files, root, check):
    text = kernel.read_text(encoding="utf-8")
    # a rung's entry is in `.name = "..."`, or in a macro's argument under `#if TG_IN_UNIT(name)`
    names = re.findall(r'\.name\s*=\s*"([^"]+)"', text) + re.findall(r"TG_IN_UNIT\((\w+)\)", text)
    rungs = list(dict.fromkeys(names))
    line = re.search(r"^(\s*\*\s*Measured:\s*)(.*)$", text, flags=re.M)
    if not rungs or not line:
        return False
    if re.match(r"\s*\*\s{5,}\S", text[line.end() + 1:].split("\n", 1)[0]):
        return False  # a paragraph of its own, written by hand: left as it is
    new = measured_text(rungs, files, root)
    if new is None or line.group(2) == new:
        return False
    if not check:
        kernel.write_text(text[:line.start(2)] + new + text[line.end(2):], encoding="utf-8")
    print(f"{'would stamp' if check else 'stamped'} {kernel}: {new}")
    return True


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default=ROOT / "bench" / "results")
    ap.add_argument("--kernels", default=ROOT / "src" / "cuda" / "kernels")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    files = gpu_files(args.results)
    changed = [stamp(k, files, ROOT, args.check) for k in sorted(Path(args.kernels).glob("k*.cu"))]
    return 1 if args.check and any(changed) else 0


if __name__ == "__main__":
    sys.exit(main())
