"""Property tests (hypothesis) for the invariants kernlint promises on any input.

- Linting never raises, whatever the bytes, for each language, inside or outside the JIT roots.
- Every output format stays valid for any file name: JSON and SARIF parse (SARIF against the
  2.1.0 schema), JUnit is well-formed XML, GitHub annotations are one command per line, text is
  encodable and carries no raw control characters.
- `--fix` converges (re-applied until no fix remains, at most 5 rounds) and is then idempotent;
  a fix changes no byte outside its edits; fixed Python still parses and fixed C++ has no more
  tree-sitter ERROR nodes than before.

The number of examples is bounded for CI (`KERNLINT_HYPOTHESIS_EXAMPLES` raises it); the longer
campaign is `scripts/fuzz.py`.
"""

from __future__ import annotations

import ast
import io
import json
import os
import sys
from xml.etree import ElementTree as ET

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernlint.config import ConfigResolver, Overrides
from kernlint.engine import lint_source
from kernlint.fixes import apply_fixes
from kernlint.registry import load_registry
from kernlint.source import SourceFile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "fixtures")
EXAMPLES = int(os.environ.get("KERNLINT_HYPOTHESIS_EXAMPLES", "60"))
PROFILE = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    derandomize=os.environ.get("CI") is not None,  # CI runs the same examples every time
)

REGISTRY = load_registry()
_SETTINGS = ConfigResolver(REGISTRY, Overrides(select=["ALL"], preview=True)).for_directory(
    FIXTURES
)


def _seed_files(suffixes) -> list[bytes]:
    out = []
    for d, _, names in os.walk(FIXTURES):
        for n in sorted(names):
            if n.endswith(suffixes):
                with open(os.path.join(d, n), "rb") as fh:
                    out.append(fh.read())
    return out


CPP_SEEDS = _seed_files((".cu", ".cuh", ".h", ".cc", ".cpp"))
PY_SEEDS = _seed_files((".py",))
# Fragments that stress the lexer, the normalizer and the parsers when spliced into real code.
FRAGMENTS = [
    b"\n",
    b"\r\n",
    b"\r",
    b"{",
    b"}",
    b"(",
    b")",
    b"[",
    b'"',
    b"'",
    b"/*",
    b"*/",
    b"//",
    b"\\\n",
    b'R"x(',
    b"#if 0\n",
    b"#else\n",
    b"#endif\n",
    b"#ifndef USE_ROCM\n",
    b"#define M(x) x\n",
    b"__global__ ",
    b"const ",
    b"__restrict__ ",
    b"<<<1, 1>>>",
    b"template <typename T>",
    b"1'0'0",
    b"\xc3\xa9",
    b"\xe2\x80\x98",
    b"\xff",
    b"\xef\xbb\xbf",
    b"\t",
    b'"""',
    b"'''",
    b"if _is_hip:\n    import aiter\n",
    b"# kernlint: ignore[CU001]\n",
    b"// kernlint: ignore-next-line[ALL]\n",
    b"@lru_cache\n",
    b"load_jit(",
    b"cuda_wrappers=[(",
    b"register_cuda_ci(",
    b"    ",
    b"\x00",
]


@st.composite
def mutated(draw, seeds):
    """A real fixture file with a few splices, deletions, truncations or byte flips."""
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["insert", "delete", "flip", "truncate", "duplicate"]))
        at = draw(st.integers(0, len(data)))
        if kind == "insert":
            data[at:at] = draw(st.sampled_from(FRAGMENTS)) * draw(st.integers(1, 3))
        elif kind == "delete":
            del data[at : at + draw(st.integers(1, 40))]
        elif kind == "flip" and data:
            i = min(at, len(data) - 1)
            data[i] = draw(st.integers(0, 255))
        elif kind == "truncate":
            del data[at:]
        elif kind == "duplicate":
            data[at:at] = data[at : at + draw(st.integers(1, 200))]
    return bytes(data)


def _lint(data: bytes, language: str, is_jit: bool, name: str = "") -> list:
    name = name or ("k.cuh" if language == "cpp" else "m.py")
    path = os.path.join(FIXTURES, name)
    source = SourceFile(name, data, language, abspath=path)
    return lint_source(source, _SETTINGS, is_jit, REGISTRY).diagnostics


def _check_diagnostics(diags, data: bytes) -> None:
    for d in diags:
        assert d.line >= 1 and d.column >= 1, d
        assert 0 <= d.start <= d.end <= len(data), d
        if d.fix is not None:
            assert d.fix.applicability in ("safe", "unsafe")
            for e in d.fix.edits:
                assert 0 <= e.start <= e.end <= len(data), (d, e)


@PROFILE
@given(
    data=st.one_of(st.binary(max_size=3000), mutated(CPP_SEEDS)),
    is_jit=st.booleans(),
)
def test_cpp_lint_never_raises(data, is_jit):
    _check_diagnostics(_lint(data, "cpp", is_jit), data)


@PROFILE
@given(data=st.one_of(st.binary(max_size=3000), mutated(PY_SEEDS)), is_jit=st.booleans())
def test_python_lint_never_raises(data, is_jit):
    _check_diagnostics(_lint(data, "python", is_jit, "benchmark/bench_x.py"), data)


# -- fixes ----------------------------------------------------------------------------------


def _error_nodes(data: bytes) -> int:
    from kernlint.cpp.normalize import normalize
    from kernlint.cpp.parser import error_nodes, parse

    return len(error_nodes(parse(normalize(data).data).root_node))


def _parses(data: bytes) -> bool:
    try:
        ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _fix_rounds(data: bytes, language: str) -> tuple[bytes, int]:
    """Apply every fix (safe and unsafe) until none remains; (final bytes, rounds used)."""
    for rounds in range(1, 6):
        diags = _lint(data, language, True)
        new, fixed, _ = apply_fixes(data, diags, unsafe=True)
        _only_edits_changed(data, new, fixed)
        if not fixed or new == data:
            return data, rounds
        data = new
    return data, 6


def _only_edits_changed(old: bytes, new: bytes, fixed) -> None:
    """`new` is `old` with exactly the applied fixes' edits: no other byte moved."""
    edits = sorted((e for d in fixed for e in d.fix.edits), key=lambda e: e.start)
    expected, pos = bytearray(), 0
    for e in edits:
        assert e.start >= pos, "overlapping edits were applied"
        expected += old[pos : e.start] + e.content.encode("utf-8")
        pos = e.end
    expected += old[pos:]
    assert bytes(expected) == new


FIXABLE_CPP = [s for s in CPP_SEEDS if any(d.fix for d in _lint(s, "cpp", True))] or pytest.skip(
    "no fixable C++ fixture", allow_module_level=True
)
FIXABLE_PY = [s for s in PY_SEEDS if any(d.fix for d in _lint(s, "python", True))]


@PROFILE
@given(data=mutated(FIXABLE_CPP))
def test_cpp_fixes_converge_and_keep_the_parse(data):
    fixed, rounds = _fix_rounds(data, "cpp")
    assert rounds <= 5, "fixes did not converge in 5 rounds"
    again, _, _ = apply_fixes(fixed, _lint(fixed, "cpp", True), unsafe=True)
    assert again == fixed, "a second --fix changed the file"
    if fixed != data:
        assert _error_nodes(fixed) <= _error_nodes(data)


@PROFILE
@given(data=mutated(FIXABLE_PY))
def test_python_fixes_converge_and_still_parse(data):
    fixed, rounds = _fix_rounds(data, "python")
    assert rounds <= 5, "fixes did not converge in 5 rounds"
    again, _, _ = apply_fixes(fixed, _lint(fixed, "python", True), unsafe=True)
    assert again == fixed, "a second --fix changed the file"
    if fixed != data and _parses(data):
        assert _parses(fixed)


# -- output formats for any file name ---------------------------------------------------------

# A finding in each language (CU001 non-ascii-character, PY005 lru-cache-on-jit-module).
_CPP_BODY = b"// caf\xc3\xa9\nint x;\n"
name_bytes = st.binary(min_size=1, max_size=40).filter(
    lambda b: b"/" not in b and b"\0" not in b and b not in (b".", b"..")
)


def _run_cli(args) -> tuple[int, bytes, str]:
    from kernlint.cli import main

    out, err = io.BytesIO(), io.StringIO()
    wrapper = io.TextIOWrapper(out, encoding="utf-8", errors="strict", write_through=True)
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = wrapper, err
    try:
        code = main(args)
        wrapper.flush()
    finally:
        sys.stdout, sys.stderr = saved
    return code, out.getvalue(), err.getvalue()


def _has_raw_control(text: str) -> bool:
    return any(ord(c) < 0x20 and c not in "\n\t" or ord(c) == 0x7F for c in text)


_SCHEMA = None


def _sarif_schema():
    global _SCHEMA
    if _SCHEMA is None:
        with open(os.path.join(ROOT, "tests", "data", "sarif-schema-2.1.0.json")) as fh:
            _SCHEMA = json.load(fh)
    return _SCHEMA


@settings(
    max_examples=max(10, EXAMPLES // 3),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    derandomize=os.environ.get("CI") is not None,
)
@given(stem=name_bytes)
def test_outputs_valid_for_any_file_name(stem, tmp_path_factory):
    import jsonschema

    directory = tmp_path_factory.mktemp("names")
    (directory / "kernlint.toml").write_text('jit-roots = ["**"]\n')  # (CU001 is JIT-scoped)
    name = stem + b".cu"
    path = os.path.join(os.fsencode(directory), name)
    try:
        with open(path, "wb") as fh:
            fh.write(_CPP_BODY)
    except OSError:
        return  # a name this file system refuses (too long): nothing to lint
    target = os.fsdecode(path)
    base = ["check", "--no-cache", "--select", "CU001"]
    for fmt in ("text", "json", "github", "sarif", "junit"):
        code, out, err = _run_cli([*base, "--output-format", fmt, target])
        assert "Traceback" not in err
        assert code == 1, (fmt, err)
        text = out.decode("utf-8")  # strict: the report is valid UTF-8
        if fmt == "json":
            rows = json.loads(text)
            assert [r["code"] for r in rows] == ["CU001"]
        elif fmt == "sarif":
            doc = json.loads(text)
            jsonschema.validate(doc, _sarif_schema())
            uri = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"][
                "artifactLocation"
            ]["uri"]
            assert all(33 <= ord(c) < 127 for c in uri), uri  # percent-encoded, no spaces
        elif fmt == "junit":
            root = ET.fromstring(out)
            assert root.get("failures") == "1"
        elif fmt == "github":
            lines = text.splitlines()
            assert len(lines) == 1 and lines[0].startswith("::error ")
            assert not _has_raw_control(text)
        else:
            assert not _has_raw_control(text)
