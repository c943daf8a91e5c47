"""kernlint speed benchmark against ruff and cpplint on the real SGLang 0.5.23 tree, or on any tree.

Usage:
    python bench/run.py [--runs N] [--sglang DIR] [--skip-cpplint]
    python bench/run.py --tree DIR [--tree DIR2 ...] [--runs N]
    python bench/run.py --smoke        # seconds-long CI smoke run on fixtures/, no targets checked
    python bench/run.py --tree DIR --smoke   # one round on DIR, development interpreter, no targets

Downloads the `sglang==0.5.23` wheel at run time (`pip download --no-deps`) unless --sglang
points at an unpacked `sglang` package directory. Commands run side by side, alternating, with
one warm-up each, the order rotating each round, median of --runs rounds (>= 3, default 9);
against cpplint (about 30 s a run) 3 rounds, with --runs kernlint runs in each. Prints a table
and the ratios against the targets.

With --tree, each tree (an SGLang checkout, FlashInfer's sources, the wheel) gets one table:
kernlint's default rules and `--select ALL --preview`, cold (`--no-cache`), ruff's
`check --no-cache --select E,F` and the development interpreter side by side in one rotation,
then a warm re-run; wall time (median, fastest and slowest sample), CPU time (user + system of
the command and its workers, median) and peak RSS (the largest process, worst sample). Targets:
default rules <= 1.0x ruff, ALL --preview <= 2x the default rules.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from rotation import in_rotation  # noqa: E402

KERNLINT = [sys.executable, "-m", "kernlint"]
TARGETS = {
    "tree_ratio_ruff": 1.0,
    "all_ratio_default": 2.0,
    "jit_ratio_cpplint": 0.02,
    "one_file_s": 0.15,
    "warm_s": 0.3,
    "rss_mb": 300,
}


def byte_compile(python: str, *dirs: str) -> None:
    """`compileall` the directories with `python`, as pip does at install (raises
    CalledProcessError on failure)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run(
        [python, "-m", "compileall", "-q", *dirs], check=True, env=env, capture_output=True
    )


def _console_entry() -> tuple[str, str]:
    """(module, function) of the `kernlint` console script in pyproject.toml."""
    try:
        import tomllib
    except ImportError:  # (Python 3.10)
        import tomli as tomllib

    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as fh:
        entry = tomllib.load(fh)["project"]["scripts"]["kernlint"]
    module, _, func = entry.partition(":")
    return module.strip(), func.strip()


def installed_kernlint(workdir: str) -> tuple[list[str], str]:
    """kernlint as `pip install .` lays it out, in a fresh virtual environment: the packages
    `kernlint` and `kernlint_rules` (from rules/), byte-compiled, and the `kernlint` console
    script pip writes. Its dependencies (tree-sitter, the CUDA grammar) are found through a
    path entry to where this interpreter has them (a .pth path line, whose directory's own .pth
    files are not run). Returns (command, description); the development interpreter's own
    command when a step fails.

    Why: this development environment's interpreter spends 40-47 ms starting (`python -c
    pass`; editable-install finders and other .pth files in its site-packages), a fresh venv
    12-15 ms. A user runs kernlint from an install, so that is what the targets are judged on;
    the development interpreter's figures are printed too."""
    import importlib.util

    venv = os.path.join(workdir, "venv")
    try:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
        python = os.path.join(venv, "bin", "python")
        purelib = subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        shutil.copytree(
            os.path.join(ROOT, "kernlint"), os.path.join(purelib, "kernlint"), ignore=ignore
        )
        shutil.copytree(
            os.path.join(ROOT, "rules"), os.path.join(purelib, "kernlint_rules"), ignore=ignore
        )
        deps = set()
        for name in ("tree_sitter", "tree_sitter_cuda", "tomli"):
            spec = importlib.util.find_spec(name)
            if spec is not None and spec.submodule_search_locations:
                deps.add(os.path.dirname(list(spec.submodule_search_locations)[0]))
        with open(os.path.join(purelib, "_kernlint_bench_deps.pth"), "w") as fh:
            fh.write("".join(f"{d}\n" for d in sorted(deps)))
        byte_compile(
            python, os.path.join(purelib, "kernlint"), os.path.join(purelib, "kernlint_rules")
        )
        module, func = _console_entry()
        script = os.path.join(venv, "bin", "kernlint")
        with open(script, "w") as fh:  # what pip writes for [project.scripts]
            fh.write(
                f"#!{python}\n"
                f"import re\nimport sys\nfrom {module} import {func}\n"
                "if __name__ == '__main__':\n"
                "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
                f"    sys.exit({func}())\n"
            )
        os.chmod(script, 0o755)
        check = subprocess.run([script, "--version"], capture_output=True, text=True)
        if check.returncode != 0:
            raise RuntimeError(check.stderr)
    except (OSError, subprocess.CalledProcessError, RuntimeError) as exc:
        print(f"(could not lay out an installed kernlint: {exc}; timing the dev interpreter)")
        return KERNLINT, "development interpreter"
    return [script], f"installed in a fresh venv ({venv})"


def sglang_tree(given: str | None) -> str:
    if given:
        return given
    base = os.path.join(tempfile.gettempdir(), "kernlint-bench-sglang")
    pkg = os.path.join(base, "sg", "sglang")
    if os.path.isdir(pkg):
        return pkg
    os.makedirs(base, exist_ok=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "sglang==0.5.23",
            "--no-deps",
            "--only-binary=:all:",
            "-q",
            "-d",
            os.path.join(base, "w"),
        ],
        check=True,
    )
    wheel = glob.glob(os.path.join(base, "w", "sglang-*.whl"))[0]
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(os.path.join(base, "sg"))
    return pkg


class Sample(float):
    """One run's wall time in seconds (a float), with its CPU time (user + system of the
    command and the workers it waited for) and peak RSS in MB (its largest process); None
    where the platform does not say."""

    def __new__(cls, wall: float, cpu: float | None = None, rss_mb: float | None = None):
        value = super().__new__(cls, wall)
        value.cpu, value.rss_mb = cpu, rss_mb
        return value


_GNU_TIME: list = []


def gnu_time() -> str | None:
    """/usr/bin/time when it is GNU time (`-f`, `-o`), else None (probed once)."""
    if not _GNU_TIME:
        found = None
        if os.path.exists("/usr/bin/time"):
            try:
                probe = subprocess.run(
                    ["/usr/bin/time", "-f", "%M", "-o", os.devnull, "true"],
                    capture_output=True,
                    timeout=30,
                )
                found = "/usr/bin/time" if probe.returncode == 0 else None
            except (OSError, subprocess.TimeoutExpired):
                found = None
        _GNU_TIME.append(found)
    return _GNU_TIME[0]


def timed(cmd, cwd) -> Sample:
    """Run `cmd` in `cwd`: wall time, CPU time (wait4: the command and the workers it waited
    for) and peak RSS. The RSS is GNU time's report for the command, started from time's small
    process: a child's own `ru_maxrss` starts at its parent's RSS at the fork (a 400 MB parent
    makes `python -c pass` read 411 MB), so it would measure this benchmark, not kernlint.
    Without GNU time there is no RSS (None)."""
    wrapper = gnu_time() if hasattr(os, "wait4") else None
    report = None
    if wrapper is not None:
        fd, report = tempfile.mkstemp(prefix="kernlint-bench-rss-")
        os.close(fd)
        cmd = [wrapper, "-f", "%M", "-o", report, *cmd]
    try:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not hasattr(os, "wait4"):
            proc.wait()
            return Sample(time.perf_counter() - t0)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        rss = None
        if report is not None:
            with open(report) as fh:
                lines = fh.read().split()
            if lines and lines[-1].isdigit():  # (after "Command exited with ..." if it failed)
                rss = int(lines[-1]) / 1024
    finally:
        if report is not None:
            os.unlink(report)
    return Sample(wall, usage.ru_utime + usage.ru_stime, rss)


def peak_rss_mb(cmd, cwd) -> float | None:
    if not os.path.exists("/usr/bin/time"):
        return None
    p = subprocess.run(["/usr/bin/time", "-v", *cmd], cwd=cwd, capture_output=True, text=True)
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    return int(m.group(1)) / 1024 if m else None


def side_by_side(
    cmds: dict[str, list[str]], cwd: str, runs: int, per_round: dict[str, int] | None = None
) -> dict[str, float]:
    """Median wall time of each command, after one warm-up each, over `runs` rounds that run
    every command in turn, each round starting one command later than the last (so that no
    command always runs first, or always after the same other one); `per_round`: more samples
    per round of a cheap command, so that a slow one such as cpplint does not leave it with
    only a few."""
    for cmd in cmds.values():  # warm-up (page cache, imports)
        timed(cmd, cwd)
    samples: dict[str, list[float]] = {k: [] for k in cmds}
    for key in in_rotation(cmds, runs):
        for _ in range((per_round or {}).get(key, 1)):
            samples[key].append(timed(cmds[key], cwd))
    return {k: Timing.of(v) for k, v in samples.items()}


class Timing(float):
    """A median wall time (a float), with the fastest and slowest sample it came from, the
    median CPU time and the largest peak RSS (MB) of the samples (None where not measured)."""

    def __new__(cls, median: float, lo: float, hi: float, cpu=None, rss_mb=None):
        value = super().__new__(cls, median)
        value.lo, value.hi, value.cpu, value.rss_mb = lo, hi, cpu, rss_mb
        return value

    @classmethod
    def of(cls, samples) -> Timing:
        cpus = [s.cpu for s in samples if getattr(s, "cpu", None) is not None]
        rss = [s.rss_mb for s in samples if getattr(s, "rss_mb", None) is not None]
        return cls(
            statistics.median(samples),
            min(samples),
            max(samples),
            statistics.median(cpus) if cpus else None,
            max(rss) if rss else None,
        )


def tool_version(cmd) -> str:
    try:
        out = subprocess.run([*cmd, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    return (out.stdout.strip() or out.stderr.strip() or "?").splitlines()[0]


def checkout() -> str:
    """The checkout's commit, and whether files differ from it (what a table was taken on)."""

    def git(*args) -> str:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True)
        return done.stdout.strip()

    try:
        head = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.CalledProcessError):
        return "checkout: not a git checkout"
    return f"commit {head}" + (" with uncommitted changes" if dirty else "")


def runs_ok(cmd, cwd) -> str:
    """ "" when `cmd` exits 0 in `cwd`, else the last line of its error output."""
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if p.returncode == 0:
        return ""
    lines = [line.strip() for line in p.stderr.splitlines() if line.strip()]
    causes = [line for line in lines if line.startswith("Cause:")]  # (ruff's own account)
    line = causes[0] if causes else (lines[-1] if lines else "")
    return f"exit {p.returncode}" + (f": {line}" if line else "")


def show_files(cmd, cwd) -> list[str]:
    """The Python files `ruff ... --show-files` lists (it lists its config files too)."""
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if p.returncode != 0:
        return []
    return [f for f in p.stdout.splitlines() if f.strip().endswith((".py", ".pyi", ".ipynb"))]


def count_sources(tree: str) -> tuple[int, int]:
    """(Python files, C/C++/CUDA files) under `tree`, by extension (`.git` left out)."""
    from kernlint.source import language_of

    counts = {"python": 0, "cpp": 0}
    for _, dirs, names in os.walk(tree):
        dirs[:] = [x for x in dirs if x != ".git"]
        for n in names:
            language = language_of(n)
            if language in counts:
                counts[language] += 1
    return counts["python"], counts["cpp"]


def files_line(kl, tree) -> str:
    """kernlint's own count of the tree's files (`--statistics`: checked, parsed, generated)."""
    out = subprocess.run(
        [*kl, "check", ".", "--no-cache", "--exit-zero", "--statistics"],
        cwd=tree,
        capture_output=True,
        text=True,
    ).stdout
    found = [line for line in out.splitlines() if line.startswith("Files:")]
    return found[-1] if found else "Files: (not reported)"


def ruff_command(tree: str) -> tuple[str | None, list[str], str, str]:
    """(ruff's path or None, the arguments it is timed with, their label, a note): `check
    --no-cache --select E,F`, with `--isolated` where the tree's own ruff configuration makes
    ruff fail (e.g. it extends a file the tree lacks)."""
    ruff = shutil.which("ruff")
    args = ["check", "--no-cache", "--select", "E,F"]
    label, note = "ruff check --no-cache --select E,F .", ""
    if ruff is not None:
        failed = runs_ok([ruff, *args, "--show-files", "."], tree)
        if failed:
            args.append("--isolated")
            label = "ruff check --no-cache --select E,F --isolated ."
            note = f"ruff failed with the tree's own configuration ({failed}): --isolated"
    return ruff, args, label, note


def tree_report(tree: str, kl, how: str, dev, runs: int, smoke: bool = False) -> dict:
    """Time kernlint (default rules and `--select ALL --preview`), ruff E,F and the
    development interpreter side by side on `tree`, print the table and the target ratios.
    Returns the timings by key ("default", "all", "ruff", "dev", "warm")."""
    cold = ["--no-cache", "-q", "--exit-zero"]
    cmds = {
        "default": [*kl, "check", ".", *cold],
        "all": [*kl, "check", ".", *cold, "--select", "ALL", "--preview"],
    }
    ruff, ruff_args, ruff_label, ruff_note = ruff_command(tree)
    ruff_files = 0
    if ruff is not None:
        ruff_files = len(show_files([ruff, *ruff_args, "--show-files", "."], tree))
        cmds["ruff"] = [ruff, *ruff_args, "-q", "--exit-zero", "."]
    if dev:
        cmds["dev"] = [*dev, "check", ".", *cold]
    for cmd in cmds.values():  # (a command that fails would be timed failing)
        failed = runs_ok(cmd, tree)
        if failed:
            raise SystemExit(f"error: {tree}: `{' '.join(cmd)}` failed: {failed}")
    got = side_by_side(cmds, tree, runs)
    cache_dir = tempfile.mkdtemp(prefix="kernlint-bench-cache-")
    try:
        warm_cmd = [*kl, "check", ".", "--cache-dir", cache_dir, "-q", "--exit-zero"]
        got["warm"] = side_by_side({"warm": warm_cmd}, tree, runs)["warm"]
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)

    labels = {
        "default": "kernlint check --no-cache .",
        "all": "kernlint check --no-cache --select ALL --preview .",
        "ruff": ruff_label,
        "dev": "the same as the first, development interpreter",
        "warm": "kernlint check . (warm cache, unchanged)",
    }
    python_files, cpp_files = count_sources(tree)
    print(f"tree: {os.path.abspath(tree)}")
    print(f"  {python_files:,} Python and {cpp_files:,} C/C++/CUDA files (by extension)")
    print(f"  kernlint's count: {files_line(kl, tree)}")
    if ruff is not None:
        print(f"  ruff's count: {ruff_files:,} files" + (f"; {ruff_note}" if ruff_note else ""))
    print(
        f"  {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, median of {runs} round(s) "
        f"after a warm-up; kernlint {how}; {tool_version(kl)} ({checkout()})"
        + (f"; {tool_version([ruff])}" if ruff else "; ruff not found")
    )
    print(
        f"  {'command':<52} {'wall s':>7} {'(fastest to slowest)':>22} {'CPU s':>7} {'RSS MB':>7}"
    )
    for key in ("default", "all", "ruff", "dev", "warm"):
        if key not in got:
            continue
        t = got[key]
        cpu = f"{t.cpu:.2f}" if t.cpu is not None else "-"
        rss = f"{t.rss_mb:.0f}" if t.rss_mb is not None else "-"
        spread = f"({t.lo:.3f} to {t.hi:.3f})"
        print(f"  {labels[key]:<52} {t:>7.3f} {spread:>22} {cpu:>7} {rss:>7}")
    checks = []
    if "ruff" in got and ruff_files:
        checks.append(("default rules / ruff E,F", got["default"] / got["ruff"], "tree_ratio_ruff"))
    elif "ruff" in got:
        print("  (ruff checks no file here: no ratio to ruff)")
    checks.append(
        ("ALL --preview / default rules", got["all"] / got["default"], "all_ratio_default")
    )
    for name, value, target in checks:
        limit = TARGETS[target]
        verdict = "not judged (smoke)" if smoke else ("ok" if value <= limit else "MISSED")
        print(f"  {name:<32} {value:>7.3f}x  target <= {limit}x  {verdict}")
    if "dev" in got and "ruff" in got and ruff_files:
        print(f"  {'(development interpreter / ruff)':<32} {got['dev'] / got['ruff']:>7.3f}x")
    print()
    return got


def main() -> int:
    ap = argparse.ArgumentParser()
    # 9 rounds: this 2-core machine's speed drifts by 10-15% over tens of seconds, and a median
    # of 5 moved by as much between runs (docs/benchmarks.md).
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--sglang", help="an unpacked sglang package directory")
    ap.add_argument("--skip-cpplint", action="store_true")
    ap.add_argument("--smoke", action="store_true", help="quick run on fixtures/, no targets")
    ap.add_argument(
        "--tree",
        action="append",
        metavar="DIR",
        help="time kernlint (default rules, ALL --preview) and ruff on this tree (repeatable)",
    )
    args = ap.parse_args()

    if args.tree:
        for tree in args.tree:
            if not os.path.isdir(tree):
                print(f"error: --tree {tree}: not a directory", file=sys.stderr)
                return 2
        if args.smoke:  # one round, the development interpreter, no targets judged
            for tree in args.tree:
                tree_report(tree, KERNLINT, "development interpreter", None, 1, smoke=True)
            return 0
        try:
            byte_compile(
                sys.executable, os.path.join(ROOT, "kernlint"), os.path.join(ROOT, "rules")
            )
        except subprocess.CalledProcessError:
            pass
        workdir = tempfile.mkdtemp(prefix="kernlint-bench-")
        try:
            kl, how = installed_kernlint(workdir)
            dev = KERNLINT if kl is not KERNLINT else None
            for tree in args.tree:
                tree_report(tree, kl, how, dev, max(3, args.runs))
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        return 0

    if args.smoke:
        fixtures = os.path.join(ROOT, "fixtures")
        t = side_by_side(
            {"kernlint": [*KERNLINT, "check", fixtures, "--no-cache", "-q", "--exit-zero"]}, ROOT, 1
        )
        print(f"smoke: kernlint check fixtures/ --no-cache: {t['kernlint']:.2f} s")
        return 0

    runs = max(3, args.runs)
    # The development interpreter runs the checkout's kernlint byte-compiled, as an install
    # would be (an editable install under PYTHONDONTWRITEBYTECODE=1 re-compiles every start).
    try:
        byte_compile(sys.executable, os.path.join(ROOT, "kernlint"), os.path.join(ROOT, "rules"))
    except subprocess.CalledProcessError:
        pass  # (the development interpreter's figures are then with source compiled at start)
    workdir = tempfile.mkdtemp(prefix="kernlint-bench-")
    kl, how = installed_kernlint(workdir)
    dev = KERNLINT if kl is not KERNLINT else None
    sg = sglang_tree(args.sglang)
    tree = os.path.dirname(sg)  # the unpacked wheel: sglang/ (+ dist-info)
    jit = os.path.join(sg, "kernels", "jit")
    rows = []
    cold = ["--no-cache", "-q", "--exit-zero"]

    cmds = {"kernlint": [*kl, "check", ".", *cold]}
    if dev:
        cmds["dev"] = [*dev, "check", ".", *cold]
    if shutil.which("ruff") is not None:
        cmds["ruff"] = ["ruff", "check", "--no-cache", "--select", "E,F", "-q", "--exit-zero", "."]
    whole = side_by_side(cmds, tree, runs)
    rows.append(("whole tree, cold: kernlint --no-cache", whole["kernlint"]))
    ratio_ruff = None
    if "ruff" in whole:
        rows.append(("whole tree: ruff --no-cache --select E,F", whole["ruff"]))
        ratio_ruff = whole["kernlint"] / whole["ruff"]

    ratio_cpp = None
    jit_files = [
        os.path.join(d, n)
        for d, _, ns in os.walk(jit)
        for n in ns
        if n.endswith((".cu", ".cuh", ".h", ".hpp", ".cpp", ".cc"))
    ]
    jit_cmds = {"kernlint": [*kl, "check", jit, *cold]}
    if dev:
        jit_cmds["dev"] = [*dev, "check", jit, *cold]
    if not args.skip_cpplint and shutil.which("cpplint"):
        jit_cmds["cpplint"] = [
            "cpplint",
            "--quiet",
            "--recursive",
            "--extensions=cu,cuh,h,hpp,cpp,cc",
            jit,
        ]
    if "cpplint" in jit_cmds:  # 3 rounds of cpplint (about 30 s each), more kernlint runs each
        each = max(3, runs)
        jt = side_by_side(jit_cmds, tree, 3, per_round={"kernlint": each, "dev": each})
    else:
        jt = side_by_side(jit_cmds, tree, runs)
    rows.append((f"kernels/jit ({len(jit_files)} C++/CUDA files): kernlint", jt["kernlint"]))
    if "cpplint" in jt:
        rows.append(("kernels/jit: cpplint --recursive", jt["cpplint"]))
        ratio_cpp = jt["kernlint"] / jt["cpplint"]

    cuh = os.path.join(jit, "csrc", "elementwise", "rmsnorm_hf.cuh")
    if not os.path.exists(cuh):
        cuh = sorted(f for f in jit_files if f.endswith(".cuh"))[0]
    py = os.path.join(sg, "srt", "layers", "layernorm.py")
    one = side_by_side(
        {"cuh": [*kl, "check", cuh, *cold], "py": [*kl, "check", py, *cold]}, tree, max(runs, 5)
    )
    rows.append(("one .cuh file (pre-commit case)", one["cuh"]))
    rows.append(("one .py file (pre-commit case)", one["py"]))

    cache_dir = tempfile.mkdtemp(prefix="kernlint-bench-cache-")
    warm_cmd = [*kl, "check", ".", "--cache-dir", cache_dir, "-q", "--exit-zero"]
    warm = side_by_side({"warm": warm_cmd}, tree, runs)["warm"]
    rows.append(("whole tree, warm cache, unchanged", warm))
    shutil.rmtree(cache_dir, ignore_errors=True)

    rss = peak_rss_mb([*kl, "check", ".", *cold], tree)
    shutil.rmtree(workdir, ignore_errors=True)

    print(
        f"kernlint benchmark, {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, "
        f"median of {runs} after a warm-up; kernlint {how}"
    )
    print(f"{'measurement':<50} {'seconds':>9}   (fastest to slowest sample)")
    for name, value in rows:
        spread = f"   ({value.lo:.3f} to {value.hi:.3f})" if isinstance(value, Timing) else ""
        print(f"{name:<50} {value:>9.3f}{spread}")
    if rss is not None:
        print(f"{'peak RSS, whole tree cold (MB)':<50} {rss:>9.1f}")
    if dev:
        print(
            "the same, with the development interpreter (`python -m kernlint`): whole tree "
            f"{whole['dev']:.3f} s"
            + (f" ({whole['dev'] / whole['ruff']:.3f}x ruff)" if "ruff" in whole else "")
            + f", kernels/jit {jt['dev']:.3f} s"
            + (f" ({jt['dev'] / jt['cpplint']:.4f}x cpplint)" if "cpplint" in jt else "")
        )
    print()
    checks = []
    if ratio_ruff is not None:
        checks.append(("whole tree / ruff E,F", ratio_ruff, TARGETS["tree_ratio_ruff"]))
    if ratio_cpp is not None:
        checks.append(("kernels/jit / cpplint", ratio_cpp, TARGETS["jit_ratio_cpplint"]))
    checks.append(("one .cuh file (s)", one["cuh"], TARGETS["one_file_s"]))
    checks.append(("one .py file (s)", one["py"], TARGETS["one_file_s"]))
    checks.append(("warm re-run (s)", warm, TARGETS["warm_s"]))
    if rss is not None:
        checks.append(("peak RSS (MB)", rss, TARGETS["rss_mb"]))
    for name, value, target in checks:
        verdict = "ok" if value <= target else "MISSED"
        print(f"{name:<30} {value:>9.4f}  target <= {target:<6}  {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
