#!/usr/bin/env python3
"""The front door as it is: the README's examples and commands, and the docs' references.

    python3 tests/readme_examples.py
        exit 0 when the text agrees with the tree, 1 (saying what) when not:
        - the README's C and Python examples are examples/basic.c and examples/basic.py as
          they are, and it gives the C example's compile commands (build tree, install);
        - every relative link in README.md and docs/*.md names a file that exists, from the
          page's own folder;
        - every source file docs/design.md names (foo.c, foo.cuh, ...) exists in the tree;
        - no page cites a document outside the repository by an absolute path;
        - no page states a count of tests (it goes stale with the next test);
        - a rung's registry summary (.summary in src/cuda/kernels/*.cu) states no stage count
          its file's header does not give ("3-stage" needs "3 stages", "stages 3" or
          "STAGES = 3" in the header).

    python3 tests/readme_examples.py --build-tree BUILD
        runs the README's build-tree compile command of the C example, as it is, from a
        scratch folder laid out like the repository with build/ being BUILD, then the program:
        58 64 / 139 154, exit 0.
    python3 tests/readme_examples.py --install BUILD
        installs BUILD into a scratch prefix (cmake --install) and runs the README's
        pkg-config lines there, with the README's prefix= line pointing at it.
    python3 tests/readme_examples.py --without-cuda-runtime BUILD
        what a machine without the CUDA toolkit's libraries sees: libtilegemm.so needs no
        CUDA library (readelf -d), and the README's C example, compiled with the README's
        command, runs on the CPU backend through the dynamic loader with the toolkit's
        libraries hidden (no ld.so.cache, no RUNPATH of libtilegemm, LD_LIBRARY_PATH without
        CUDA folders), loading no CUDA library.
    python3 tests/readme_examples.py --python-without-cuda-runtime BUILD
        the same for `import tilegemm` and a small sgemm (needs NumPy).
    python3 tests/readme_examples.py --run-sh-estimate
        scripts/run.sh says how long its build will take before it starts it, and on 2 cores
        the range it gives for the portable list holds the measured 8m19s (f2b15c9).

Exit 77 (CTest's skip code) where a tool the check needs (cc, readelf, pkg-config, the ELF
loader, NumPy) is missing.
"""
import os
import re
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
SKIP = 77
EXPECTED = "58 64\n139 154\n"
# The README's sh blocks holding the C example's compile commands start with these comments.
BUILD_TREE_MARK = "# the C example against the build tree"
INSTALL_MARK = "# the C example against an install"


def sh_block(mark):
    """The lines of the README's ```sh block whose first line is `mark`, or None."""
    for block in re.findall(r"```sh\n(.*?)```", README, re.S):
        if block.startswith(mark):
            return [line for line in block.splitlines()[1:] if line.strip()]
    return None


# --- The text checks ---------------------------------------------------------------------------
def check_examples(fail):
    for lang, path in (("c", "examples/basic.c"), ("python", "examples/basic.py")):
        blocks = re.findall(rf"```{lang}\n(.*?)```", README, re.S)
        if not blocks or blocks[0] != (ROOT / path).read_text(encoding="utf-8"):
            fail(f"the README's first {lang} block is not {path} as it is")
    for mark in (BUILD_TREE_MARK, INSTALL_MARK):
        if not sh_block(mark):
            fail(f"the README has no ```sh block starting `{mark}` (the C example's compile "
                 "commands, which CTest runs)")


def pages():
    return [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))


def check_links(fail):
    for page in pages():
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue  # a URL, or an anchor on the same page
            path = target.split("#")[0]
            if not (page.parent / path).exists():
                fail(f"{page.relative_to(ROOT)} links {target}, but {page.parent.relative_to(ROOT)}"
                     f"/{path} does not exist (links are relative to the page's folder)")


def check_design_files(fail):
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    names = set(re.findall(r"\b[\w.-]+\.(?:cuh|cu|c|h|py|sh|cmake|def|tsv)\b", text))
    # Tracked files and those git would track (not ignored): a copy of the tree whose git
    # index is older than its files still counts the files it has.
    tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files", "--cached", "--others",
                              "--exclude-standard"], capture_output=True, text=True).stdout.split()
    if not tracked:  # not a git checkout: the files on disk
        tracked = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file()]
    basenames = {Path(p).name for p in tracked} | {p for p in tracked}
    for name in sorted(names):
        if name not in basenames and not any(p.endswith("/" + name) for p in tracked):
            fail(f"docs/design.md names {name}, which is not in the tree")


def check_outside_references(fail):
    for page in pages():
        text = page.read_text(encoding="utf-8")
        for path in re.findall(r"`(/[\w./-]+\.(?:md|txt|pdf|html))`", text):
            fail(f"{page.relative_to(ROOT)} cites {path}, a document outside the repository")


def check_test_counts(fail):
    for page in pages():
        if page.name == "results.md":
            continue
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            for m in re.finditer(r"\b\d+(?:/\d+)? tests\b", line):
                fail(f"{page.relative_to(ROOT)}:{n} states a count of tests ({m.group(0)}): it "
                     "goes stale with the next test; say what runs instead")


def check_rung_summaries(fail):
    for path in sorted((ROOT / "src" / "cuda" / "kernels").glob("k*.cu")):
        text = path.read_text(encoding="utf-8")
        header = re.match(r"\s*/\*(.*?)\*/", text, re.S)
        header = header.group(1) if header else ""
        for summary in re.findall(r"\.summary\s*=\s*((?:\"(?:[^\"\\]|\\.)*\"\s*)+)", text):
            summary = "".join(re.findall(r"\"((?:[^\"\\]|\\.)*)\"", summary))
            for stages in re.findall(r"(\d+)-stage", summary):
                if not re.search(rf"\b{stages} stages\b|\bstages\s+{stages}\b|"
                                 rf"\bSTAGES = {stages}\b", header):
                    fail(f"{path.relative_to(ROOT)}: a summary says {stages}-stage but the "
                         f"file's header gives no {stages} stages")


def text_checks():
    failed = []
    for check in (check_examples, check_links, check_design_files, check_outside_references,
                  check_test_counts, check_rung_summaries):
        check(lambda message: failed.append(message))
    for message in failed:
        print(f"readme_examples: {message}")
    print("readme_examples: " + ("FAILED" if failed else
                                 "the README's examples and commands, and the docs' references, "
                                 "agree with the tree"))
    return 1 if failed else 0


# --- Running the README's commands ------------------------------------------------------------
def need(tool):
    path = shutil.which(tool)
    if not path:
        print(f"SKIP: {tool} not found")
        sys.exit(SKIP)
    return path


def scratch_repo(build):
    """A scratch folder laid out as the repository root for the README's commands: include/
    and examples/ of the source, build/ being `build`."""
    where = Path(tempfile.mkdtemp(prefix="tilegemm-readme-"))
    for name in ("include", "examples"):
        (where / name).symlink_to(ROOT / name)
    (where / "build").symlink_to(Path(build).resolve())
    return where


def run_lines(lines, cwd, env=None):
    """The README's lines as one sh script, echoed, stopping at the first failure."""
    script = "set -e\n" + "\n".join(lines) + "\n"
    print("+ " + "\n+ ".join(lines), flush=True)
    return subprocess.run(["sh", "-c", script], cwd=cwd, env=env, capture_output=True, text=True)


def expect_output(result, what):
    sys.stderr.write(result.stderr)
    if result.returncode != 0 or result.stdout != EXPECTED:
        print(f"readme_examples: {what}: exit {result.returncode}, printed {result.stdout!r}, "
              f"not {EXPECTED!r}")
        return 1
    print(f"readme_examples: {what}: printed 58 64 / 139 154")
    return 0


def compile_build_tree(build):
    """Compiles the README's C example with its build-tree command in a scratch copy of the
    layout; returns (folder, the result of running the README's lines)."""
    need("cc")
    lines = sh_block(BUILD_TREE_MARK)
    if not lines:
        print(f"readme_examples: the README has no block starting `{BUILD_TREE_MARK}`")
        sys.exit(1)
    where = scratch_repo(build)
    return where, run_lines(lines, where)


def build_tree(build):
    where, result = compile_build_tree(build)
    status = expect_output(result, "the README's build-tree command")
    shutil.rmtree(where)
    return status


def install(build):
    need("cc")
    need("pkg-config")
    lines = sh_block(INSTALL_MARK)
    if not lines or not lines[0].startswith("prefix="):
        print(f"readme_examples: the README's block `{INSTALL_MARK}` does not start with prefix=")
        return 1
    where = scratch_repo(build)
    prefix = where / "prefix"
    subprocess.run([os.environ.get("CMAKE", "cmake"), "--install", str(Path(build).resolve()), "--prefix", str(prefix)],
                   check=True, stdout=subprocess.DEVNULL)
    env = dict(os.environ)
    env.pop("PKG_CONFIG_PATH", None)
    result = run_lines([f"prefix={shlex.quote(str(prefix))}"] + lines[1:], where, env)
    status = expect_output(result, "the README's install (pkg-config) commands")
    shutil.rmtree(where)
    return status


def elf_interpreter(path):
    """The dynamic loader a 64-bit ELF executable names (PT_INTERP), or None."""
    with open(path, "rb") as f:
        head = f.read(64)
        if head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
            return None
        phoff, = struct.unpack_from("<Q", head, 32)
        phentsize, phnum = struct.unpack_from("<HH", head, 54)
        for i in range(phnum):
            f.seek(phoff + i * phentsize)
            ptype, _, offset, _, _, filesz = struct.unpack("<IIQQQQ", f.read(40))
            if ptype == 3:  # PT_INTERP
                f.seek(offset)
                return f.read(filesz).rstrip(b"\0").decode()
    return None


def cuda_needed(library):
    """The CUDA libraries `library` names as NEEDED (readelf -d)."""
    out = subprocess.run([need("readelf"), "-d", str(library)], capture_output=True, text=True,
                         check=True).stdout
    return [name for name in re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)
            if re.match(r"lib(cudart|cublas|cublasLt|cuda|nvrtc|nvJitLink)\b", name)]


CUDA_MAPPED = re.compile(r"lib(cudart|cublas|cublasLt|nvrtc|nvJitLink)[^/\s]*\.so")


def hidden_loader(program, library):
    """The argv prefix that runs `program` with the CUDA toolkit's libraries hidden: the loader
    itself, told to ignore ld.so.cache and libtilegemm's RUNPATH, with LD_LIBRARY_PATH's folders
    less those of CUDA; None without a loader that takes those options."""
    loader = elf_interpreter(program)
    if not loader or not os.path.exists(loader):
        return None
    probe = subprocess.run([loader, "--help"], capture_output=True, text=True)
    if "--inhibit-cache" not in probe.stdout or "--inhibit-rpath" not in probe.stdout:
        return None
    folders = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":")
               if d and "cuda" not in d.lower()]
    names = {Path(library).name, Path(library).resolve().name}
    return [loader, "--inhibit-cache", "--library-path", ":".join(folders),
            "--inhibit-rpath", ":".join(sorted(names))]


def hidden_env():
    env = dict(os.environ)
    env.pop("LD_LIBRARY_PATH", None)
    env.pop("LD_PRELOAD", None)
    return env


def without_cuda_runtime(build):
    library = Path(build).resolve() / "libtilegemm.so"
    status = 0
    needed = cuda_needed(library)
    if needed:
        print(f"readme_examples: {library} needs {', '.join(needed)} (readelf -d): a machine "
              "without the CUDA toolkit cannot load it")
        status = 1
    else:
        print(f"readme_examples: {library.name} needs no CUDA library (readelf -d)")
    where, result = compile_build_tree(build)
    if result.returncode != 0:
        sys.stderr.write(result.stderr)
        print("readme_examples: the README's build-tree command failed")
        return 1
    program = where / "basic"
    prefix = hidden_loader(program, library)
    if prefix is None:
        print("SKIP: no dynamic loader here that hides ld.so.cache and RUNPATH")
        return SKIP if status == 0 else status
    env = hidden_env()
    listing = subprocess.run(prefix + ["--list", str(program)], capture_output=True, text=True,
                             env=env, cwd=where)
    loaded = CUDA_MAPPED.findall(listing.stdout + listing.stderr)
    if "not found" in listing.stdout or loaded:
        print("readme_examples: with the CUDA libraries hidden the C example's libraries are:\n"
              + listing.stdout + listing.stderr)
        status = 1
    result = subprocess.run(prefix + [str(program)], capture_output=True, text=True, env=env,
                            cwd=where)
    status |= expect_output(result, "the README's C example with the CUDA libraries hidden")
    shutil.rmtree(where)
    return status


PY_CHECK = """
import numpy as np, re, tilegemm
a, b = np.arange(6, dtype=np.float32).reshape(2, 3), np.ones((3, 2), np.float32)
c = tilegemm.sgemm(a, b)
assert (c == np.array([[3, 3], [12, 12]], np.float32)).all(), c
maps = open("/proc/self/maps").read()
loaded = sorted(set(m.group(0) for m in re.finditer(r"lib(cudart|cublas|cublasLt)[^/\\s]*", maps)))
assert not loaded, f"CUDA libraries loaded: {loaded}"
print("import tilegemm and sgemm on the CPU backend, cuda backend available:",
      tilegemm.backend_available("cuda"))
"""


def python_without_cuda_runtime(build):
    library = Path(build).resolve() / "libtilegemm.so"
    python = Path(sys.executable)  # as it is: a venv's python finds its packages by its own path
    if subprocess.run([str(python), "-c", "import numpy"], capture_output=True).returncode:
        print(f"SKIP: NumPy not found for {python}")
        return SKIP
    prefix = hidden_loader(python, library)
    if prefix is None:
        print("SKIP: no dynamic loader here that hides ld.so.cache and RUNPATH")
        return SKIP
    env = hidden_env()
    env.update(PYTHONPATH=str(ROOT / "python"), TILEGEMM_LIBRARY=str(library),
               PYTHONDONTWRITEBYTECODE="1")
    result = subprocess.run(prefix + [str(python), "-c", PY_CHECK], capture_output=True,
                            text=True, env=env)
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    if result.returncode != 0:
        print("readme_examples: `import tilegemm` and a small sgemm failed with the CUDA "
              "libraries hidden")
        return 1
    return 0


def duration_seconds(text):
    m = re.fullmatch(r"(?:(\d+)m(\d+)s|(\d+) s)", text)
    return int(m.group(1)) * 60 + int(m.group(2)) if m.group(1) else int(m.group(3))


def run_sh_estimate():
    run_sh = (ROOT / "scripts" / "run.sh").read_text(encoding="utf-8")
    estimate, build = run_sh.find("\nbuild_estimate\n"), run_sh.find("\nscripts/build.sh")
    if estimate < 0 or build < 0 or estimate > build:
        print("readme_examples: scripts/run.sh does not say how long the build takes before "
              "it runs scripts/build.sh (build_estimate)")
        return 1
    functions = "\n".join(re.findall(r"(?ms)^(?:cuda_arch_count|duration|build_estimate)\(\).*?^}$|"
                                     r"^duration\(\).*$", run_sh))
    status = 0
    # A fresh 2-core machine with nvcc and no GPU, and the same with one architecture or none.
    for arch, want in (("all", "the portable list"), ("90a", "1 GPU architecture"),
                       ("-DTG_WITH_CUDA=OFF", "CPU library alone")):
        with tempfile.TemporaryDirectory() as build:
            if arch.startswith("-D"):
                Path(build, "CMakeCache.txt").write_text("TG_WITH_CUDA:BOOL=OFF\n")
                arch = ""
            script = (f"nproc() {{ echo 2; }}\nbuild={shlex.quote(build)}\ncli=$build/tilegemm\n"
                      f"export TG_CUDA_ARCH={shlex.quote(arch)} JOBS=2 CUDACXX=nvcc\n"
                      f"{functions}\nbuild_estimate\n")
            if not arch:
                script = script.replace("export TG_CUDA_ARCH= ", "unset TG_CUDA_ARCH; export ")
            out = subprocess.run(["bash", "-c", script], capture_output=True, text=True).stdout
        print(out, end="")
        m = re.search(r"expect (\S+(?: s)?) to (\S+(?: s)?) on 2 cores", out)
        if want not in out or not m:
            print(f"readme_examples: run.sh's estimate for TG_CUDA_ARCH={arch or '(CPU only)'} "
                  f"does not name {want!r} and a range on 2 cores")
            status = 1
        elif want == "the portable list" and not (duration_seconds(m.group(1)) <= 499 <=
                                                  duration_seconds(m.group(2))):
            print("readme_examples: run.sh's range for the portable list on 2 cores misses the "
                  "measured 8m19s (f2b15c9)")
            status = 1
    return status


def main(argv):
    modes = {"--build-tree": build_tree, "--install": install,
             "--without-cuda-runtime": without_cuda_runtime,
             "--python-without-cuda-runtime": python_without_cuda_runtime}
    if not argv:
        return text_checks()
    if argv == ["--run-sh-estimate"]:
        return run_sh_estimate()
    if len(argv) == 2 and argv[0] in modes:
        return modes[argv[0]](argv[1])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
