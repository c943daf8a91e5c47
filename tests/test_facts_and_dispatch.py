"""Shared facts and node dispatch, checked directly."""

from __future__ import annotations

import re

import pytest

from kernlint.config import ConfigResolver, Overrides
from kernlint.engine import lint_source
from kernlint.model import Rule
from kernlint.record import replace
from kernlint.registry import Registry, load_registry
from kernlint.source import SourceFile

CU = b"""#define Q_KERNEL __global__ __launch_bounds__(256, 16)
namespace sglang {
template <typename T>
__global__ void k1(T* __restrict__ p) {}
Q_KERNEL void k2(const float* __restrict__ p) {}
SGL_DEVICE float dev(float x) { return x; }
void host(int32_t n) { k1<<<1, 2, 0, stream>>>(ptr); }
}  // namespace sglang
"""


def _ctx_facts(data: bytes, language="cpp"):
    from kernlint.engine import Context

    src = SourceFile("x.cuh" if language == "cpp" else "x.py", data, language)
    return Context(src, None, True).facts


def test_cpp_functions_kernels_and_launch_sites():
    facts = _ctx_facts(CU)
    by_name = {f.name: f for f in facts.functions}
    assert by_name["k1"].is_kernel and by_name["k2"].is_kernel  # k2 via the Q_KERNEL macro
    assert by_name["dev"].qualifiers == {"device"}
    assert not by_name["host"].is_kernel
    assert [f.name for f in facts.kernels] == ["k1", "k2"]
    (launch,) = facts.launch_sites
    assert launch.start_point == (6, 23)
    assert [i.name for i in facts.items] == ["k1", "k2", "dev", "host"]
    assert all(i.namespace == ("sglang",) for i in facts.items)


def test_python_names_and_aiter_imports():
    facts = _ctx_facts(
        b"import aiter.ops as ao\nfrom functools import lru_cache as lc\nimport triton.testing\n"
        b"if x:\n    from aiter import y\n"
        b"def f():\n    import importlib\n    m = importlib.import_module('aiter.z')\n"
        b"    from .aiter_backend import B\n",
        language="python",
    )
    assert facts.names["ao"] == "aiter.ops"
    assert facts.names["lc"] == "functools.lru_cache"
    assert facts.names["triton"] == "triton"
    got = [(node.lineno, module) for node, module in facts.aiter_imports]
    assert got == [(1, "aiter.ops"), (5, "aiter"), (8, "aiter.z")]


def test_visit_dispatch_by_node_type_skips_error_regions(tmp_path):
    seen = []

    def visit(node, ctx):
        seen.append(ctx.text(node))
        ctx.report_node(node, "call")

    probe = Rule(
        code="CU900",
        name="probe-calls",
        language="cpp",
        summary="probe",
        node_types=("call_expression",),
        visit=visit,
        triggers=(b"(",),
    )
    base = load_registry()
    registry = Registry([*base.rules, probe])
    resolver = ConfigResolver(registry, Overrides(select=["CU900"]))
    settings = resolver.for_directory(str(tmp_path))
    data = b"void f() { g(1); h(2); }\nvoid broken( {{{ q(3) ]]]\n"
    src = SourceFile("a.cu", data, "cpp", abspath=str(tmp_path / "a.cu"))
    res = lint_source(src, settings, False, registry)
    assert seen[:2] == ["g(1)", "h(2)"]
    assert "q(3)" not in seen  # inside an ERROR region: never dispatched
    assert [(d.line, d.column, d.code) for d in res.diagnostics][:2] == [
        (1, 12, "CU900"),
        (1, 18, "CU900"),
    ]
    # a rule whose triggers are absent is not run at all
    quiet = replace(probe, triggers=(b"never-present",))
    registry2 = Registry([*base.rules, quiet])
    settings2 = ConfigResolver(registry2, Overrides(select=["CU900"])).for_directory(str(tmp_path))
    seen.clear()
    assert lint_source(src, settings2, False, registry2).diagnostics == []
    assert seen == []


TRICKY = b"""namespace sglang {
struct S {
  S() = default;
  S(const S&) = delete;
  int get() const { return v; }
  int v = 0;
};
void with_try(int32_t n) try { g(n); } catch (...) { h(); }
__global__ void k(const float* __restrict__ p) {
  struct Local { void m() { asm volatile("membar.gl;"); } };
  __asm__ __volatile__("griddepcontrol.wait;" ::: "memory");
  int table[] = {1, 2};
  if (p) { __asm("nop;"); }
  auto f = [](int x) { return x; };
}
void launch() { k<<<1, 2>>>(nullptr); k<<<3, 4, 0, s>>>(q); /* { asm <<< */ }
const char* s = "{ asm <<<";
}  // namespace sglang
"""


def test_node_lookups_match_a_walk_of_every_node():
    """Functions, inline asm and launches are found from one token each (`{`, `asm`, `<<<`);
    calls and ifs by a walk of the tree or of a subtree. All must list exactly what a walk of
    every node lists, in the same order, on tricky code and on every C++ fixture."""
    from pathlib import Path

    from kernlint.cpp.parser import nodes_of_types

    root = Path(__file__).resolve().parent.parent / "fixtures"
    files = [TRICKY] + [p.read_bytes() for p in sorted(root.rglob("*.cu*")) if p.is_file()]
    assert len(files) > 20
    counts = dict.fromkeys(_ctx_facts(b"").INDEXED_TYPES, 0)
    for data in files:
        facts = _ctx_facts(data)

        def walked(node, types):
            return [(n.type, n.start_byte, n.end_byte) for n in nodes_of_types(node, types)]

        for t in facts.INDEXED_TYPES:
            got = [(n.type, n.start_byte, n.end_byte) for n in facts.nodes(t)]
            assert got == walked(facts.root, (t,)), t
            counts[t] += len(got)
        for func in facts.nodes("function_definition"):
            both = ("call_expression", "if_statement", "gnu_asm_expression")
            got = [(n.type, n.start_byte, n.end_byte) for n in facts.nodes(*both, within=func)]
            assert got == walked(func, both)
    assert all(counts.values()), counts
    tricky = _ctx_facts(TRICKY)
    assert [f.name for f in tricky.functions] == [
        "S",
        "S",
        "get",
        "with_try",
        "k",
        "m",
        "launch",
    ]
    assert len(tricky.nodes("gnu_asm_expression")) == 3
    assert len(tricky.launch_sites) == 2


PY_TRICKY = b"""import os; import aiter
@decorator(
    arg)
def f(x):
    a = 1; b = 2
    if x:
        from aiter import ops
    elif y:
        pass
    else:
        m = importlib.import_module("aiter.z")
    try:
        import aiter.q as q
    except ImportError:
        q = None
    finally:
        done()
    match x:
        case 1:
            __import__("aiter")
    return (
        a)
class C:  # a comment
    y = 3
"""


def _innermost_statements(tree, line):
    """The definition: statements whose lines (decorators included) hold `line` and that hold
    no statement of their own blocks that does, in source order."""
    import ast

    def lines(stmt):
        start = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())])
        return start, stmt.end_lineno

    def own_statements(stmt):
        for node in ast.walk(stmt):
            if node is not stmt and isinstance(node, ast.stmt):
                yield node

    hits = [n for n in ast.walk(tree) if isinstance(n, ast.stmt)]
    hits = [n for n in hits if lines(n)[0] <= line <= lines(n)[1]]
    inner = [
        n for n in hits if not any(lines(c)[0] <= line <= lines(c)[1] for c in own_statements(n))
    ]
    return sorted(inner, key=lambda n: (n.lineno, n.col_offset))


def test_statements_at_line_and_import_lookups_match_their_definitions():
    """`statements_at_line` (a binary search per block) gives the statements of the definition on
    every line; imports found from their lines are those of a walk of the whole tree, including
    a second statement on a line (`import os; import aiter`, missed before)."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "fixtures"
    files = [PY_TRICKY] + [p.read_bytes() for p in sorted(root.rglob("*.py")) if p.is_file()]
    assert len(files) > 10
    checked = 0
    for data in files:
        facts = _ctx_facts(data, language="python")
        if facts.tree is None:
            continue
        for line in range(1, data.count(b"\n") + 2):
            got = facts.guards.statements_at_line(line)
            assert list(map(id, got)) == list(map(id, _innermost_statements(facts.tree, line)))
            checked += 1
        # Every import statement holds the word `import` on one of its lines.
        every = [n for n in ast.walk(facts.tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
        found = facts.nodes_on_lines(re.compile(rb"import"), (ast.Import, ast.ImportFrom))
        assert sorted(map(id, every)) == sorted(map(id, found))
    assert checked > 500
    tricky = _ctx_facts(PY_TRICKY, language="python")
    assert [n.names[0].name for n in tricky.guards.statements_at_line(1)] == ["os", "aiter"]
    (decorated,) = tricky.guards.statements_at_line(2)  # a decorator's line: its function
    assert isinstance(decorated, ast.FunctionDef)
    assert [n.lineno for n in tricky.guards.statements_at_line(5)] == [5, 5]
    assert tricky.guards.statements_at_line(22)[0].value.id == "a"  # inside `return (...)`
    got = [(node.lineno, module) for node, module in tricky.aiter_imports]
    assert got == [(1, "aiter"), (7, "aiter"), (11, "aiter.z"), (13, "aiter.q"), (20, "aiter")]


def test_line_text_at_an_offset_is_the_text_of_its_line():
    """`line_text_at(offset)` (used to show a finding's line) equals `line_text` of the line
    holding the offset, for every offset, with LF, CRLF, a lone CR, no final newline, an empty
    line at the end and non-UTF-8 bytes."""
    import random

    rng = random.Random(7)
    alphabet = [b"a", b"\n", b"\r\n", b"\r", b"\xe2\x80\x94", b"\xff", b" "]
    samples = [b"", b"\n", b"x", b"a\r\nb\r\n", b"a\n\n"] + [
        b"".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40))) for _ in range(300)
    ]
    for data in samples:
        src = SourceFile("x.cu", data, "cpp")
        for offset in range(len(data) + 1):
            assert src.line_text_at(offset) == src.line_text(src.line_index(offset)), (
                data,
                offset,
            )


def test_trigger_search_with_memmem_finds_what_substring_search_finds(monkeypatch):
    """The pool's trigger-word search (libc memmem) and the default (`in`) agree, on random
    bytes and on edge cases (empty data, a word at either end, NUL bytes)."""
    import random

    from kernlint import engine

    if not engine.use_memmem():
        pytest.skip("no memmem in this C library")
    words = frozenset((b"aiter", b"load_jit", b"a", b"kernlint:", b"\x00x"))
    rng = random.Random(3)
    samples = [b"", b"aiter", b"xx load_jit", b"kernlint", b"kernlint:", b"\x00x"] + [
        bytes(rng.choice(b"aiterlodjkn:_\x00x ") for _ in range(rng.randrange(0, 60)))
        for _ in range(2000)
    ]
    fast = [(engine._present(words, d), engine._has_directive(d)) for d in samples]
    monkeypatch.setattr(engine, "_MEMMEM", False)
    slow = [(engine._present(words, d), engine._has_directive(d)) for d in samples]
    assert fast == slow
    assert fast[1] == ({b"aiter", b"a"}, False) and fast[4][1] is True
