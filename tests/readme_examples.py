#!/usr/bin/env python3
"""The README's C and Python examples are examples/basic.c and examples/basic.py, as they are.

    python3 tests/readme_examples.py      exit 0 when they agree, 1 (saying which) when not
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
readme = (ROOT / "README.md").read_text(encoding="utf-8")
failed = 0
for lang, path in (("c", "examples/basic.c"), ("python", "examples/basic.py")):
    blocks = re.findall(rf"```{lang}\n(.*?)```", readme, re.S)
    if not blocks or blocks[0] != (ROOT / path).read_text(encoding="utf-8"):
        print(f"readme_examples: the README's first {lang} block is not {path} as it is")
        failed = 1
print("readme_examples: " + ("FAILED" if failed else "the README shows both examples as they are"))
sys.exit(failed)
