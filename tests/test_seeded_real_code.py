"""Seeded checks on real kernels: break a convention in SGLang's own code, the finding must
appear exactly there and nothing else may change (network: the wheel is downloaded at test time).
"""

from __future__ import annotations

import os
from collections import Counter

import pytest

from kernlint.cpp.facts import CppFacts
from kernlint.cpp.normalize import normalize
from kernlint.cpp.params import parameters
from kernlint.cpp.parser import nodes_of_types, parse
from kernlint.jitscope import generated_reason
from kernlint.runner import lint_paths

pytestmark = pytest.mark.network

PER_FILE = 2
MAX_SEEDS = 40


@pytest.fixture(scope="module")
def csrc_files(sglang_package):
    root = os.path.join(sglang_package, "kernels", "jit", "csrc")
    out = []
    for d, _, names in os.walk(root):
        out += [os.path.join(d, n) for n in names if n.endswith((".cuh", ".cu", ".h"))]
    return sorted(out)


class Linter:
    def __init__(self, tmp_path):
        self.dir = tmp_path
        (tmp_path / "kernlint.toml").write_text('jit-roots = ["**"]\n')
        self.path = tmp_path / "seed.cuh"

    def findings(self, data: bytes, code: str) -> list[tuple[int, int, str]]:
        self.path.write_bytes(data)
        (result,) = lint_paths([str(self.path)], select=[code], preview=True, warn=lambda m: None)
        return sorted((d.line, d.column, d.code) for d in result.diagnostics)


def _facts(data: bytes) -> CppFacts:
    n = normalize(data)
    return CppFacts(parse(n.data), n, data)


def _line_col(data: bytes, offset: int) -> tuple[int, int]:
    line = data.count(b"\n", 0, offset) + 1
    col = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return line, col


def _shifted(findings, line, after_col, delta):
    """Findings after an edit that changed the length of `line` at `after_col` by `delta`."""
    return sorted(
        (ln, c + delta if ln == line and c > after_col else c, k) for ln, c, k in findings
    )


def _mutate(data, start, end, replacement):
    return data[:start] + replacement + data[end:]


def _seeds(files, pick):
    """(path, data, start, end, replacement, param_start) for up to MAX_SEEDS mutations."""
    seeds = []
    for path in files:
        with open(path, "rb") as fh:
            data = fh.read()
        if generated_reason(data, os.path.basename(path)) is not None:
            continue  # (a generated file: no rule checks it)
        found = 0
        for seed in pick(data):
            seeds.append((path, data, *seed))
            found += 1
            if found >= PER_FILE:
                break
        if len(seeds) >= MAX_SEEDS:
            break
    return seeds


def _restrict_seeds(data):
    if b"__restrict__" not in data or b"__global__" not in data:
        return
    from kernlint.cpp.aliasing import never_dereferenced

    for kernel in _facts(data).kernels:
        body = kernel.node.child_by_field_name("body")
        for p in parameters(kernel.node):
            if p.pointer_depth != 1 or not p.restrict or p.own_pointer is None:
                continue
            if never_dereferenced(body, p.name):
                continue  # (read only through asm or address arithmetic: not reported by design)
            for q in p.own_pointer.children:
                if q.text == b"__restrict__":
                    end = q.end_byte + (1 if data[q.end_byte : q.end_byte + 1] == b" " else 0)
                    yield q.start_byte, end, b"", p.node.start_byte


def _ffi_seeds(data):
    if b"TensorView" not in data:
        return
    facts = _facts(data)
    called = {
        c.child_by_field_name("function").text.split(b"<")[0].split(b"::")[-1].decode()
        for c in nodes_of_types(facts.root, ("call_expression",))
        if c.child_by_field_name("function") is not None
    }
    for func in facts.functions:
        # Entry points only: a TensorView helper called from this file is not the boundary.
        if func.is_kernel or "device" in func.qualifiers or func.name.split("::")[-1] in called:
            continue
        params = parameters(func.node)
        if not any("TensorView" in p.type_text for p in params):
            continue
        for p in params:
            if p.type_text == "int64_t" and p.pointer_depth == 0 and not p.is_reference:
                t = p.type_node
                yield t.start_byte, t.end_byte, b"long", p.node.start_byte


def _const_seeds(data):
    if b"__global__" not in data:
        return
    for kernel in _facts(data).kernels:
        for p in parameters(kernel.node):
            text = p.node.text
            if p.pointer_depth == 1 and p.pointee_const and text.startswith(b"const "):
                start = p.node.start_byte
                yield start, start + len(b"const "), b"", start


def _run(seeds, linter, code):
    """For each seed: (new findings beyond the shifted old ones, expected location)."""
    outcomes = []
    for path, data, start, end, replacement, param_start in seeds:
        before = linter.findings(data, code)
        mutated = _mutate(data, start, end, replacement)
        after = linter.findings(mutated, code)
        line, col = _line_col(data, start)
        delta = len(replacement) - (end - start)
        expected_old = _shifted(before, line, col, delta)
        p_line, p_col = _line_col(mutated, param_start if param_start < start else param_start)
        extra = Counter(after) - Counter(expected_old)
        missing = Counter(expected_old) - Counter(after)
        outcomes.append((path, (p_line, p_col, code), sorted(extra), sorted(missing)))
    return outcomes


def test_removing_restrict_is_reported_exactly_there(csrc_files, tmp_path):
    seeds = _seeds(csrc_files, _restrict_seeds)
    assert len(seeds) >= 20
    for path, where, extra, missing in _run(seeds, Linter(tmp_path), "CU003"):
        assert extra == [where], f"{path}: expected exactly {where}, got extra {extra}"
        assert not missing, f"{path}: findings disappeared: {missing}"


def test_long_at_the_ffi_boundary_is_reported_exactly_there(csrc_files, tmp_path):
    seeds = _seeds(csrc_files, _ffi_seeds)
    assert len(seeds) >= 20
    for path, where, extra, missing in _run(seeds, Linter(tmp_path), "CU005"):
        assert extra == [where], f"{path}: expected exactly {where}, got extra {extra}"
        assert not missing, f"{path}: findings disappeared: {missing}"


def test_removing_const_is_reported_there_or_not_at_all(csrc_files, tmp_path):
    """Dropping `const` from a real read-only input: reported on that parameter, or (when the
    analysis cannot prove the kernel never writes through it) not at all; nothing else moves."""
    seeds = _seeds(csrc_files, _const_seeds)
    assert len(seeds) >= 20
    reported = 0
    for path, where, extra, missing in _run(seeds, Linter(tmp_path), "CU004"):
        assert extra in ([], [where]), f"{path}: expected {where} or nothing, got {extra}"
        assert not missing, f"{path}: findings disappeared: {missing}"
        reported += extra == [where]
    # Most real read-only inputs are plain reads the analysis proves.
    assert reported >= len(seeds) // 2, f"only {reported}/{len(seeds)} seeded const removals found"
