"""The C/C++ literal lexer: the fast scanner finds exactly the spans a full tokenizer finds."""

from __future__ import annotations

import glob
import os
import re

import pytest

from kernlint.cpp.lexer import literal_spans, span_at

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The full tokenizer: every identifier and number is a token of its own (what the fast scanner
# must agree with; it skips most of them inside the regex engine instead).
FULL = re.compile(
    rb"""
      (?P<line_comment>//(?:[^\n\\]|\\\r?\n|\\.)*)
    | (?P<block_comment>/\*.*?(?:\*/|\Z))
    | (?P<raw_string>(?:u8|u|U|L)?R"(?P<tag>[^()\\\s"]{0,16})\(.*?(?:\)(?P=tag)"|\Z))
    | (?P<string>(?:u8|u|U|L)?"(?:[^"\\\n]|\\.|\\\Z)*(?:"|$))
    | (?P<char>(?:u8|u|U|L)?'(?:[^'\\\n]|\\.|\\\Z)*(?:'|$))
    | (?P<number>\.?\d(?:[eEpP][+-]|[\w.']|)*)
    | (?P<ident>[A-Za-z_]\w*)
    """,
    re.S | re.X | re.M,
)
KIND = {
    "line_comment": "comment",
    "block_comment": "comment",
    "string": "string",
    "raw_string": "string",
    "char": "char",
}


def full_spans(data: bytes) -> list[tuple[str, int, int]]:
    return [
        (KIND[m.lastgroup], m.start(), m.end()) for m in FULL.finditer(data) if m.lastgroup in KIND
    ]


def fast_spans(data: bytes) -> list[tuple[str, int, int]]:
    return [(s.kind, s.start, s.end) for s in literal_spans(data)]


TRICKY = [
    b"int x = 1'000'000; const char* s = \"a // not a comment\"; // real",
    b"auto r = R\"tag(raw \" ) string)tag\"; char c = '\\''; /* block */",
    b'fooR"(not raw)"; LR"(raw)"; u8R"x(y)x"; u8"s"; U\'c\'; L"w";',
    b"x1'2'; 0x1'ff'; 1.5e+3'0; .5'0; a'b'; 3'",
    b'// continued \\\n still comment\nint y; "unterminated\nint z;',
    b"/* unterminated block",
    b"char q = '\"'; const char* t = \"'\"; int n = 0'1;",
    b'MACRO_R"x"; abcu8"y"; _L\'z\';',
    # unterminated literals that end the file with a backslash (these used to crash)
    b'const char* s = "abc\\',
    b"char c = '\\",
    b'int d = a / b; x /= 2; y = 1/*c*/; s = u8"\\',
]


@pytest.mark.parametrize("data", TRICKY)
def test_tricky_inputs_match_the_full_tokenizer(data):
    assert fast_spans(data) == full_spans(data)


def test_a_literal_cut_off_by_the_end_of_the_file_ends_there():
    for data in (b'x = "abc\\', b"c = '\\"):
        (span,) = literal_spans(data)
        assert span.end == len(data)


def test_tricky_inputs_find_the_literals():
    spans = fast_spans(TRICKY[0])
    assert [k for k, _, _ in spans] == ["string", "comment"]
    assert TRICKY[0][spans[0][1] : spans[0][2]] == b'"a // not a comment"'


def test_project_sources_match_the_full_tokenizer():
    files = [
        p
        for ext in ("cu", "cuh", "h", "hpp", "cpp", "cc")
        for p in glob.glob(os.path.join(ROOT, "fixtures", "**", f"*.{ext}"), recursive=True)
    ]
    assert len(files) > 10
    for path in files:
        with open(path, "rb") as fh:
            data = fh.read()
        assert fast_spans(data) == full_spans(data), path


def test_span_at_finds_the_enclosing_span():
    data = b'int a; // c\nconst char* s = "x";'
    spans = literal_spans(data)
    assert span_at(spans, data.index(b"// c")).kind == "comment"
    assert span_at(spans, data.index(b'"x"') + 1).kind == "string"
    assert span_at(spans, 0) is None


def test_real_kernels_match_the_full_tokenizer(tmp_path_factory):
    """On the SGLang 0.5.23 JIT tree (downloaded; skipped offline)."""
    from sglang_tree import sglang_root

    root = sglang_root(tmp_path_factory)
    files = [
        p
        for ext in ("cu", "cuh", "h", "hpp", "cpp")
        for p in glob.glob(os.path.join(root, "kernels", "jit", "**", f"*.{ext}"), recursive=True)
    ]
    assert len(files) > 200
    for path in files:
        with open(path, "rb") as fh:
            data = fh.read()
        assert fast_spans(data) == full_spans(data), path


def test_spans_before_a_stop_are_those_of_the_whole_file():
    """`literal_spans(data, stop)` (lexing only as far as needed) answers every offset before
    `stop` as the whole file's spans do, prefixed literals (`u8R"(...)"`) included."""
    import random

    rng = random.Random(4)
    samples = list(TRICKY) + [b'int a; u8R"(x)"; b = u8"y"; // c']
    samples += [
        bytes(rng.choice(b"/*\"'\\\nab1R(x)u8 \r") for _ in range(rng.randrange(0, 60)))
        for _ in range(3000)
    ]
    for data in samples:
        full = literal_spans(data)
        for stop in range(len(data) + 1):
            part = literal_spans(data, stop)
            assert part == full[: len(part)]
            for offset in range(stop):
                assert span_at(part, offset) == span_at(full, offset), (data, stop, offset)
