#!/usr/bin/env python3
"""The front door as it is: the README's examples, and the docs' references.

    python3 tests/readme_examples.py
        exit 0 when the text agrees with the tree, 1 (saying what) when not:
        - the README's C and Python examples are examples/basic.c and examples/basic.py as
          they are;
        - every relative link in README.md and docs/*.md names a file that exists, from the
          page's own folder;
        - every source file docs/design.md names (foo.c, foo.cuh, ...) exists in the tree;
        - no page cites a document outside the repository by an absolute path;
        - no page states a count of tests (it goes stale with the next test);
        - a rung's registry summary (.summary in src/cuda/kernels/*.cu) states no stage count
          its file's header does not give ("3-stage" needs "3 stages", "stages 3" or
          "STAGES = 3" in the header).
"""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


# --- The text checks ---------------------------------------------------------------------------
def check_examples(fail):
    for lang, path in (("c", "examples/basic.c"), ("python", "examples/basic.py")):
        blocks = re.findall(rf"```{lang}\n(.*?)```", README, re.S)
        if not blocks or blocks[0] != (ROOT / path).read_text(encoding="utf-8"):
            fail(f"the README's first {lang} block is not {path} as it is")


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
                                 "the README's examples, and the docs' references, "
                                 "agree with the tree"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(text_checks())
