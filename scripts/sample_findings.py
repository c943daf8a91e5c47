"""Print an evenly spaced sample of one rule's findings on a tree, with context, for review.

python scripts/sample_findings.py <tree> <CODE> [N] [--context K]
"""

from __future__ import annotations

import argparse
import os

from kernlint.runner import lint_paths


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("tree")
    ap.add_argument("code")
    ap.add_argument("n", type=int, nargs="?", default=20)
    ap.add_argument("--context", type=int, default=2)
    args = ap.parse_args()
    results = lint_paths([args.tree], select=[args.code], preview=True, warn=lambda m: None)
    found = [d for r in results for d in r.diagnostics]
    files = len({d.path for d in found})
    print(f"{args.code}: {len(found)} findings in {files} files")
    if not found:
        return
    step = max(1, len(found) // args.n)
    for i, d in enumerate(found[::step][: args.n], start=1):
        rel = os.path.relpath(d.path, args.tree)
        print(f"\n#{i} {rel}:{d.line}:{d.column}: {d.message}")
        with open(d.path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().split("\n")
        lo, hi = max(0, d.line - 1 - args.context), min(len(lines), d.line + args.context)
        for k in range(lo, hi):
            mark = ">" if k == d.line - 1 else " "
            print(f"  {mark}{k + 1:5d} | {lines[k][:140]}")


if __name__ == "__main__":
    main()
