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

Exit 77 (CTest's skip code) where a tool the check needs (cc, pkg-config) is missing.
"""
import os
import re
import shlex
import shutil
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
    tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files"], capture_output=True,
                             text=True).stdout.split()
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


def main(argv):
    modes = {"--build-tree": build_tree, "--install": install}
    if not argv:
        return text_checks()
    if len(argv) == 2 and argv[0] in modes:
        return modes[argv[0]](argv[1])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
