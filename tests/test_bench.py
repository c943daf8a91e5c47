"""The speed benchmark's own machinery (bench/run.py): what it times must be kernlint."""

from __future__ import annotations

import importlib.util
import os
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
