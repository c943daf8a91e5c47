"""Each preset on a small tree that exercises its conventions (tests/data/presets/<preset>/):
the findings of the whole tree under the tree's `kernlint.toml` (`preset = "..."`) equal the
files' `kernlint-expect:` annotations, file by file."""

from __future__ import annotations

import os

import pytest

from kernlint.config import PRESETS
from kernlint.runner import lint_paths
from kernlint.source import language_of
from kernlint.testing import expectations

TREES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "presets")


@pytest.mark.parametrize("preset", PRESETS)
def test_preset_tree(preset, monkeypatch):
    root = os.path.join(TREES, preset)
    with open(os.path.join(root, "kernlint.toml"), encoding="utf-8") as fh:
        assert fh.read().strip() == f'preset = "{preset}"'
    monkeypatch.chdir(root)
    results = lint_paths(["."], warn=lambda m: None)
    got: dict[str, list] = {}
    for res in results:
        for d in res.diagnostics:
            got.setdefault(os.path.normpath(res.path), []).append((d.line, d.code, d.column))
    want: dict[str, list] = {}
    for d, _, names in os.walk("."):
        for name in names:
            if language_of(name) is None:
                continue
            path = os.path.normpath(os.path.join(d, name))
            with open(path, "rb") as fh:
                found = expectations(fh.read())
            if found:
                want[path] = found
    assert set(got) == set(want), f"files with findings differ: {sorted(got)} vs {sorted(want)}"
    for path, rows in want.items():
        cols = {(line, code): col for line, code, col in rows}
        mine = sorted(
            (line, code, col if cols.get((line, code)) is not None else None)
            for line, code, col in got[path]
        )
        assert mine == sorted(rows, key=lambda t: (t[0], t[1], t[2] or 0)), path
