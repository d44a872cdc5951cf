#!/usr/bin/env python3
"""The layout's rules on #include, checked on the source tree (CTest: layout_includes).

    python3 tests/layout/check_includes.py [ROOT]

1. Nothing under src/ (the library) includes a file of cli/ (the command-line program),
   check/ (the float64 checking library), bench/ (the benchmark) or tests/: the library sits
   below all of them.
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
TREES = ["include", "src", "cli", "check", "bench", "tests", "examples"]
# Where the build looks for quoted includes after the including file's folder
# (target_include_directories in the CMake files).
SEARCH = ["include", "src", "check", "cli", "bench", "tests", "tests/emulated"]
UPPER = ("cli/", "check/", "bench/", "tests/")
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
            if path.startswith("src/") and target.startswith(UPPER):
                problems.append(f"{path} includes {target}: the library (src/) must not "
                                f"depend on {target.split('/')[0]}/")
    problems += ["include cycle: " + " -> ".join(c) for c in cycles(graph)]
    for p in problems:
        print("layout:", p)
    print(f"layout: {len(graph)} files, {sum(map(len, graph.values()))} includes, "
          f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
