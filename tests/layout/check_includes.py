#!/usr/bin/env python3
"""The layout's rules on #include, checked on the source tree (CTest: layout_includes).

    python3 tests/layout/check_includes.py [ROOT]

1. Folders include downwards only.  From the bottom up:
     include/   the public header, which includes nothing of the project's but itself;
     src/       the library: include/ and itself;
     check/     the float64 checking library and what the tools share (the argument parser,
                the roofline): the library (include/, src/) and itself;
     cli/       the command-line program's subcommands, and
     bench/     the benchmark: each the public header, check/ and itself, never each other,
                nor the library's internals (src/): the tools use the library as its
                users do, through include/;
     app/       the tilegemm executable's entry point: cli/, bench/ and what they may;
     examples/  the public header only; tests/ may include anything.
   A file that includes a folder beside or above its own is named with the rule it breaks.
2. No include cycle between source files: the graph of quoted #include lines, resolved as the
   compiler resolves them (the including file's folder, then the project's include folders),
   has no cycle.
Exits 1 naming every violation, 0 when there is none.
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), "..", ".."))
TREES = ["include", "src", "cli", "check", "bench", "app", "tests", "examples"]
# Where the build looks for quoted includes after the including file's folder
# (target_include_directories in the CMake files).
SEARCH = ["include", "src", "check", "cli", "bench", "tests", "tests/emulated"]
# The folders each folder may include (its own among them); a folder not listed (tests/) may
# include any.
ALLOWED = {
    "include": {"include"},
    "src": {"include", "src"},
    "check": {"include", "src", "check"},
    "cli": {"include", "check", "cli"},
    "bench": {"include", "check", "bench"},
    "app": {"include", "check", "cli", "bench", "app"},
    "examples": {"include", "examples"},
}
SUFFIXES = (".c", ".h", ".cu", ".cuh", ".cpp", ".def")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def sources():
    for tree in TREES:
        for folder, dirs, files in os.walk(os.path.join(ROOT, tree)):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            for name in files:
                if name.endswith(SUFFIXES):
                    yield os.path.relpath(os.path.join(folder, name), ROOT)


def resolve(path, name):
    for base in [os.path.dirname(path)] + SEARCH:
        candidate = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(os.path.join(ROOT, candidate)):
            return candidate
    return None


def cycles(graph):
    """The cycles a depth-first search of graph (node -> list of nodes) meets, each as the list
    of its nodes with the first repeated at the end."""
    found, state, stack = [], {}, []

    def visit(node):
        state[node] = 1  # on the stack
        stack.append(node)
        for nxt in graph.get(node, []):
            if state.get(nxt) == 1:
                found.append(stack[stack.index(nxt):] + [nxt])
            elif state.get(nxt) is None:
                visit(nxt)
        stack.pop()
        state[node] = 2  # done

    for node in sorted(graph):
        if state.get(node) is None:
            visit(node)
    return found


def main():
    graph, problems = {}, []
    for path in sorted(sources()):
        with open(os.path.join(ROOT, path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        graph[path] = []
        for name in INCLUDE.findall(text):
            target = resolve(path, name)
            if target is None:
                continue  # a generated or system header
            graph[path].append(target)
            here, there = path.split("/")[0], target.split("/")[0]
            allowed = ALLOWED.get(here)
            if allowed is not None and there not in allowed:
                problems.append(f"{path} includes {target}: {here}/ may include only "
                                f"{', '.join(sorted(allowed))}, not {there}/ (folders include "
                                f"downwards only)")
    problems += ["include cycle: " + " -> ".join(c) for c in cycles(graph)]
    for p in problems:
        print("layout:", p)
    print(f"layout: {len(graph)} files, {sum(map(len, graph.values()))} includes, "
          f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
