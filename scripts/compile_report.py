"""What `kernlint check --compile` measures on a tree: builds per instantiation source, the
kernels placed, their registers per architecture, how many exceed the budget, and the time.

    python scripts/compile_report.py TREE [--arch sm_90] [--cache-dir DIR]

Prints one Markdown table (the rows docs/real-world.md keeps for the SGLang snapshot). With
no `--cache-dir`, nothing is cached: every build runs.
"""

from __future__ import annotations

import argparse
import os
import sys
import time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree")
    ap.add_argument("--arch", action="append", help="architectures (default: the config's)")
    ap.add_argument("--cache-dir")
    ap.add_argument("--config", help="a config file for every file (compile-instantiate entries)")
    ap.add_argument(
        "--verdicts", help="reviewed findings to check (tests/ecosystem/compile-verdicts.toml)"
    )
    ap.add_argument("--budget", type=int, default=64, help="registers to count kernels over")
    args = ap.parse_args(argv)

    import kernlint.compile as kc
    from kernlint.config import ConfigResolver, Overrides
    from kernlint.discovery import discover
    from kernlint.registry import load_registry

    resolver = ConfigResolver(load_registry(), Overrides(compile=True), args.config)
    candidates = list(discover([args.tree], resolver, warn=lambda m: None))
    if args.arch:
        for s in {id(x): x for x in (resolver.for_file(c.abspath) for c in candidates)}.values():
            s.compile_archs = list(args.arch)
    notes: list[str] = []
    start = time.perf_counter()
    kc.prepare(candidates, resolver, cache_dir=args.cache_dir, warn=notes.append)
    wall = time.perf_counter() - start

    by_source: dict[str, set] = {}
    regs: dict[str, list[int]] = {}
    spills: set = set()
    for path, placed_list in kc._RESULTS.items():
        for placed in placed_list:
            for u in placed.usages:
                by_source.setdefault(u.source, set()).add((path, placed.start))
                regs.setdefault(u.arch, []).append(u.registers)
                if u.spill_stores or u.spill_loads or u.local_bytes:
                    spills.add((path, placed.start, u.arch))
    stats = kc.STATS
    builds = stats.get("builds", {})
    failed = stats.get("failed", {})
    total = sum(builds.values()) + stats.get("triton_measured", 0)  # (Triton: one per build)
    print(f"tree: {os.path.abspath(args.tree)} ({len(candidates)} files)")
    print(
        f"wall: {wall:.1f} s for {total} builds, CUDA and Triton "
        f"({wall / max(total, 1):.2f} s per build)"
    )
    print()
    print("| source | builds | failed | kernels placed |")
    print("|---|---|---|---|")
    for k in ("config", "load_jit", "plain"):
        print(f"| {k} | {builds.get(k, 0)} | {failed.get(k, 0)} | {len(by_source.get(k, ()))} |")
    for k in sorted(set(by_source) - {"config", "load_jit", "plain"}):
        print(f"| {k} | - | - | {len(by_source[k])} |")
    print()
    print(f"| arch | measurements | min | median | max | over {args.budget} | with local memory |")
    print("|---|---|---|---|---|---|---|")
    for arch, values in sorted(regs.items()):
        values.sort()
        over = sum(v > args.budget for v in values)
        local = sum(1 for s in spills if s[2] == arch)
        mid = values[len(values) // 2]
        print(f"| {arch} | {len(values)} | {values[0]} | {mid} | {values[-1]} | {over} | {local} |")
    kernels_over = sum(
        1
        for placed_list in kc._RESULTS.values()
        for p in placed_list
        if p.budget is not None and any(u.registers > p.budget for u in p.usages)
    )
    unjudged = sum(1 for v in kc._RESULTS.values() for p in v if p.budget is None)
    kernels_local = len({(s[0], s[1]) for s in spills})
    kernels = sum(len(v) for v in kc._RESULTS.values())
    print()
    print(
        f"kernels placed: {kernels}; over their budget: {kernels_over}; "
        f"with spills or local memory: {kernels_local}; launch bounds not readable (not judged): "
        f"{unjudged}"
    )
    print(
        f"templates not instantiated: {stats.get('templates_not_instantiated', 0)}; "
        f"load_jit calls with run-time template arguments: {stats.get('unresolved_load_jit', 0)}; "
        f"Triton builds measured: {stats.get('triton_measured', 0)}, Triton kernels without a "
        f"signature: {stats.get('triton_skipped', 0)}"
    )
    for note in notes:
        print("note:", note[:300], file=sys.stderr)
    if args.verdicts:
        return _check_verdicts(args.verdicts, kc._RESULTS)
    return 0


def _findings(results) -> set[tuple[str, int, str]]:
    """(path relative to the current directory, line, rule code) of what the rules report."""
    out = set()
    for path, placed_list in results.items():
        with open(path, "rb") as fh:
            data = fh.read()
        rel = os.path.relpath(path)
        for p in placed_list:
            line = data.count(b"\n", 0, p.start) + 1
            if p.budget is not None and any(u.registers > p.budget for u in p.usages):
                out.add((rel, line, "RB001"))
            if any(u.spill_stores or u.spill_loads or u.local_bytes for u in p.usages):
                out.add((rel, line, "RB002"))
    return out


def _check_verdicts(path: str, results) -> int:
    from kernlint.config import _tomllib

    with open(path, "rb") as fh:
        verdicts = _tomllib().load(fh).get("verdict", [])
    found = _findings(results)
    bad = 0
    for v in verdicts:
        key = (v["path"], v["line"], v["rule"])
        if v["verdict"] and key not in found:
            print(f"violation: {key[0]}:{key[1]} {key[2]} is reviewed true but not reported")
            bad += 1
        elif not v["verdict"] and key in found:
            print(f"violation: {key[0]}:{key[1]} {key[2]} is reviewed false but still reported")
            bad += 1
    reviewed = {(v["path"], v["line"], v["rule"]) for v in verdicts}
    unreviewed = sorted(found - reviewed)
    true = sum(1 for v in verdicts if v["verdict"] and (v["path"], v["line"], v["rule"]) in found)
    print(
        f"verdicts: {len(verdicts)} ({true} true findings reported), {bad} violations, "
        f"{len(unreviewed)} findings without a verdict"
    )
    for key in unreviewed:
        print(f"unreviewed: {key[0]}:{key[1]} {key[2]}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
