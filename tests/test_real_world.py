"""Calibration on real code nobody here wrote: the SGLang 0.5.23 JIT tree (network; skipped offline)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from kernlint.cpp.normalize import normalize
from kernlint.cpp.parser import error_nodes, parse
from kernlint.runner import lint_paths
from kernlint.source import language_of

pytestmark = pytest.mark.network


@pytest.fixture(scope="module")
def jit_tree(sglang_package):
    return os.path.join(sglang_package, "kernels", "jit")


def _cpp_files(jit):
    out = []
    for sub in ("csrc", "include"):
        for d, _, names in os.walk(os.path.join(jit, sub)):
            out += [os.path.join(d, n) for n in names if language_of(n) == "cpp"]
    return sorted(out)


def test_parse_error_rate_at_most_5_percent(jit_tree):
    files = _cpp_files(jit_tree)
    assert len(files) > 250
    bad = 0
    for path in files:
        with open(path, "rb") as fh:
            data = fh.read()
        norm = normalize(data)
        assert len(norm.data) == len(data)
        assert [i for i, b in enumerate(data) if b == 10] == [
            i for i, b in enumerate(norm.data) if b == 10
        ]
        bad += bool(error_nodes(parse(norm.data).root_node))
    assert bad / len(files) <= 0.05, f"{bad} of {len(files)} files have ERROR nodes"


# The ecosystem corpora (`python scripts/ecosystem.py prepare`), where they are laid out: every
# C/C++ file of each (FlashInfer's include/ only: its 2,982 csrc files take a minute to parse).
_ECOSYSTEM_PARSE = [
    ("sglang-snapshot", ""),
    ("sglang-0.5.23", ""),
    ("sglang-0.5.15", ""),
    ("flashinfer-0.7.2.post1", "include"),
]


@pytest.mark.parametrize("corpus, sub", _ECOSYSTEM_PARSE, ids=[c for c, _ in _ECOSYSTEM_PARSE])
def test_ecosystem_corpora_parse_rate_at_most_5_percent(corpus, sub):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "scripts"))
    import ecosystem

    directory = os.environ.get("KERNLINT_ECOSYSTEM_DIR", ecosystem.DEFAULT_DIR)
    root = os.path.join(ecosystem.corpus_root(directory, corpus), sub)
    if not os.path.exists(os.path.join(directory, corpus, ".complete")):
        pytest.skip(f"{corpus} is not prepared under {directory} (scripts/ecosystem.py prepare)")
    files = [
        os.path.join(d, n)
        for d, _, names in os.walk(root)
        for n in names
        if language_of(n) == "cpp"
    ]
    assert len(files) > 150
    bad = []
    for path in files:
        with open(path, "rb") as fh:
            data = fh.read()
        if error_nodes(parse(normalize(data).data).root_node):
            bad.append(os.path.relpath(path, root))
    assert len(bad) / len(files) <= 0.05, f"{len(bad)} of {len(files)} files: {sorted(bad)}"


def test_non_ascii_reports_exactly_the_files_with_non_ascii_bytes(jit_tree):
    """... among the JIT sources: the files under the default jit-roots (vendored directories
    are outside) that are not torch extensions or marked copies (kernlint.jitscope)."""
    from kernlint import jitscope
    from kernlint.config import ConfigResolver, Overrides
    from kernlint.registry import load_registry

    resolver = ConfigResolver(load_registry(), Overrides())
    files = _cpp_files(jit_tree)
    expected, not_jit = set(), set()
    for path in files:
        with open(path, "rb") as fh:
            data = fh.read()
        if not data.isascii():
            settings = resolver.for_file(os.path.abspath(path))
            jit = settings.is_jit(os.path.abspath(path)) and not jitscope.exempt_reason(data)
            (expected if jit else not_jit).add(os.path.realpath(path))
    assert 0 < len(not_jit) < len(expected)
    results = lint_paths(
        [os.path.join(jit_tree, "csrc"), os.path.join(jit_tree, "include")],
        select=["non-ascii-character"],
        warn=lambda m: None,
    )
    reported = {os.path.realpath(r.abspath) for r in results if r.diagnostics}
    assert reported == expected
    assert len(expected) > 0


def test_whole_tree_runs_clean_of_crashes(jit_tree):
    root = os.path.dirname(os.path.dirname(jit_tree))
    p = subprocess.run(
        [sys.executable, "-m", "kernlint", "check", root, "-q", "--statistics"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode in (0, 1), p.stderr
    assert "Traceback" not in p.stderr


def test_namespace_rule_skips_code_inside_sglang(jit_tree):
    results = lint_paths(
        [os.path.join(jit_tree, "csrc")],
        select=["code-outside-sglang-namespace"],
        warn=lambda m: None,
    )
    for res in results:
        data = res.source.data if res.source else b""
        for d in res.diagnostics:
            # every reported line is outside any `namespace sglang` block by a simple
            # brace-depth recount of the original text
            before = data[: d.start]
            assert b"namespace sglang" not in before or _outside(before), (d.path, d.line)


def _outside(before: bytes) -> bool:
    """Rough independent check: is the text after `before` outside every sglang block?"""
    import re

    depth = 0
    sglang_depths = []
    for m in re.finditer(rb"namespace\s+sglang(?:::\w+)*\s*\{|\{|\}", before):
        tok = m.group()
        if tok.startswith(b"namespace"):
            depth += 1
            sglang_depths.append(depth)
        elif tok == b"{":
            depth += 1
        else:
            if sglang_depths and sglang_depths[-1] == depth:
                sglang_depths.pop()
            depth -= 1
    return not sglang_depths


@pytest.fixture(scope="module")
def py_results(sglang_package):
    results = lint_paths(
        [sglang_package], select=["PY001", "PY002", "PY005"], preview=False, warn=lambda m: None
    )
    return [d for r in results for d in r.diagnostics]


def test_python_findings_sit_on_what_they_name(py_results, sglang_package):
    """Every PY001 finding is on an aiter import line; every PY005 on a functools decorator."""
    assert py_results, "expected findings on the real tree"
    for d in py_results:
        with open(d.path, encoding="utf-8") as fh:
            line = fh.read().split("\n")[d.line - 1]
        if d.code == "PY001":
            assert "aiter" in line and ("import" in line or "__import__" in line), (d, line)
        elif d.code == "PY005":
            assert line.lstrip().startswith("@") and "cache" in line, (d, line)
    # The tree follows the flag convention: every SGLANG_USE_AITER flag is and-ed with HIP.
    assert not [d for d in py_results if d.code == "PY002"]


def test_import_time_policy_only_reports_package_inits(tmp_path, sglang_package):
    from kernlint.project import collect_aiter_import_time

    paths = []
    for d, _, names in os.walk(sglang_package):
        paths += [os.path.join(d, n) for n in names if n.endswith(".py")]
    findings = collect_aiter_import_time(paths)
    assert findings, "the flydsl package __init__ files import aiter at import time"
    for path, items in findings.items():
        for lineno, _col, _el, _ec, message in items:
            with open(path, encoding="utf-8") as fh:
                line = fh.read().split("\n")[lineno - 1]
            assert "import" in line, (path, lineno, line)
            if os.path.basename(path) == "__init__.py":
                assert "aiter" in line
            else:
                assert "-> aiter" in message
