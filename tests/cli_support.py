"""Running the `kernlint` command line from tests."""

from __future__ import annotations

import subprocess
import sys


def run(*args, cwd=None, input=None, timeout=120):
    """`python -m kernlint ARGS` in `cwd`; the CompletedProcess with text stdout/stderr."""
    return subprocess.run(
        [sys.executable, "-m", "kernlint", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        input=input,
        timeout=timeout,
    )


def check(capsys, *args):
    """`kernlint check --no-cache ARGS` in this process: (exit status, stdout, stderr)."""
    from kernlint.cli import main

    rc = main(["check", "--no-cache", *args])
    out, err = capsys.readouterr()
    return rc, out, err


OLD_NS = 1_600_000_000 * 10**9  # (2020: far from any run's start, outside the racy window)


def write_old(path, text: str, tick: int = 1) -> None:
    """Write `path` (its directories made) and date it in the past, `tick` seconds after
    OLD_NS: each edit its own modification time, none of them recent."""
    import os

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    stamp = OLD_NS + tick * 10**9
    os.utime(path, ns=(stamp, stamp))
