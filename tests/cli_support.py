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
