#!/usr/bin/env python3
"""No call cycle between the library's source files (CTest: layout_calls).

    python3 tests/layout/check_calls.py OBJECT...

Reads each object file's defined and undefined global symbols with `nm`, draws an edge from
the file that calls a function (or reads a variable) to the file that defines it, and fails
naming every cycle of that graph: a file is either below another or above it, never both.
Exits 77 (skipped) where nm is missing.
"""
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_includes import cycles  # noqa: E402


def symbols(path):
    out = subprocess.run(["nm", "-P", path], capture_output=True, text=True, check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            used.add(name)
        elif kind in "TDBRGSVW":
            defined.add(name)
    return defined, used


def label(path):
    """src/plan/plan.c from .../tilegemm_objects.dir/src/plan/plan.c.o"""
    marker = ".dir/"
    name = path[path.index(marker) + len(marker):] if marker in path else os.path.basename(path)
    return name[:-2] if name.endswith(".o") else name


def main(objects):
    if not shutil.which("nm"):
        print("layout: nm not found: skipped")
        return 77
    defined_by, uses = {}, {}
    for path in objects:
        defined, used = symbols(path)
        uses[label(path)] = used
        for name in defined:
            defined_by.setdefault(name, label(path))
    graph = {f: sorted({defined_by[s] for s in used if s in defined_by} - {f})
             for f, used in uses.items()}
    problems = ["call cycle: " + " -> ".join(c) for c in cycles(graph)]
    for p in problems:
        print("layout:", p)
    print(f"layout: {len(graph)} object files, {sum(map(len, graph.values()))} call edges, "
          f"{len(problems)} cycle(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
