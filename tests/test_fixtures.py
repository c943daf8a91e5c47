"""Every fixture, checked strictly against its inline expectations (and its .fixed file)."""

from __future__ import annotations

import os

import pytest
from fixture_support import FIXTURES, expectations, fixture_files, selection

from kernlint.fixes import apply_fixes
from kernlint.registry import load_registry
from kernlint.runner import lint_paths

CASES = fixture_files()


def _lint(path, select):
    results = lint_paths([path], select=select, preview=True, warn=lambda m: None)
    assert len(results) == 1, f"{path}: expected one result, got {len(results)}"
    return results[0]


def _needs_nvcc(path) -> None:
    if os.path.relpath(path, FIXTURES).split(os.sep)[0] == "compile":
        from kernlint.compile.toolchain import find_tool

        if find_tool("nvcc") is None:
            pytest.skip("no nvcc (pip install 'kernlint[compile]'): compile fixtures not built")


@pytest.mark.parametrize("rule,path", CASES, ids=[os.path.relpath(p, FIXTURES) for _, p in CASES])
def test_fixture(rule, path):
    _needs_nvcc(path)
    registry = load_registry()
    assert registry.get(rule) is not None, f"fixture directory names unknown rule {rule}"
    with open(path, "rb") as fh:
        data = fh.read()
    select = selection(data, rule)
    result = _lint(path, select)
    got = sorted((d.line, d.code, d.column) for d in result.diagnostics)
    want = expectations(data)
    want_cols = {(line, code): col for line, code, col in want}
    # Compare with columns where the annotation gives one.
    got_cmp = sorted(
        (line, code, col if want_cols.get((line, code)) is not None else None)
        for line, code, col in got
    )
    rendered = "\n".join(f"  {d.line}:{d.column} {d.code} {d.message}" for d in result.diagnostics)
    assert got_cmp == want, f"findings differ from annotations in {path}:\n{rendered}"


FIXED = [(r, p) for r, p in CASES if os.path.exists(p + ".fixed")]


@pytest.mark.parametrize("rule,path", FIXED, ids=[os.path.relpath(p, FIXTURES) for _, p in FIXED])
def test_fixture_fixed(rule, path):
    with open(path, "rb") as fh:
        data = fh.read()
    result = _lint(path, selection(data, rule))
    new, fixed, _ = apply_fixes(data, result.diagnostics, unsafe=False)
    with open(path + ".fixed", "rb") as fh:
        want = fh.read()
    assert fixed, f"{path}: no fix applied"
    assert new == want
    # Idempotent: fixing the fixed text changes nothing more.
    assert apply_fixes(new, [], unsafe=False)[0] == new


UNSAFE_FIXED = [(r, p) for r, p in CASES if os.path.exists(p + ".unsafe-fixed")]


@pytest.mark.parametrize(
    "rule,path", UNSAFE_FIXED, ids=[os.path.relpath(p, FIXTURES) for _, p in UNSAFE_FIXED]
)
def test_fixture_unsafe_fixed(rule, path, tmp_path):
    """`--unsafe-fixes` output equals `<fixture>.unsafe-fixed`; safe fixes alone leave it be."""
    with open(path, "rb") as fh:
        data = fh.read()
    select = selection(data, rule)
    result = _lint(path, select)
    safe_only, _, _ = apply_fixes(data, result.diagnostics, unsafe=False)
    new, fixed, _ = apply_fixes(data, result.diagnostics, unsafe=True)
    with open(path + ".unsafe-fixed", "rb") as fh:
        want = fh.read()
    assert fixed, f"{path}: no fix applied"
    assert safe_only != new, "unsafe fixes must not be applied without --unsafe-fixes"
    assert new == want
    # Re-linting the fixed text finds nothing fixable any more.
    copy = tmp_path / os.path.basename(path)
    copy.write_bytes(new)
    (tmp_path / "kernlint.toml").write_text('jit-roots = ["**"]\n')
    again = _lint(str(copy), select)
    assert not [d for d in again.diagnostics if d.fix is not None]


def test_every_rule_has_fixtures():
    registry = load_registry()
    covered = {rule for rule, _ in CASES}
    missing = [r.name for r in registry.rules if r.name not in covered]
    assert not missing, f"rules without fixtures: {missing}"
