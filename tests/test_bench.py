"""The speed benchmarks' own machinery (bench/run.py, bench/tree_growth.py): what they time must
be kernlint, on the tree asked for."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _bench():
    spec = importlib.util.spec_from_file_location(
        "bench_run", os.path.join(ROOT, "bench", "run.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(sys.platform == "win32", reason="the layout is a POSIX venv")
def test_installed_layout_runs_this_checkout(tmp_path):
    """The fresh-venv layout the harness times is this checkout's kernlint, byte-compiled,
    started through a console script, and it lints like the development install."""
    bench = _bench()
    cmd, how = bench.installed_kernlint(str(tmp_path))
    assert how.startswith("installed"), how
    (script,) = cmd
    python = os.path.join(os.path.dirname(script), "python")
    where = subprocess.run(
        [python, "-c", "import kernlint, kernlint_rules; print(kernlint.__file__)"],
        capture_output=True,
        text=True,
        cwd=str(tmp_path),
        check=True,
    ).stdout.strip()
    assert where.startswith(str(tmp_path)), where
    assert os.path.isdir(os.path.join(os.path.dirname(where), "__pycache__"))
    target = os.path.join(ROOT, "fixtures", "cpp", "raw-kernel-launch")
    got = subprocess.run(
        [script, "check", target, "--no-cache", "--output-format", "json"],
        capture_output=True,
        text=True,
        cwd=str(tmp_path),
    )
    want = subprocess.run(
        [
            sys.executable,
            "-m",
            "kernlint",
            "check",
            target,
            "--no-cache",
            "--output-format",
            "json",
        ],
        capture_output=True,
        text=True,
        cwd=str(tmp_path),
    )
    assert got.returncode == want.returncode == 1, got.stderr
    assert got.stdout == want.stdout and '"CU006"' in got.stdout


def test_installed_script_calls_the_projects_entry_point(tmp_path):
    """The console script the harness writes calls what pyproject.toml names (the command
    that skips the interpreter's teardown), not a function of its own choosing."""
    bench = _bench()
    (script,) = bench.installed_kernlint(str(tmp_path))[0]
    module, func = bench._console_entry()
    assert (module, func) == ("kernlint.cli", "run")
    with open(script) as fh:
        assert f"from {module} import {func}\n" in fh.read()


def test_profile_splits_a_run_into_its_parts(tmp_path):
    """bench/profile.py prints the one-process parts (each rule that ran, the tree parses)
    and the timeline of the run as it is."""
    (tmp_path / "k.cu").write_text("__global__ void k(float* x, float* y) { x[0] = y[0]; }\n")
    (tmp_path / "m.py").write_text("import aiter\n")
    p = subprocess.run(
        [sys.executable, os.path.join(ROOT, "bench", "profile.py"), "--tree", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    assert "one process, CPU seconds" in p.stdout
    assert "rule CU003" in p.stdout and "rule PY001" in p.stdout
    assert "tree parse (cpp)" in p.stdout and "tree parse (python)" in p.stdout
    assert "cross-file facts start" in p.stdout and "report written" in p.stdout


def test_side_by_side_rotates_the_order_and_takes_medians(monkeypatch):
    bench = _bench()
    calls = []
    fake_times = {"a": iter([9.0, 1.0, 3.0, 2.0]), "b": iter([9.0, 5.0, 4.0, 6.0])}

    def timed(cmd, cwd):
        calls.append(cmd[0])
        return next(fake_times[cmd[0]])

    monkeypatch.setattr(bench, "timed", timed)
    out = bench.side_by_side({"a": ["a"], "b": ["b"]}, "/", 3)
    # One warm-up each, then rounds that start one command later each time.
    assert calls == ["a", "b", "a", "b", "b", "a", "a", "b"]
    assert (out["a"], out["a"].lo, out["a"].hi) == (2.0, 1.0, 3.0)
    assert (out["b"], out["b"].lo, out["b"].hi) == (5.0, 4.0, 6.0)


@pytest.mark.skipif(not hasattr(os, "wait4"), reason="CPU time and RSS come from wait4")
def test_timed_reports_cpu_time_and_peak_rss():
    """A run's CPU time and peak RSS are the command's own: a child that spins for 0.3 s of
    CPU and writes 80 MB."""
    bench = _bench()
    code = (
        "import time\nb = b'x' * (80 << 20)\nt = time.process_time()\n"
        "while time.process_time() - t < 0.3:\n    pass\n"
    )
    sample = bench.timed([sys.executable, "-c", code], ROOT)
    assert sample >= 0.3 and sample.cpu >= 0.3
    idle = bench.timed([sys.executable, "-c", "pass"], ROOT)
    assert idle.cpu < sample.cpu
    if bench.gnu_time() is None:
        assert sample.rss_mb is None  # (no clean measurement: none reported)
    else:
        assert sample.rss_mb >= 80 and idle.rss_mb < sample.rss_mb


@pytest.mark.skipif(not hasattr(os, "wait4"), reason="CPU time and RSS come from wait4")
def test_peak_rss_is_the_commands_not_the_benchmarks():
    """A child's own ru_maxrss starts at its parent's RSS at the fork: a 300 MB benchmark
    process must not make an idle interpreter read 300 MB."""
    bench = _bench()
    if bench.gnu_time() is None:
        pytest.skip("no GNU time: no RSS is reported")
    big = b"x" * (300 << 20)
    idle = bench.timed([sys.executable, "-c", "pass"], ROOT)
    assert len(big) and idle.rss_mb < 100, idle.rss_mb


def test_timing_takes_the_median_cpu_and_the_worst_rss():
    bench = _bench()
    samples = [
        bench.Sample(1.0, 2.0, 50.0),
        bench.Sample(3.0, 1.0, 70.0),
        bench.Sample(2.0, 4.0, 60.0),
    ]
    t = bench.Timing.of(samples)
    assert (t, t.lo, t.hi, t.cpu, t.rss_mb) == (2.0, 1.0, 3.0, 2.0, 70.0)
    plain = bench.Timing.of([1.0, 2.0, 3.0])  # (samples without CPU or RSS: none reported)
    assert plain == 2.0 and plain.cpu is None and plain.rss_mb is None


def _tiny_tree(path):
    (path / "pkg").mkdir(parents=True)
    (path / "pkg" / "a.py").write_text("import os\n\nx = 1\n")
    (path / "pkg" / "k.cu").write_text("__global__ void k(float* x) { x[0] = 1.0f; }\n")
    return path


def test_tree_smoke_times_kernlint_and_ruff_on_the_tree(tmp_path):
    """`--tree DIR --smoke`: kernlint (default rules, ALL --preview) and ruff, side by side on
    DIR; the file count is kernlint's own, from DIR."""
    tree = _tiny_tree(tmp_path / "t")
    p = subprocess.run(
        [sys.executable, os.path.join(ROOT, "bench", "run.py"), "--tree", str(tree), "--smoke"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert f"tree: {tree}" in out
    assert "Files: 2 checked" in out
    assert "kernlint check --no-cache --select ALL --preview ." in out
    assert "ALL --preview / default rules" in out and "not judged (smoke)" in out
    assert "kernlint check . (warm cache, unchanged)" in out
    if shutil.which("ruff"):
        assert "ruff check --no-cache --select E,F ." in out
        assert "default rules / ruff E,F" in out
    assert not list(tree.rglob(".kernlint_cache")), "a cold run wrote a cache into the tree"


def test_tree_that_is_not_a_directory_is_a_usage_error(tmp_path):
    p = subprocess.run(
        [sys.executable, os.path.join(ROOT, "bench", "run.py"), "--tree", str(tmp_path / "no")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 2
    assert p.stderr.strip().count("\n") == 0 and "not a directory" in p.stderr
    assert "Traceback" not in p.stderr


def _growth():
    spec = importlib.util.spec_from_file_location(
        "bench_tree_growth", os.path.join(ROOT, "bench", "tree_growth.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_growth_trees_are_renamed_copies(tmp_path):
    growth = _growth()
    src = _tiny_tree(tmp_path / "src")
    (src / "README.md").write_text("not a source file\n")
    files, size = growth.build(str(src), str(tmp_path / "out"), 3)
    assert files == 6 and size == 3 * (len("import os\n\nx = 1\n") + 45)
    for k in range(3):
        copy = tmp_path / "out" / f"copy_{k}"
        assert (copy / "pkg" / "a.py").read_bytes() == (src / "pkg" / "a.py").read_bytes()
        assert (copy / "README.md").exists()
    assert not (tmp_path / "out" / "copy_3").exists()
    # Hard links where possible: the same bytes, nothing copied.
    a = os.stat(src / "pkg" / "a.py")
    b = os.stat(tmp_path / "out" / "copy_1" / "pkg" / "a.py")
    assert (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def test_growth_quick_run_prints_both_sizes_and_cleans_up(tmp_path):
    tree = _tiny_tree(tmp_path / "t")
    p = subprocess.run(
        [
            sys.executable,
            os.path.join(ROOT, "bench", "tree_growth.py"),
            "--tree",
            str(tree),
            "--quick",
            "--runs",
            "1",
            "--dev",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    rows = {
        line.split()[0]: line.split()
        for line in p.stdout.splitlines()
        if line[:5].strip() in ("1x", "2x")
    }
    assert rows["1x"][1] == "2" and rows["2x"][1] == "4"  # source files: the tree doubled
    assert len(rows["2x"]) == 9 and float(rows["2x"][4]) > 0  # wall, CPU and RSS ratios
    base = p.stdout.split("(trees built in ")[1].split(" under ")[1].split(",")[0]
    assert not os.path.exists(base), "the generated trees are removed"


def _tree_smoke(tree):
    return subprocess.run(
        [sys.executable, os.path.join(ROOT, "bench", "run.py"), "--tree", str(tree), "--smoke"],
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.skipif(shutil.which("ruff") is None, reason="needs ruff")
def test_tree_whose_ruff_config_fails_is_timed_with_ruff_isolated(tmp_path):
    """A tree whose ruff configuration cannot load (FlashInfer's sources extend a
    pyproject.toml they do not ship): ruff would be timed failing; it runs --isolated."""
    tree = _tiny_tree(tmp_path / "t")
    (tree / "pkg" / "ruff.toml").write_text('extend = "missing.toml"\n')
    p = _tree_smoke(tree)
    assert p.returncode == 0, p.stderr
    assert "ruff failed with the tree's own configuration" in p.stdout
    assert "ruff's count: 1 files" in p.stdout  # (a.py; not its ruff.toml)
    assert "ruff check --no-cache --select E,F --isolated ." in p.stdout


def test_tree_where_kernlint_fails_is_not_timed(tmp_path):
    tree = _tiny_tree(tmp_path / "t")
    (tree / "pyproject.toml").write_text("[tool.kernlint]\nno-such-key = 1\n")
    p = _tree_smoke(tree)
    assert p.returncode != 0
    assert "failed: exit 2" in p.stderr and "Traceback" not in p.stderr
    assert "wall s" not in p.stdout


def test_profile_groups_times_each_group_left_out(tmp_path):
    """bench/profile.py --groups times the default rules, the reading floor, the run without
    each group of rules and the `lexical` aiter policy, in one table."""
    (tmp_path / "k.cu").write_text("__global__ void k(float* x) { x[0] = 1; }\n")
    (tmp_path / "m.py").write_text("import aiter\n")
    cmd = [sys.executable, os.path.join(ROOT, "bench", "profile.py"), "--tree", str(tmp_path)]
    p = subprocess.run(
        [*cmd, "--groups", "--runs", "1"], capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 0, p.stderr
    rows = {
        line.split(" | ")[0].lstrip("| ") for line in p.stdout.splitlines() if line.startswith("| ")
    }
    assert {
        "default rules",
        "reading only (--select KL001)",
        "without ungated-aiter-import",
    } <= rows
    assert "without every C/C++ rule" in rows and "aiter-import-policy = lexical" in rows
    assert "C/C++ parse only (each C/C++ rule reduced to its tree)" in rows


def test_profile_parse_only_run_parses_what_the_default_run_parses(tmp_path):
    """The `C/C++ parse only` run of --groups lints the same files as the default run and
    parses the same C/C++ files (the statistics line), with no C/C++ finding made; the Python
    rules still run."""
    (tmp_path / "k.cu").write_text("__global__ void k(float* x, float* y) { x[0] = y[0]; }\n")
    (tmp_path / "plain.cu").write_text("int f(int a) { return a + 1; }\n")  # (no trigger)
    (tmp_path / "m.py").write_text("import aiter\n")
    args = ["--no-cache", "--statistics", "--exit-zero", "--output-format", "concise"]
    base = subprocess.run(
        [sys.executable, "-m", "kernlint", "check", *args, "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    cmd = [sys.executable, os.path.join(ROOT, "bench", "profile.py"), "--tree", str(tmp_path)]
    p = subprocess.run(
        [*cmd, "--part", "cpp-parse-only", "--", *args, "."],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert base.returncode == 0 and p.returncode == 0, p.stderr

    def files_line(out):
        return next(line for line in out.splitlines() if line.startswith("Files:"))

    assert "C/C++/CUDA: 0 of 1" in files_line(base.stdout)
    assert files_line(p.stdout) == files_line(base.stdout)
    assert "CU003" in base.stdout and "CU003" not in p.stdout
    assert "PY001" in base.stdout and "PY001" in p.stdout


def test_profile_groups_refuses_what_it_cannot_time(tmp_path):
    """--groups takes no more check options (it times the default rules), and a tree where
    kernlint fails is not timed: the failing command is named, no table is printed."""
    (tmp_path / "m.py").write_text("import aiter\n")
    cmd = [sys.executable, os.path.join(ROOT, "bench", "profile.py"), "--tree", str(tmp_path)]
    p = subprocess.run(
        [*cmd, "--groups", "--runs", "1", "--", "--select", "PY"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 2 and "takes no more `kernlint check` options" in p.stderr
    (tmp_path / "kernlint.toml").write_text("select = [\n")  # (invalid TOML: exit 2)
    p = subprocess.run(
        [*cmd, "--groups", "--runs", "1"], capture_output=True, text=True, timeout=120
    )
    assert p.returncode != 0 and "failed: exit 2" in p.stderr
    assert "| run |" not in p.stdout and "Traceback" not in p.stderr


def test_profile_groups_leaves_lexical_out_where_the_tree_is_configured(tmp_path):
    """`--config` would replace a tree's own kernlint configuration: the `lexical` run is
    made only where the tree holds none, at its root or below (a pyproject.toml without
    [tool.kernlint] is none)."""
    spec = importlib.util.spec_from_file_location(
        "bench_profile", os.path.join(ROOT, "bench", "profile.py")
    )
    profile = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(profile)
    assert not profile._own_config(str(tmp_path))
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 100\n")
    assert not profile._own_config(str(tmp_path))
    (tmp_path / "pyproject.toml").write_text('[tool.kernlint]\nselect = ["CU"]\n')
    assert profile._own_config(str(tmp_path))
    (tmp_path / "pyproject.toml").write_text("[tool.kernlint\n")  # (one it cannot read)
    assert profile._own_config(str(tmp_path))
    (tmp_path / "pyproject.toml").unlink()
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "kernlint.toml").write_text('select = ["CU"]\n')
    assert profile._own_config(str(tmp_path))
