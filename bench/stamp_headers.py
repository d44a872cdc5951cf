#!/usr/bin/env python3
"""Rewrite each kernel file's `Measured:` header line from the committed benchmark JSON.

    python3 bench/stamp_headers.py [--results bench/results] [--kernels src/cuda/kernels]
                                   [--check]

For every kernel file (k*.cu) the rungs it registers (`.name = "..."`) are looked up in the
newest GPU-mode JSON under --results that has them (by the file's "date"), and the line

    * Measured:    <rung> <T> TFLOP/s (<R>x cuBLAS) at <shape>, ... on <device>, <file>

replaces the old `Measured:` line (one line; shapes are those of the file, at most four,
squares first).  Nothing else in the file changes.  --check writes nothing and exits 1 when a
file would change (for CI).  Files whose rungs have no results keep their line.
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
        rows = [r for r in data["results"] if r.get("algo") in rungs and r.get("status") == "OK"
                and isinstance(r.get("tflops"), (int, float))]
        if not rows:
            continue
        parts = []
        for rung in rungs:
            mine = [r for r in rows if r["algo"] == rung]
            # squares first, NN before the transposes, largest first
            mine.sort(key=lambda r: (not (r["m"] == r["n"] == r["k"]), r.get("trans", "NN") != "NN",
                                     -r["m"] * r["n"] * r["k"]))

            def where(r):
                trans = r.get("trans", "NN")
                return f'{r["m"]}x{r["n"]}x{r["k"]}' + ("" if trans == "NN" else f" {trans}")

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


def stamp(kernel, files, root, check):
    text = kernel.read_text(encoding="utf-8")
    rungs = re.findall(r'\.name\s*=\s*"([^"]+)"', text)
    line = re.search(r"^(\s*\*\s*Measured:\s*)(.*)$", text, flags=re.M)
    if not rungs or not line:
        return False
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
