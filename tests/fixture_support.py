"""Reading inline expectations out of fixture files."""

from __future__ import annotations

import os

# The annotation syntax is the one kernlint.testing reads for local rules' fixtures.
from kernlint.testing import _SELECT, expectations  # noqa: F401

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "fixtures")


def selection(data: bytes, default: str) -> list[str]:
    m = _SELECT.search(data)
    return m.group(1).decode().split(",") if m else [default]


def fixture_files() -> list[tuple[str, str]]:
    """(rule name, path) for every fixture source under fixtures/<family>/<rule>/."""
    from kernlint.source import language_of

    out = []
    for family in sorted(os.listdir(FIXTURES)):
        fdir = os.path.join(FIXTURES, family)
        if not os.path.isdir(fdir) or family == "reference":
            continue
        for rule in sorted(os.listdir(fdir)):
            rdir = os.path.join(fdir, rule)
            if not os.path.isdir(rdir):
                continue
            for d, _, names in os.walk(rdir):
                for n in sorted(names):
                    if language_of(n) is not None:
                        out.append((rule, os.path.join(d, n)))
    return out
