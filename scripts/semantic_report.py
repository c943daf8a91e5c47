"""How the semantic pass (libclang) fares on a tree: files resolved without errors, the most
common problems, time per file.

    python scripts/semantic_report.py <tree> [--jobs N]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

EXTS = (".cuh", ".cu", ".h", ".hpp", ".cpp", ".cc")


def one(path: str):
    from kernlint.semantic import SemanticFile

    t = time.perf_counter()
    with open(path, "rb") as fh:
        data = fh.read()
    try:
        sem = SemanticFile(path, data)
        problems = sem.problems
    except Exception as exc:  # report, do not stop
        problems = [f"crash: {exc}"]
    return path, problems, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("tree")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--dump", help="write every unresolved file and its problems here (JSON)")
    args = ap.parse_args()
    files = sorted(
        os.path.join(d, n) for d, _, names in os.walk(args.tree) for n in names if n.endswith(EXTS)
    )
    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as pool:
        results = list(pool.map(one, files, chunksize=4))
    wall = time.perf_counter() - t0
    ok = [r for r in results if not r[1]]
    first = collections.Counter(r[1][0][:90] for r in results if r[1])
    times = sorted(r[2] for r in results)
    print(
        f"{len(ok)} of {len(files)} files resolved without errors ({100 * len(ok) / len(files):.0f}%)"
    )
    print(
        f"wall {wall:.1f} s with {args.jobs} processes; per file median {times[len(times) // 2]:.2f} s, "
        f"max {times[-1]:.2f} s"
    )
    print("most common first error:")
    for msg, n in first.most_common(12):
        print(f"  {n:4d}  {msg}")
    sys.stdout.flush()
    if args.dump:
        with open(args.dump, "w") as fh:
            json.dump({r[0]: r[1] for r in results if r[1]}, fh, indent=1)


if __name__ == "__main__":
    main()
