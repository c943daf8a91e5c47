"""Print how faithfully kernlint parses a tree of C++/CUDA sources.

Usage: python scripts/parse_report.py PATH... [--raw] [--top N] [--files] [--row NAME]

For every C/C++/CUDA file under the PATHs (all of them, whether or not a rule would read them):
parse it (after kernlint's offset-preserving normalization, unless --raw) and report the files
parsed, the files with any ERROR or MISSING node, the files where normalization resolved a
preprocessor conditional (kept one branch, blanked the others), and the top causes (the source
line where each file's first ERROR/MISSING nodes start). --files lists the files with ERROR
nodes and the line of their first one; --row NAME prints the figures as a row of the table in
docs/parsing.md.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from kernlint.cpp.normalize import normalize  # noqa: E402
from kernlint.cpp.parser import error_nodes, parse  # noqa: E402
from kernlint.source import language_of  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--raw", action="store_true", help="parse without normalization")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--files", action="store_true", help="list the files with ERROR nodes")
    ap.add_argument("--row", metavar="NAME", help="print a markdown table row named NAME")
    args = ap.parse_args()
    files = []
    for root in args.paths:
        if not os.path.exists(root):
            print(f"parse_report: {root}: no such file or directory", file=sys.stderr)
            return 2
        if os.path.isfile(root):
            files.append(root)
            continue
        for d, _, names in os.walk(root):
            files += [os.path.join(d, n) for n in names if language_of(n) == "cpp"]
    files.sort()
    causes: collections.Counter = collections.Counter()
    bad: list[tuple[str, int]] = []
    resolved = 0
    t0 = time.perf_counter()
    for path in files:
        with open(path, "rb") as fh:
            data = fh.read()
        if args.raw:
            src = data
        else:
            norm = normalize(data)
            src = norm.data
            resolved += bool(norm.branches)
        errs = error_nodes(parse(src).root_node)
        if errs:
            bad.append((path, errs[0].start_point[0] + 1))
            lines = data.split(b"\n")
            for e in errs[:2]:
                text = lines[e.start_point[0]].decode("utf-8", "replace").strip()
                causes[text[:80]] += 1
    dt = time.perf_counter() - t0
    n = len(files)
    pct = 100.0 * len(bad) / n if n else 0.0
    mode = "raw" if args.raw else "normalized"
    if args.row:
        print(f"| {args.row} | {mode} | {n} | {len(bad)} | {pct:.1f}% |")
        return 0
    print(f"mode: {mode}")
    print(f"files parsed: {n}")
    print(f"files with ERROR nodes: {len(bad)} ({pct:.1f}%)")
    if not args.raw:
        print(f"files with a preprocessor conditional resolved: {resolved}")
    print(f"time: {dt:.2f} s")
    print("top causes (line where an ERROR/MISSING node starts, first two per file):")
    for text, count in causes.most_common(args.top):
        print(f"  {count:4d}  {text}")
    if args.files:
        print("files with ERROR nodes (line of the first):")
        for path, line in bad:
            print(f"  {path}:{line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
