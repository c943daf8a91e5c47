"""Reading inline expectations out of fixture files."""

from __future__ import annotations

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "fixtures")

_EXPECT = re.compile(
    rb"kernlint-expect(-next-line)?:\s*([A-Z]+[0-9]+(?:@\d+)?(?:\s*,\s*[A-Z]+[0-9]+(?:@\d+)?)*)"
)
_SELECT = re.compile(rb"kernlint-fixture:\s*select=([A-Za-z0-9_,-]+)")


def expectations(data: bytes) -> list[tuple[int, str, int | None]]:
    """(line, code, column or None) for every annotation in a fixture."""
    out = []
    for row, line in enumerate(data.split(b"\n"), start=1):
        for m in _EXPECT.finditer(line):
            target = row + 1 if m.group(1) else row
            for item in m.group(2).decode().split(","):
                item = item.strip()
                code, _, col = item.partition("@")
                out.append((target, code, int(col) if col else None))
    return sorted(out, key=lambda t: (t[0], t[1], t[2] or 0))


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
