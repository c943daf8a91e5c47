"""Growth on a real tree: kernlint's time and peak memory on 1x, 2x, 4x and 8x copies of it.

Usage:
    python bench/tree_growth.py --tree DIR [--runs N] [--sizes 1,2,4,8] [--select ...]
    python bench/tree_growth.py --tree DIR --quick      # 1x and 2x only
    python bench/tree_growth.py --tree DIR --keep OUT   # leave the generated trees in OUT

The tree of size k is a new directory, outside the repository (in the system's temporary
directory, or OUT), holding k copies of DIR, each under its own name (`copy_0`, `copy_1`, ...):
the same files, at other paths. Files are hard links to DIR's (the same bytes, nothing copied)
where the file system allows, copies otherwise (`--copy`: always copies). Each size is checked
cold (`kernlint check --no-cache .`, default rules unless `--select`), kernlint installed as
`pip install .` lays it out (bench/run.py), the sizes side by side in one rotation, one warm-up
each, `--runs` rounds (default 3).

The table gives, per size, the median wall time and CPU time (user + system, workers included),
the peak RSS (the largest process, worst round), and the ratio of each to the size before. Linear
work doubles per doubling of the tree; a time ratio above SUPERLINEAR is flagged, and so is a
peak RSS that grows by more than MEMORY_GROWTH per doubling (memory should stay flat: files are
linted one at a time, and what the run keeps per file is small). Exit status 1 when anything was
flagged.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import run as bench  # noqa: E402  (bench/run.py: the installed layout, timed runs)
from rotation import in_rotation  # noqa: E402

SUPERLINEAR = 2.4  # per doubling; linear is 2 (a little less: start-up does not double)
MEMORY_GROWTH = 1.25  # peak RSS per doubling
SOURCE_SUFFIXES = (".py", ".pyi", ".cu", ".cuh", ".h", ".hpp", ".hh", ".cpp", ".cc", ".cxx", ".c")


def _inside(path: str, root: str) -> bool:
    path, root = os.path.realpath(path), os.path.realpath(root)
    return path == root or path.startswith(root + os.sep)


def build(src: str, dest: str, copies: int, link: bool = True) -> tuple[int, int]:
    """`copies` copies of `src` under `dest` (copy_0, copy_1, ...); returns (source files,
    their bytes) of the whole tree. Symbolic links stay links."""

    def place(a: str, b: str) -> None:
        if link:
            try:
                os.link(a, b)
                return
            except OSError:
                pass  # (another file system, or links not allowed: a copy)
        shutil.copy2(a, b)

    os.makedirs(dest, exist_ok=True)
    for k in range(copies):
        shutil.copytree(src, os.path.join(dest, f"copy_{k}"), symlinks=True, copy_function=place)
    files = size = 0
    for d, _, names in os.walk(src):
        for n in names:
            p = os.path.join(d, n)
            if n.endswith(SOURCE_SUFFIXES) and not os.path.islink(p):
                files += 1
                size += os.path.getsize(p)
    return files * copies, size * copies


def per_doubling(now, before, doublings: float) -> float | None:
    """The growth ratio `now / before` of a size `doublings` doublings larger, per doubling."""
    if now is None or not before:
        return None
    return (now / before) ** (1 / doublings)


def measure(cmds: dict, cwds: dict, runs: int) -> dict:
    """Like bench/run.py's side_by_side, each command in its own directory."""
    for key, cmd in cmds.items():  # warm-up (page cache)
        bench.timed(cmd, cwds[key])
    samples: dict = {k: [] for k in cmds}
    for key in in_rotation(cmds, runs):
        samples[key].append(bench.timed(cmds[key], cwds[key]))
    return {k: bench.Timing.of(v) for k, v in samples.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", required=True, help="the tree to copy (e.g. an SGLang checkout)")
    ap.add_argument("--runs", type=int, default=3, help="rounds (default 3)")
    ap.add_argument("--sizes", default="1,2,4,8", help="copies per tree (default 1,2,4,8)")
    ap.add_argument("--quick", action="store_true", help="sizes 1 and 2 only")
    ap.add_argument("--select", help="rules (default: the default rules)")
    ap.add_argument("--preview", action="store_true")
    ap.add_argument("--copy", action="store_true", help="copy files instead of hard links")
    ap.add_argument("--keep", metavar="OUT", help="build the trees in OUT and leave them there")
    ap.add_argument(
        "--dev", action="store_true", help="time the development interpreter, not an install"
    )
    args = ap.parse_args(argv)

    if not os.path.isdir(args.tree):
        print(f"error: --tree {args.tree}: not a directory", file=sys.stderr)
        return 2
    try:
        sizes = [1, 2] if args.quick else [int(x) for x in args.sizes.split(",")]
        if not sizes or min(sizes) < 1:
            raise ValueError
    except ValueError:
        print(f"error: --sizes {args.sizes}: positive integers, comma-separated", file=sys.stderr)
        return 2
    sizes = sorted(set(sizes))
    base = args.keep or tempfile.mkdtemp(prefix="kernlint-tree-growth-")
    if _inside(base, ROOT) or _inside(base, args.tree):
        msg = f"error: --keep {base}: inside the repository or the tree (build outside both)"
        print(msg, file=sys.stderr)
        return 2

    workdir = tempfile.mkdtemp(prefix="kernlint-growth-venv-")
    try:
        if args.dev:
            kl, how = bench.KERNLINT, "development interpreter"
        else:
            kl, how = bench.installed_kernlint(workdir)
        rules = ["--select", args.select] if args.select else []
        if args.preview:
            rules.append("--preview")
        cmd = [*kl, "check", ".", "--no-cache", "-q", "--exit-zero", *rules]
        t0 = time.perf_counter()
        trees, counts = {}, {}
        for k in sizes:
            trees[k] = os.path.join(base, f"{k}x")
            if os.path.isdir(trees[k]):
                shutil.rmtree(trees[k])
            counts[k] = build(args.tree, trees[k], k, link=not args.copy)
        built = time.perf_counter() - t0
        got = measure({k: cmd for k in sizes}, trees, max(1, args.runs))

        print(
            f"kernlint tree growth, {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, "
            f"median of {max(1, args.runs)} round(s) after a warm-up; kernlint {how}; "
            f"{bench.tool_version(kl)} ({bench.checkout()})"
        )
        print(f"tree: {os.path.abspath(args.tree)}; command: {' '.join(cmd[len(kl) :])}")
        print(f"(trees built in {built:.1f} s under {base}, {'copies' if args.copy else 'links'})")
        head = (
            f"{'size':>5} {'source files':>13} {'MB':>7} {'wall s':>8} {'ratio':>6} "
            f"{'CPU s':>8} {'ratio':>6} {'RSS MB':>7} {'ratio':>6}"
        )
        print(head)
        flags = []
        prev = None
        for k in sizes:
            t = got[k]
            files, size = counts[k]
            cols = [f"{str(k) + 'x':>5}", f"{files:>13,}", f"{size / 1e6:>7.1f}", f"{t:>8.2f}"]
            if prev is None:
                ratios = ["", "", ""]
                wall_r = cpu_r = rss_r = None
            else:
                # Each ratio is per doubling of the tree (the sizes need not double).
                doublings = math.log2(k / prev[0])
                wall_r = per_doubling(t, prev[1], doublings)
                cpu_r = per_doubling(t.cpu, prev[1].cpu, doublings)
                rss_r = per_doubling(t.rss_mb, prev[1].rss_mb, doublings)
                ratios = [f"{r:.2f}" if r is not None else "" for r in (wall_r, cpu_r, rss_r)]
                # (CPU time too: wall time alone moves with the other load on the machine)
                if wall_r > SUPERLINEAR and (cpu_r is None or cpu_r > SUPERLINEAR):
                    flags.append(f"{k}x: time grew {wall_r:.2f}x per doubling (> {SUPERLINEAR})")
                if rss_r is not None and rss_r > MEMORY_GROWTH:
                    flags.append(
                        f"{k}x: peak RSS grew {rss_r:.2f}x per doubling (> {MEMORY_GROWTH})"
                    )
            cpu = f"{t.cpu:>8.2f}" if t.cpu is not None else f"{'-':>8}"
            rss = f"{t.rss_mb:>7.0f}" if t.rss_mb is not None else f"{'-':>7}"
            print(
                f"{cols[0]} {cols[1]} {cols[2]} {cols[3]} {ratios[0]:>6} {cpu} {ratios[1]:>6} "
                f"{rss} {ratios[2]:>6}"
            )
            prev = (k, t)
        if len(sizes) > 1:
            per_copy = ", ".join(f"{k}x {got[k] / k:.2f}" for k in sizes)
            print(f"wall seconds per copy: {per_copy}")
        for f in flags:
            print(f"FLAGGED: {f}")
        if not flags:
            print("linear time and flat memory: nothing flagged")
        return 1 if flags else 0
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
