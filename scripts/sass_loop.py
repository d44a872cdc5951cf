#!/usr/bin/env python3
"""The main loop of each kernel in a built object, read from its SASS: what a device run would
only show as stalls, counted here without a GPU.

    scripts/sass_loop.py OBJECT [--kernel REGEX] [--cuobjdump PATH]

OBJECT is a .o, .cubin or library with sm_90 SASS (a kernel unit of the build, for example
build/CMakeFiles/tilegemm_objects.dir/kernel_units/k04_ffma.ffma128x256.cu.o).  For each kernel
whose mangled name matches REGEX, the loop is the longest backward branch's body with at least
256 FFMA or HMMA/GMMA instructions, and the report gives:

  mix        the loop's instructions by opcode (the most frequent ones);
  ffma reads how many FFMA read 1, 2 or 3 registers from the file: sources without `.reuse`
             (the operand reuse caches serve the others), how many of those reading two or
             more read two of one bank (register number mod 2), and the reads in all
             (bench/results/ffma/README.md: cuBLAS's FFMA loop 480 / 1607, rung 4's 128 / 2012);
  lds->use   instructions from each LDS to the first instruction reading what it loaded
             (minimum, quartile, median): too few and the loads' latency shows;
  copy war   instructions from each LDGSTS to the first write of its address registers, and
             which instruction writes them: too few and the write waits for the copy to read
             its operands (stall_long_sb on a device profile).

cuobjdump comes from --cuobjdump, $CUOBJDUMP, the PATH, or the CUDA toolkit's bin folder.
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys

LINE = re.compile(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
PREDICATE = re.compile(r"^@!?U?P\w+\s+")


def find_cuobjdump(given):
    for path in (given, os.environ.get("CUOBJDUMP"), shutil.which("cuobjdump"),
                 "/usr/local/cuda/bin/cuobjdump"):
        if path and os.path.exists(path):
            return path
    sys.exit("sass_loop.py: cuobjdump not found (give --cuobjdump or set CUOBJDUMP)")


def kernels(sass):
    """(name, [(address, instruction text without predicate kept)]) of each function."""
    for part in re.split(r"\n\s*Function : ", sass)[1:]:
        name = part.split("\n", 1)[0].strip()
        body = [(int(m.group(1), 16), m.group(2)) for m in map(LINE.match, part.split("\n")) if m]
        yield name, body


def opcode(text):
    return PREDICATE.sub("", text).split()[0]


def main_loop(body):
    best = []
    for address, text in body:
        m = re.search(r"\bBRA\b.*?(0x[0-9a-f]+)", text)
        if not m or int(m.group(1), 16) >= address:
            continue
        loop = [t for a, t in body if int(m.group(1), 16) <= a <= address]
        heavy = sum(1 for t in loop if opcode(t).startswith(("FFMA", "HMMA", "HGMMA", "IMMA")))
        if heavy >= 256 and len(loop) > len(best):
            best = loop
    return best


def operands(text):
    rest = PREDICATE.sub("", text).split(None, 1)
    return [o.strip() for o in rest[1].split(",")] if len(rest) > 1 else []


def written(text):
    """The registers an instruction writes (its first operand), or an empty set."""
    op = opcode(text)
    if op.startswith(("LDGSTS", "STS", "STG", "BAR", "DEPBAR", "BRA", "ST.", "RED", "ATOM")):
        return set()
    ops = operands(text)
    m = re.match(r"R(\d+)", ops[0]) if ops else None
    if not m:
        return set()
    width = 4 if ".128" in op else 2 if (".64" in op or "WIDE" in op) else 1
    return set(range(int(m.group(1)), int(m.group(1)) + width))


def read(text):
    ops = operands(text)
    start = 0 if opcode(text).startswith(("LDGSTS", "STS", "STG")) else 1
    return {int(r) for o in ops[start:] for r in re.findall(r"\bR(\d+)", o)}


def quartiles(values):
    v = sorted(values)
    return (v[0], v[len(v) // 4], v[len(v) // 2]) if v else (None, None, None)


def report(name, loop):
    n = len(loop)
    mix = collections.Counter(opcode(t).split(".")[0] for t in loop)
    reads = collections.Counter()
    one_bank = 0
    for t in loop:
        if opcode(t) == "FFMA":
            file = {int(o.lstrip("-")[1:]) for o in operands(t)[1:] if re.fullmatch(r"-?R\d+", o)}
            reads[len(file)] += 1
            one_bank += len(file) >= 2 and len({r % 2 for r in file}) < len(file)
    lds_use, war = [], []
    for i, t in enumerate(loop):
        if opcode(t).startswith("LDS"):
            loaded = written(t)
            for d in range(1, n):
                u = loop[(i + d) % n]
                if not opcode(u).startswith("LDS") and loaded & read(u):
                    lds_use.append(d)
                    break
        if opcode(t).startswith("LDGSTS"):
            m = re.search(r"\]\[R(\d+)\.64\]", t)
            if not m:
                continue
            address = {int(m.group(1)), int(m.group(1)) + 1}
            for d in range(1, n):
                u = loop[(i + d) % n]
                if address & written(u):
                    war.append((d, opcode(u)))
                    break
    print(name)
    print(f"  mix        {n} instructions: " +
          ", ".join(f"{k} {v}" for k, v in mix.most_common(8)))
    if reads:
        print("  ffma reads " + ", ".join(f"{k} register{'s' if k != 1 else ''}: {v}"
                                          for k, v in sorted(reads.items())) +
              f"; two of one bank: {one_bank}; reads in all: "
              f"{sum(k * v for k, v in reads.items())}")
    if lds_use:
        print("  lds->use   min %s, quartile %s, median %s" % quartiles(lds_use))
    if war:
        print("  copy war   " + ", ".join(f"{d} ({op})" for d, op in sorted(war)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("object")
    ap.add_argument("--kernel", default=".", help="regular expression on the mangled name")
    ap.add_argument("--cuobjdump")
    args = ap.parse_args()
    sass = subprocess.run([find_cuobjdump(args.cuobjdump), "-sass", args.object],
                          capture_output=True, text=True, check=True).stdout
    found = 0
    for name, body in kernels(sass):
        if not re.search(args.kernel, name):
            continue
        loop = main_loop(body)
        if loop:
            report(name, loop)
            found += 1
    if not found:
        sys.exit("sass_loop.py: no kernel matched with a main loop of 256 or more FFMA/MMA")


if __name__ == "__main__":
    main()
