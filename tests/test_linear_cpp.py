"""C++/CUDA inputs that are legal but extreme (nesting thousands deep, very long lines, a file of
megabytes, unbalanced text at scale): each completes without a traceback and with the findings
the same code has at an ordinary size. The fast paths that make the work linear (the tree
`Seeker`, the lexer's number runs, normalization's line scans, column checkpoints) are checked
against the plain computations they replace. (Speed is measured by bench/growth.py; the
timeouts here only catch a hang.)"""

from __future__ import annotations

import glob
import json
import os
import random
import re

import pytest
from cli_support import run

from kernlint.cpp import lexer, normalize
from kernlint.cpp.facts import CppFacts, node_name
from kernlint.cpp.parser import Seeker, nodes_of_types, parse
from kernlint.source import SourceFile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "fixtures", "cpp")
ALL = ("check", "--no-cache", "--select", "ALL", "--preview", "--output-format", "json")
JIT = {"kernlint.toml": b'jit-roots = ["**"]\n'}  # every file checked is a JIT source
HEAD = b"namespace sglang {\n__global__ void k(float* out, float* a, int n) {\n"
TAIL = b"\n}\n}  // namespace sglang\n"


def _check(tmp_path, files: dict[str, bytes]):
    """Write the files (and a config making them JIT sources), run `kernlint check` on the
    directory; (findings, stderr)."""
    for name, data in {**files, **JIT}.items():
        (tmp_path / name).write_bytes(data)
    p = run(*ALL, ".", cwd=str(tmp_path), timeout=300)
    assert "Traceback" not in p.stderr, p.stderr[-2000:]
    assert p.returncode in (0, 1), (p.returncode, p.stderr[-2000:])
    assert "too deeply nested" not in p.stderr, p.stderr[-2000:]
    return json.loads(p.stdout), p.stderr


def _codes(findings) -> list[str]:
    return sorted(f["code"] for f in findings)


def _read_only(findings) -> list[str]:
    """The parameters CU004 reports (never written through)."""
    return sorted(
        re.search(r"through `(\w+)`", f["message"]).group(1)
        for f in findings
        if f["code"] == "CU004"
    )


# -- nesting ------------------------------------------------------------------------------------
def test_nested_if_blocks(tmp_path):
    n = 1500
    body = b"".join(b"if (n > %d) { out[%d] = a[%d];\n" % (i, i, i) for i in range(n))
    findings, _ = _check(tmp_path, {"k.cu": HEAD + body + b"}" * n + TAIL})
    assert _codes(findings) == ["CU003", "CU003", "CU004"]
    assert _read_only(findings) == ["a"]


@pytest.mark.parametrize(
    "body",
    [
        b"{" * 10_000 + b"out[n] = a[0];" + b"}" * 10_000,
        b"out[n] = " + b"(" * 10_000 + b"a[0]" + b")" * 10_000 + b";",
        b"out[n] = *(a" + b" + 1" * 10_000 + b");",
    ],
    ids=["braces", "parentheses", "pointer-sum"],
)
def test_a_use_10000_levels_deep(tmp_path, body):
    findings, _ = _check(tmp_path, {"k.cu": HEAD + body + TAIL})
    assert _codes(findings) == ["CU003", "CU003", "CU004"]
    assert _read_only(findings) == ["a"]


@pytest.mark.parametrize(
    "write",
    [
        b"a[0] = out[0];",
        b'asm volatile("st.global.f32 [%0], 1.0;" :: "l"(a));',
        b"atomicAdd(a, 1.0f);",
    ],
    ids=["store", "asm", "atomic"],
)
def test_a_write_10000_levels_deep_is_seen(tmp_path, write):
    body = b"{" * 10_000 + b"out[n] = 1.0f; " + write + b"}" * 10_000
    findings, _ = _check(tmp_path, {"k.cu": HEAD + body + TAIL})
    assert _read_only(findings) == []  # neither `out` nor `a` is read-only


def test_a_launch_10000_blocks_deep(tmp_path):
    n = 10_000
    data = (
        b"namespace sglang {\n__global__ void k(float* __restrict__ a) { a[0] = 1.0f; }\n"
        b"void launch(float* a) {\n" + b"{" * n + b"k<<<1, 1>>>(a);" + b"}" * n + b"\n}\n}\n"
    )
    findings, _ = _check(tmp_path, {"launch.cu": data})
    assert [f["code"] for f in findings] == ["CU006"]
    assert "raw launch of `k`" in findings[0]["message"]


def test_namespaces_and_if_blocks_5000_deep(tmp_path):
    n = 5000
    deep = b"namespace a {" * n + b"\nint f(int x) { return x; }\n" + b"}" * n + b"\n"
    ifs = b"#if A\n" * n + b"int g(int x) { return x; }\n" + b"#endif\n" * n
    findings, _ = _check(tmp_path, {"ns.cu": deep, "if.cu": ifs})
    by_file = {os.path.basename(f["path"]): f for f in findings}
    assert _codes(findings) == ["CU002", "CU002"]
    assert f"namespace `{'::'.join(['a'] * n)}`" in by_file["ns.cu"]["message"]
    assert "function `g` is in the global namespace" in by_file["if.cu"]["message"]


# -- long lines, and text normalization rewrites ------------------------------------------------
def test_a_64_kb_line_of_digit_separators(tmp_path):
    number = b"1" + b"'0" * 32_768
    data = "// caf\u00e9 \u2014 x\n".encode() + b"int x = " + number + b";\nchar c = 'q';\n"
    findings, _ = _check(tmp_path, {"d.cu": data})
    assert sorted((f["line"], f["code"]) for f in findings if f["code"] == "CU001") == [
        (1, "CU001"),
        (1, "CU001"),
    ]
    spans = [(s.kind, s.start, s.end) for s in lexer.literal_spans(data)]
    quote = data.rindex(b"'q'")
    assert spans == [("comment", 0, data.index(b"\n")), ("char", quote, quote + 3)]


def test_long_lines_normalization_rewrites(tmp_path):
    """A kernel declared through a `#define` whose line holds 64 KB of blanks, next to lines
    normalization reads: a word of 10,000 `UNROLL`s, macro calls nested 7,000 deep; and in
    another file, `using a, b` lines with no `;` after, 7,000 `__launch_bounds__(` never
    closed."""
    size = 64 * 1024
    kernel = b"".join(
        [
            b"#define MY_KERNEL __global__" + b" " * size + b"// the kernel attribute\n",
            b"void g() {\nX" + b"UNROLL" * 10_000 + b"(\n);\n}\n",
            b"void f() {\n" + b"FOO_BAR(\n" * 7000 + b")" * 7000 + b"\n}\n",
            b"namespace sglang {\nMY_KERNEL void k(float* out, const float* in) { out[threadIdx.x] = in[threadIdx.x]; }\n}\n",
        ]
    )
    other = b"using a::b, c;\n" + b"using a, b\n" * 6000 + b"__launch_bounds__(" * 7000
    findings, _ = _check(tmp_path, {"m.cu": kernel, "n.cu": other})
    assert [f["message"] for f in findings if f["code"] == "CU003"] == [
        "pointer parameter `out` of kernel `k` is not `__restrict__`: declare it "
        "`float* __restrict__` (when it aliases no other pointer)",
        "pointer parameter `in` of kernel `k` is not `__restrict__`: declare it "
        "`const float* __restrict__` (when it aliases no other pointer)",
    ]


@pytest.mark.parametrize(
    "tail",
    [
        b'{ ( "x\n#if X\n/* c\nR"y( r\n\'q\n' * 12_000,  # unbalanced everything
        b"/* " + b"int y;\n" * 40_000,  # an unterminated comment
        b'const char* s = R"x(' + b"abc\n" * 70_000,  # an unterminated raw string
    ],
    ids=["unbalanced", "comment", "raw-string"],
)
def test_unbalanced_text_at_scale_after_a_kernel(tmp_path, tail):
    kernel = b"namespace sglang {\n__global__ void k(float* out, const float* in) { out[threadIdx.x] = in[threadIdx.x]; }\n}\n"
    findings, _ = _check(tmp_path, {"u.cu": kernel + tail})
    assert any(
        f["message"].startswith("pointer parameter `out` of kernel `k` is not `__restrict__`: ")
        for f in findings
    )


# -- a file of megabytes --------------------------------------------------------------------------
def _fixture_units() -> list[tuple[str, bytes, re.Pattern | None]]:
    """The C++ fixtures' bad files, with a pattern of the names they define."""
    out = []
    for path in sorted(glob.glob(os.path.join(FIXTURES, "*", "bad.cu*"))):
        if path.endswith("fixed"):
            continue
        with open(path, "rb") as fh:
            data = fh.read()
        kinds = ("function_definition", "struct_specifier", "class_specifier")
        root = parse(normalize.normalize(data).data).root_node
        names = {node_name(n).split("::")[-1] for n in nodes_of_types(root, kinds)}
        names = sorted((x for x in names if re.fullmatch(r"[A-Za-z_]\w*", x)), key=len)
        words = b"|".join(re.escape(x.encode()) for x in reversed(names))
        out.append((path, data, re.compile(rb"\b(" + words + rb")\b") if names else None))
    return out


def _alone(tmp_path, name: str, data: bytes) -> list[tuple]:
    d = tmp_path / name
    d.mkdir()
    findings, _ = _check(d, {"x.cu": data})
    return sorted((f["line"], f["code"], f["message"]) for f in findings)


def test_a_file_of_real_kernels_concatenated(tmp_path):
    """The fixtures again and again in one file of about 1.5 MB, each copy's own names made
    unique: each copy has exactly the findings its fixture has alone."""
    units = _fixture_units()
    assert len(units) >= 6
    alone = {path: _alone(tmp_path, f"alone{i}", data) for i, (path, data, _) in enumerate(units)}
    parts, copies, line = [], [], 1
    size = 0
    while size < 1_500_000:
        k = len(copies)
        path, data, pattern = units[k % len(units)]
        suffix = b"_u%d" % k
        if pattern is not None:
            data = pattern.sub(lambda m, s=suffix: m.group(1) + s, data)
        copies.append((line, path, suffix.decode()))
        parts.append(data + b"\n")
        line += data.count(b"\n") + 1
        size += len(data) + 1
    big = tmp_path / "big"
    big.mkdir()
    findings, _ = _check(big, {"big.cu": b"".join(parts)})
    starts = [c[0] for c in copies]
    got: dict[int, list] = {k: [] for k in range(len(copies))}
    for f in findings:
        k = max(i for i, s in enumerate(starts) if s <= f["line"])
        first, _, suffix = copies[k]
        message = f["message"].replace(suffix, "")
        got[k].append((f["line"] - first + 1, f["code"], message))  # (renames move columns)
    assert sum(len(v) for v in got.values()) > 5 * len(copies)
    for k, (_, path, _) in enumerate(copies):
        assert sorted(got[k]) == alone[path], (k, path)


# -- the fast paths against the plain computations ----------------------------------------------
def _trees():
    paths = sorted(glob.glob(os.path.join(ROOT, "fixtures", "**", "*.cu*"), recursive=True))
    paths = [p for p in paths if not p.endswith("fixed")]
    rng = random.Random(7)
    for path in paths:
        with open(path, "rb") as fh:
            data = fh.read()
        yield path, data, parse(normalize.normalize(data).data)
        mutated = bytearray(data)
        for _ in range(20):  # and a damaged copy (ERROR and MISSING nodes)
            mutated[rng.randrange(len(mutated))] = rng.choice(b"{}()\"'/*#;<> \n")
        yield path + " (mutated)", bytes(mutated), parse(normalize.normalize(bytes(mutated)).data)


def test_seeker_finds_what_tree_sitter_finds():
    """`Seeker.smallest` is `descendant_for_byte_range` and `Seeker.parent` is `node.parent`,
    for ranges in document order and in any order, under the root and under a block."""
    rng = random.Random(1)
    checked = 0
    for path, _data, tree in _trees():
        root = tree.root_node
        nodes = nodes_of_types(root, ("identifier", "compound_statement", "call_expression", "{"))
        blocks = [n for n in nodes if n.type == "compound_statement"][:3]
        for top in [root, *blocks]:
            inside = [
                n
                for n in nodes
                if top.start_byte <= n.start_byte and n.end_byte <= top.end_byte and n.id != top.id
            ]
            for order in ("document", "shuffled"):
                if order == "shuffled":
                    rng.shuffle(inside)
                seeker = Seeker(top)
                for n in inside:
                    start, end = n.start_byte, n.end_byte + rng.choice((0, 0, 1, 3))
                    want = top.descendant_for_byte_range(start, end)
                    assert seeker.smallest(start, end).id == want.id, (path, start, end)
                    assert seeker.parent(n).id == n.parent.id, (path, n)
                    checked += 1
    assert checked > 1000


def test_seeker_in_a_deep_tree():
    data = HEAD + b"{" * 3000 + b"out[n] = a[0];" + b"}" * 3000 + TAIL
    root = parse(data).root_node
    at = data.index(b"a[0]")
    seeker = Seeker(root)
    node = seeker.exact(at, at + 1)
    assert node.type == "identifier"
    path = []
    while node is not None:
        path.append(node.id)
        node = seeker.parent(node)
    plain = []
    node = root.descendant_for_byte_range(at, at + 1)
    while node is not None:
        plain.append(node.id)
        node = node.parent
    assert path == plain and len(path) > 3000


def test_enclosing_function_is_the_first_function_above():
    for _path, data, tree in _trees():
        facts = CppFacts(tree, normalize.normalize(data), data)
        for node in nodes_of_types(tree.root_node, ("call_expression", "function_definition")):
            up = node.parent
            while up is not None and up.type != "function_definition":
                up = up.parent
            found = facts.enclosing_function(node)
            assert (found.id if found else None) == (up.id if up else None)


def _reference_spans(data: bytes) -> list[tuple[str, int, int]]:
    """The lexer's algorithm with the plain test for digit separators (`lexer._in_number`,
    reading back from each quote)."""
    out, pos = [], 0
    while True:
        m = lexer._START.search(data, pos)
        if m is None:
            return out
        at = m.start()
        if data[at] == 0x2F:
            second = data[at + 1 : at + 2]
            if second not in (b"/", b"*"):
                pos = at + 1
                continue
            lit = (lexer._LINE_COMMENT if second == b"/" else lexer._BLOCK_COMMENT).match(data, at)
            out.append(("comment", at, lit.end()))
            pos = lit.end()
            continue
        token = lexer._token_before(data, at)
        if data[at] == 0x27:
            if token and lexer._in_number(data, at):
                pos = at + 1
                continue
            start = at - len(token) if token in lexer._PREFIXES else at
            lit = lexer._CHAR.match(data, start)
            out.append(("char", start, lit.end()))
            pos = lit.end()
            continue
        lit = (
            lexer._RAW_STRING.match(data, at - len(token)) if token in lexer._RAW_PREFIXES else None
        )
        if lit is None:
            lit = lexer._STRING.match(data, at - len(token) if token in lexer._PREFIXES else at)
        out.append(("string", lit.start(), lit.end()))
        pos = lit.end()


def test_lexer_number_runs_match_the_plain_scan():
    rng = random.Random(5)
    alphabet = b"01x.'\"/*\\\nRuL8()ab_ \t"
    for _ in range(20_000):
        data = bytes(rng.choice(alphabet) for _ in range(rng.randrange(1, 40)))
        got = [(s.kind, s.start, s.end) for s in lexer.literal_spans(data)]
        assert got == _reference_spans(data), data


# The patterns normalization used before its scans were made linear: the reference.
_DEFINE_REF = re.compile(
    rb"\n[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+([^\n\\]*?)[ \t]*(?://[^\n]*)?$", re.M
)
_UNROLL_REF = re.compile(rb"\n[ \t]*([A-Z][A-Z0-9_]*(?:UNROLL|PRAGMA)[A-Z0-9_]*)[ \t]*(?=\r?\n|$)")
_USING_REF = re.compile(rb"\n([ \t]*using[ \t]+(?!namespace\b)[\w:<>]+[ \t]*,[^;={}]*;)")


def _plain_end(data: bytes, open_paren_end: int) -> int:
    depth = 1
    for i in range(open_paren_end, len(data)):
        depth += {40: 1, 41: -1}.get(data[i], 0)
        if depth == 0:
            return i + 1
    return -1


def _plain_line_matches(pattern, padded: bytes, words) -> list:
    """Matches of `pattern` at the start of each line holding one of `words`, not overlapping
    (what normalization's `_word_line_matches` finds, computed plainly)."""
    out, last_end = [], 0
    starts = sorted({padded.rfind(b"\n", 0, i) for w in words for i in _all(padded, w)})
    for start in starts:
        if start < last_end:
            continue
        m = pattern.match(padded, start)
        if m is not None:
            out.append(m)
            last_end = m.end()
    return out


def _all(data: bytes, word: bytes) -> list[int]:
    return [m.start() for m in re.finditer(b"(?=" + re.escape(word) + b")", data)]


def test_normalization_scans_match_the_plain_patterns():
    rng = random.Random(3)
    pieces = [b"#define A", b" ", b"\t", b"//", b"/", b"\\", b"\r", b"\n", b"x", b"UNROLL", b"PRAGMA",
              b"XY", b"using a::b", b"using ", b",", b";", b"=", b"{", b"}", b"(", b")"]  # fmt: skip
    for _ in range(20_000):
        data = b"".join(rng.choice(pieces) for _ in range(rng.randrange(1, 25)))
        padded = b"\n" + data
        got = [(d.name_start, d.name, d.expansion) for d in normalize._defines(padded)]
        want = [
            (m.start(1) - 1, m.group(1), m.group(2))
            for m in _plain_line_matches(_DEFINE_REF, padded, (b"define",))
        ]
        assert got == want, data
        got = normalize._word_line_matches(
            normalize._PRAGMA_MACRO_LINE, padded, (b"UNROLL", b"PRAGMA"), normalize._unroll_word
        )
        want = _plain_line_matches(_UNROLL_REF, padded, (b"UNROLL", b"PRAGMA"))
        assert [(m.start(1), m.end(1)) for m in got] == [
            (m.start(1) - 1, m.end(1) - 1) for m in want
        ]
        want = _plain_line_matches(_USING_REF, padded, (b"using",))
        assert normalize._multi_using(padded) == [(m.start(1) - 1, m.end(1) - 1) for m in want]
        parens = normalize._Parens(data)
        parens.budget = rng.choice((0, 10, 10_000))  # (0: the table answers at once)
        for i in [i + 1 for i, c in enumerate(data) if c == 40]:
            assert parens.end(i) == _plain_end(data, i), data


def test_columns_on_long_lines_count_characters():
    """`SourceFile.position` on lines past the checkpoint length counts what decoding the line's
    start to the offset counts (valid and invalid UTF-8, characters cut at a checkpoint)."""
    rng = random.Random(4)
    alphabet = [
        b"a",
        b"\xc3\xa9",
        b"\xe2\x80\x94",
        b"\xf0\x9f\x98\x80",
        b"\x80",
        b"\xe2\x82",
        b"\xff",
    ]
    for _ in range(30):
        data = b"".join(rng.choice(alphabet) for _ in range(rng.randrange(3000, 12_000)))
        data = data + b"\n" + data[::-1]
        source = SourceFile("f.cu", data, "cpp")
        for _ in range(100):
            offset = rng.randrange(len(data) + 1)
            row = source.line_index(offset)
            start = source.line_starts[row]
            want = len(data[start:offset].decode("utf-8", "surrogateescape")) + 1
            assert source.position(offset) == (row + 1, want)
