"""Speed of the semantic pass (`kernlint check --semantic`) on SGLang JIT trees.

Usage:
    python bench/semantic.py [--tree DIR]... [--runs N] [--compare] [--stored]

For each tree (default: the JIT trees of the ecosystem checkouts, when present), times

    kernlint check --semantic --no-cache --select CU004,CU005 --output-format json .

on the whole tree and on its first C++/CUDA file alone, and prints the total, the time per
file after the first ((whole tree - first file) / (files - 1)) and the CPU time (user + system
of kernlint and its workers, from wait4), wall and CPU, median of --runs (default 1: a run
without precompiled headers takes minutes).

--compare   also times the pass without precompiled headers (KERNLINT_SEMANTIC_PCH=0) and
            checks that the findings (JSON) and the stderr notes are byte-identical.
--stored    also times a run whose PCHs are stored already (a cache directory filled by a
            first run, its per-file results removed): what a later run pays per re-checked file.

Target (issue 22): <= 0.3 s per file after the first on the SGLang JIT tree.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
KERNLINT = [sys.executable, "-m", "kernlint"]
ARGS = ["check", "--semantic", "--select", "CU004,CU005", "--output-format", "json"]
TARGET_PER_FILE_S = 0.3
DEFAULT_TREES = (
    "/work/eco/sglang-0.5.23/sglang/kernels/jit",
    "/work/eco/sglang-snapshot/sglang/python/sglang/kernels/jit",
)


def cpp_files(tree: str) -> list[str]:
    """The C++/CUDA files `kernlint check --semantic` checks in `tree`, in its order."""
    sys.path.insert(0, ROOT)
    from kernlint.config import ConfigResolver, Overrides
    from kernlint.discovery import discover
    from kernlint.registry import load_registry

    cwd = os.getcwd()
    os.chdir(tree)
    try:
        overrides = Overrides(select=["CU004", "CU005"], semantic=True)
        resolver = ConfigResolver(load_registry(), overrides, None)
        found = discover(["."], resolver, warn=lambda *a, **k: None)
        return [c.display for c in found if c.language == "cpp"]
    finally:
        os.chdir(cwd)


def timed(cmd, cwd, env=None):
    """(wall s, CPU s, stdout, stderr) of one run; CPU: user + system of the command and of
    the workers it waited for."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return wall, usage.ru_utime + usage.ru_stime, out.read(), err.read()


def median_runs(cmd, cwd, runs, env=None, before=None):
    samples = []
    last = None
    for _ in range(runs):
        if before is not None:
            before()
        wall, cpu, out, err = timed(cmd, cwd, env)
        samples.append((wall, cpu))
        last = (out, err)
    return (
        statistics.median(s[0] for s in samples),
        statistics.median(s[1] for s in samples),
        last,
    )


def measure(tree, files, runs, env, extra=(), before=None):
    """(whole tree, first file alone): each (wall, CPU, (stdout, stderr))."""
    whole = median_runs([*KERNLINT, *ARGS, *extra, "."], tree, runs, env, before)
    one = median_runs([*KERNLINT, *ARGS, *extra, files[0]], tree, runs, env, before)
    return whole, one


def row(name, mode, n, whole, one) -> str:
    per_wall = (whole[0] - one[0]) / max(1, n - 1)
    per_cpu = (whole[1] - one[1]) / max(1, n - 1)
    return (
        f"| {name} | {mode} | {n} | {whole[0]:.1f} | {whole[1]:.1f} | {one[0]:.2f} | "
        f"{per_wall:.3f} | {per_cpu:.3f} |"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", action="append", help="a JIT tree (repeatable)")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--compare", action="store_true", help="also without precompiled headers")
    ap.add_argument("--stored", action="store_true", help="also with PCHs stored by a run")
    opts = ap.parse_args()
    trees = opts.tree or [t for t in DEFAULT_TREES if os.path.isdir(t)]
    if not trees:
        print("no tree: pass --tree DIR", file=sys.stderr)
        return 2
    on = {k: v for k, v in os.environ.items() if k != "KERNLINT_SEMANTIC_PCH"}
    off = {**on, "KERNLINT_SEMANTIC_PCH": "0"}
    print(
        f"kernlint semantic pass, {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, "
        f"`{' '.join(['kernlint', *ARGS, '--no-cache'])} .`, median of {opts.runs}"
    )
    print()
    print(
        "| tree | mode | files | total s | CPU s | first file alone s | s/file after the "
        "first | CPU s/file after the first |"
    )
    print("|---|---|---|---|---|---|---|---|")
    verdicts = []
    for tree in trees:
        tree = os.path.abspath(tree)
        files = cpp_files(tree)
        if len(files) < 2:
            print(f"{tree}: fewer than 2 C++/CUDA files", file=sys.stderr)
            continue
        name = os.path.relpath(tree, os.path.commonpath(trees)) if len(trees) > 1 else tree
        whole, one = measure(tree, files, opts.runs, on, ["--no-cache"])
        print(row(name, "PCH", len(files), whole, one), flush=True)
        per_file = (whole[0] - one[0]) / (len(files) - 1)
        verdicts.append((name, per_file))
        if opts.stored:
            cache = tempfile.mkdtemp(prefix="kernlint-bench-cache-")
            try:
                # A first run stores the PCHs; each timed run starts without per-file results.
                timed([*KERNLINT, *ARGS, "--cache-dir", cache, "."], tree, on)

                def forget_results(cache=cache):
                    for path in glob.glob(os.path.join(cache, "results-*.json")):
                        os.unlink(path)

                s_whole, s_one = measure(
                    tree, files, opts.runs, on, ["--cache-dir", cache], forget_results
                )
                print(row(name, "PCH stored", len(files), s_whole, s_one), flush=True)
            finally:
                shutil.rmtree(cache, ignore_errors=True)
        if opts.compare:
            p_whole, p_one = measure(tree, files, opts.runs, off, ["--no-cache"])
            print(row(name, "no PCH", len(files), p_whole, p_one), flush=True)
            same = whole[2] == p_whole[2]
            print(f"{name}: findings and notes identical with and without PCH: {same}", flush=True)
            if not same:
                verdicts.append((name, float("inf")))
    print()
    ok = True
    for name, per_file in verdicts:
        good = per_file <= TARGET_PER_FILE_S
        ok &= good
        print(
            f"{name}: {per_file:.3f} s/file after the first (target <= {TARGET_PER_FILE_S}): "
            f"{'met' if good else 'NOT met'}"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
