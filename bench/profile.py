"""Where a run's time goes: the table of docs/benchmarks.md "Where the time goes".

    python bench/profile.py --tree <SGLang snapshot>            # default rules
    python bench/profile.py --tree <dir> -- --select ALL --preview

Two measurements of `kernlint check --no-cache .` in DIR (the development interpreter):

1. One process, no pool (what each part costs, in CPU seconds): start-up and discovery, the
   cross-file facts, each rule's own check, the tree parses (counted apart from the rule
   that first asks for a tree), and the rest of the per-file work (reading, trigger search,
   settings, results).
2. The run as it is (a pool of one worker per core): when each phase starts and ends, wall
   clock, with the CPU of the parent and of the workers at each mark.

    python bench/profile.py --tree <dir> --groups [--runs N]

What each group of the default rules costs in a run as it is: the default rules, then the
same run without each group (`--ignore`), side by side with ruff and with a run that reads
every file and runs no rule on it (`--select KL001`: the floor of reading, trigger search
and start-up), median of N rounds (default 5) in rotation, as bench/run.py measures. On a
tree without a kernlint configuration of its own (none anywhere in it), also the default
rules with `aiter-import-policy = "lexical"` (no import index), given by `--config`. And the
default rules with every C/C++ rule reduced to the tree it asks for (`C/C++ parse only`: the
same files normalized and parsed, no rule work on them; the statistics line of such a run
counts the same parsed C/C++ files as the default run's): the floor that tree-sitter's parse
sets under the C/C++ side.
"""

from __future__ import annotations

import argparse
import functools
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _cpu() -> float:
    return time.process_time()


def _check_quietly(cli, args: list[str]) -> None:
    """`kernlint check --no-cache ARGS .` in this process, its report thrown away."""
    out = sys.stdout
    sys.stdout = open(os.devnull, "w")
    try:
        cli.main(["check", "--no-cache", *args, "."])
    finally:
        sys.stdout.close()
        sys.stdout = out


def _replace_checks(registry, replacement) -> None:
    """From now on, the registry `registry.load_registry` loads gives every rule with a
    `check` the check `replacement(rule)` returns (the rule's own where it returns None)."""
    load = registry.load_registry

    def load_replaced(*a, **k):
        reg = load(*a, **k)
        for rule in reg.rules:
            if rule.check is not None:
                check = replacement(rule)
                if check is not None:
                    object.__setattr__(rule, "check", check)
        return reg

    registry.load_registry = load_replaced


def one_process(args: list[str]) -> None:
    """In this process: the parts of one run without a pool."""
    sys.path.insert(0, ROOT)
    import kernlint.engine as engine
    import kernlint.registry as registry
    import kernlint.runner as runner

    runner._jobs = lambda: 1
    parts: dict[str, float] = {}
    nested: list[float] = []

    def add(key: str, seconds: float) -> None:
        parts[key] = parts.get(key, 0.0) + seconds

    def timed(mod, name, key, generator=False):
        real = getattr(mod, name)

        def wrapper(*a, **k):
            t = _cpu()
            try:
                return list(real(*a, **k)) if generator else real(*a, **k)
            finally:
                add(key, _cpu() - t)

        setattr(mod, name, wrapper)

    timed(runner, "discover", "start-up: discovery", generator=True)
    timed(runner, "_collect_project_facts", "cross-file facts (aiter index, FFI targets)")
    timed(registry, "load_registry", "start-up: rules imported")

    def timed_check(rule):
        def check(ctx, real=rule.check, code=rule.code):
            t = _cpu()
            nested.append(0.0)
            try:
                return real(ctx)
            finally:
                add(f"rule {code}", _cpu() - t - nested.pop())

        return check

    _replace_checks(registry, timed_check)
    tree = engine.Context.tree

    def parse(self):
        t = _cpu()
        try:
            return tree.func(self)
        finally:
            spent = _cpu() - t
            add(f"tree parse ({self.source.language})", spent)
            if nested:
                nested[-1] += spent

    prop = functools.cached_property(parse)
    prop.__set_name__(engine.Context, "tree")
    engine.Context.tree = prop
    import kernlint.cli as cli

    start = _cpu()
    _check_quietly(cli, args)
    total = _cpu() - start
    rest = total - sum(parts.values())
    print(f"one process, CPU seconds (total {total:.3f}):")
    for key, seconds in sorted(parts.items(), key=lambda kv: -kv[1]):
        print(f"  {seconds:7.3f}  {key}")
    print(f"  {rest:7.3f}  the rest: reading, trigger search, settings, results, report")


def pool_timeline(args: list[str]) -> None:
    """In this process: the run as it is, with the pool's phases marked."""
    sys.path.insert(0, ROOT)
    import kernlint.forkpool as forkpool
    import kernlint.runner as runner

    t0 = time.perf_counter()
    marks = []

    def mark(what: str) -> None:
        own = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        marks.append(
            (
                time.perf_counter() - t0,
                own.ru_utime + own.ru_stime,
                kids.ru_utime + kids.ru_stime,
                what,
            )
        )

    real_facts = runner._collect_project_facts

    def facts(*a, **k):
        mark("cross-file facts start")
        try:
            return real_facts(*a, **k)
        finally:
            mark("cross-file facts end")

    runner._collect_project_facts = facts
    real_imap = forkpool.imap_unordered

    def imap(fn, items, jobs, meanwhile=None):
        mark(f"pool of {min(jobs, len(items))} starts ({len(items)} work items)")
        yield from real_imap(fn, items, jobs, meanwhile)
        mark("pool ends")

    forkpool.imap_unordered = imap
    import kernlint.cli as cli

    mark("imported")
    _check_quietly(cli, args)
    mark("report written")
    print("the run with its pool (wall s, CPU s of the parent, of the workers):")
    for wall, own, kids, what in marks:
        print(f"  {wall:6.3f}  {own:5.2f}  {kids:5.2f}  {what}")


def cpp_parse_only(args: list[str]) -> int:
    """In this process: `kernlint check ARGS` with the check of every C/C++ rule replaced by
    what it would ask for first: the file's syntax tree (normalization and tree-sitter parse),
    for a rule that needs one; nothing for a rule that reads bytes only. The files linted,
    the Python rules and the rest of the run are the default run's."""
    sys.path.insert(0, ROOT)
    import kernlint.registry as registry

    def parse_only(ctx) -> None:
        _ = ctx.tree  # (a cached property: asking parses the file)

    def nothing(ctx) -> None:
        return None

    def reduced(rule):
        if rule.language != "cpp":
            return None
        return parse_only if rule.needs_tree else nothing

    _replace_checks(registry, reduced)
    import kernlint.cli as cli

    return cli.main(["check", *args])


# The groups of the default rules `--groups` measures: name -> the codes left out.
GROUPS = {
    "ungated-aiter-import": "PY001",
    "CI registration (PY006, PY011-PY014)": "PY006,PY011,PY012,PY013,PY014",
    "JIT module wiring (PY004, PY005, PY008-PY010)": "PY004,PY005,PY008,PY009,PY010",
    "kernel pointer rules (CU003, CU004)": "CU003,CU004",
    "the other C/C++ rules": "CU001,CU002,CU005,CU006,CU008,CU009,CU010",
    "every Python rule": "PY",
    "every C/C++ rule": "CU",
}


def _own_config(tree: str) -> bool:
    """Does the tree hold a kernlint configuration anywhere, as kernlint looks for one (then
    `--config` would replace it)? One it cannot read counts too."""
    sys.path.insert(0, ROOT)
    from kernlint.config import ConfigError, find_config_in

    for directory, dirs, files in os.walk(tree):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
        try:
            if find_config_in(directory, set(files)) is not None:
                return True
        except ConfigError:  # (a configuration kernlint cannot read is one all the same)
            return True
    return False


DEFAULT = "default rules"
PARSE_ONLY = "C/C++ parse only (each C/C++ rule reduced to its tree)"


def groups(tree: str, runs: int) -> None:
    """The `--groups` table: what leaving each group out saves in a run as it is."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from run import ruff_command, runs_ok, side_by_side

    options = ["--no-cache", "-q", "--exit-zero"]
    kernlint = [sys.executable, "-m", "kernlint", "check", *options]
    cmds = {}
    ruff, ruff_args, ruff_label, ruff_note = ruff_command(tree)
    if ruff is not None:
        cmds[ruff_label.removesuffix(" .")] = [ruff, *ruff_args, "-q", "--exit-zero"]
    cmds[DEFAULT] = kernlint
    compared = ["reading only (--select KL001)"]  # (the rows with a saving, against DEFAULT)
    cmds[compared[0]] = [*kernlint, "--select", "KL001"]
    for name, codes in GROUPS.items():
        compared.append(f"without {name}")
        cmds[compared[-1]] = [*kernlint, "--ignore", codes]
    compared.append(PARSE_ONLY)
    script = os.path.abspath(__file__)
    part = ["--tree", tree, "--part", "cpp-parse-only", "--"]
    cmds[PARSE_ONLY] = [sys.executable, script, *part, *options]
    lexical = None
    if not _own_config(tree):
        fd, lexical = tempfile.mkstemp(suffix=".toml", prefix="kernlint-bench-")
        with os.fdopen(fd, "w") as fh:
            fh.write('aiter-import-policy = "lexical"\n')
        compared.append("aiter-import-policy = lexical")
        cmds[compared[-1]] = [*kernlint, "--config", lexical]
    try:
        cmds = {k: [*v, "."] for k, v in cmds.items()}
        for cmd in cmds.values():  # (a command that fails would be timed failing)
            failed = runs_ok(cmd, tree)
            if failed:
                raise SystemExit(f"error: {tree}: `{' '.join(cmd)}` failed: {failed}")
        got = side_by_side(cmds, tree, runs)
    finally:
        if lexical is not None:
            os.unlink(lexical)
    base = got[DEFAULT]
    print(
        f"tree: {tree}; median of {runs} rounds, wall s (CPU s); saved: against the default rules"
    )
    if ruff_note:
        print(ruff_note)
    print("| run | wall | CPU | saved (wall / CPU) |")
    print("|---|---|---|---|")
    for name, t in got.items():
        saved = ""
        if name in compared:
            saved = f"{base - t:+.2f} / {base.cpu - t.cpu:+.2f}" if t.cpu is not None else ""
        cpu = f"{t.cpu:.2f}" if t.cpu is not None else "-"
        print(f"| {name} | {t:.2f} ({t.lo:.2f}-{t.hi:.2f}) | {cpu} | {saved} |")
    if lexical is None:
        print("(the tree has a kernlint configuration: the `lexical` run is left out)")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tree", required=True, help="the directory to check")
    p.add_argument(
        "--part", choices=("one-process", "pool", "cpp-parse-only"), help=argparse.SUPPRESS
    )
    p.add_argument("--groups", action="store_true", help="what each group of rules costs")
    p.add_argument("--runs", type=int, default=5, help="rounds for --groups (default 5)")
    p.add_argument("check_args", nargs="*", help="more `kernlint check` options, after --")
    a = p.parse_args()
    if a.runs < 1:
        p.error("--runs must be at least 1")
    if a.groups and a.check_args:
        p.error("--groups times the default rules: it takes no more `kernlint check` options")
    a.tree = os.path.abspath(a.tree)
    os.chdir(a.tree)
    if a.part == "one-process":
        one_process(a.check_args)
        return 0
    if a.part == "pool":
        pool_timeline(a.check_args)
        return 0
    if a.part == "cpp-parse-only":
        return cpp_parse_only(a.check_args)
    if a.groups:
        groups(a.tree, a.runs)
        return 0
    print(f"tree: {a.tree}; kernlint check --no-cache {' '.join([*a.check_args, '.'])}")
    for part in ("one-process", "pool"):  # (each in a fresh process: nothing shared)
        cmd = [sys.executable, os.path.abspath(__file__), "--tree", a.tree, "--part", part]
        subprocess.run([*cmd, "--", *a.check_args], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
