"""Print how faithfully kernlint parses a tree of C++/CUDA sources.

Usage: python scripts/parse_report.py PATH [--raw] [--top N]

For every C/C++/CUDA file under PATH: parse it (after kernlint's offset-preserving
normalization, unless --raw) and report files parsed, files with any ERROR node, and the top
causes (the source line where each file's first ERROR/MISSING nodes start).
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
    args = ap.parse_args()
    files = []
    for root in args.paths:
        for d, _, names in os.walk(root):
            files += [os.path.join(d, n) for n in names if language_of(n) == "cpp"]
    files.sort()
    causes: collections.Counter = collections.Counter()
    bad = []
    t0 = time.perf_counter()
    for path in files:
        with open(path, "rb") as fh:
            data = fh.read()
        src = data if args.raw else normalize(data).data
        errs = error_nodes(parse(src).root_node)
        if errs:
            bad.append(path)
            lines = src.split(b"\n")
            for e in errs[:2]:
                text = lines[e.start_point[0]].decode("utf-8", "replace").strip()
                causes[text[:80]] += 1
    dt = time.perf_counter() - t0
    n = len(files)
    pct = 100.0 * len(bad) / n if n else 0.0
    mode = "raw" if args.raw else "normalized"
    print(f"mode: {mode}")
    print(f"files parsed: {n}")
    print(f"files with ERROR nodes: {len(bad)} ({pct:.1f}%)")
    print(f"time: {dt:.2f} s")
    print("top causes (line where an ERROR/MISSING node starts, first two per file):")
    for text, count in causes.most_common(args.top):
        print(f"  {count:4d}  {text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
