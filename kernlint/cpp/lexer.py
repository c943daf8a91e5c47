"""A small C/C++/CUDA lexer that finds comments and string/character literals.

Used where a full parse is not needed (the ASCII rule, suppression comments): it knows line and
block comments, line continuations in `//` comments, ordinary and prefixed string literals
(`u8"..."`, `L"..."`), raw strings (`R"tag(...)tag"`), character literals and digit
separators (`1'000`), so that quotes inside comments and `//` inside strings are not confused.
"""

from __future__ import annotations

import re

from ..lazyre import lazy_compile
from ..record import record

# A literal or comment can only start at `//`, `/*` or a quote; the scanner jumps from one such
# place to the next (C-level search) and reads the literal there with an anchored regex.
# (One character class: searched faster than `/[/*]|["']`; a `/` is checked for `//`/`/*` after.)
_START = lazy_compile(rb"[/\"']")
_LINE_COMMENT = lazy_compile(rb"//(?:[^\n\\]|\\\r?\n|\\.)*", re.S)
_BLOCK_COMMENT = lazy_compile(rb"/\*.*?(?:\*/|\Z)", re.S)
_RAW_STRING = lazy_compile(
    rb'(?:u8|u|U|L)?R"(?P<tag>[^()\\\s"]{0,16})\(.*?(?:\)(?P=tag)"|\Z)', re.S
)
# (An unterminated literal ends at its line's end, or at the end of the file, also after a
# final backslash.)
_STRING = lazy_compile(rb'(?:u8|u|U|L)?"(?:[^"\\\n]|\\.|\\\Z)*(?:"|$)', re.S | re.M)
_CHAR = lazy_compile(rb"(?:u8|u|U|L)?'(?:[^'\\\n]|\\.|\\\Z)*(?:'|$)", re.S | re.M)
_WORD_BEFORE = lazy_compile(rb"[\w.']*\Z")
_PREFIXES = frozenset({b"u8", b"u", b"U", b"L"})
_RAW_PREFIXES = frozenset({b"R", b"u8R", b"uR", b"UR", b"LR"})
# Bytes of identifiers and numbers (`\w` for ASCII).
WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


@record(frozen=True)
class Span:
    kind: str  # "comment" | "string" | "char"
    start: int
    end: int


def _token_before(data: bytes, pos: int) -> bytes:
    """The identifier or number that ends right before `pos` (empty if none)."""
    j = pos
    while j > 0 and data[j - 1] in WORD_BYTES:
        j -= 1
    return data[j:pos]


# Bytes of a number with digit separators, read back from a quote (`[\w.']`).
_NUMBER_BYTES = WORD_BYTES | frozenset(b".'")


def _run_start(data: bytes, pos: int, known: tuple[int, int]) -> int:
    """Where the run of `_NUMBER_BYTES` that ends at `pos` starts. `known`: (end, start) of a
    run read before, at or before `pos`: a run reaching back to that end starts where it did,
    so the bytes before it are not read again (a line of 64 KB of `1'0'0'...` has a quote
    every other byte; reading back to the start at each made the line quadratic)."""
    known_end, known_start = known
    j = pos
    while j > 0 and data[j - 1] in _NUMBER_BYTES:
        if j == known_end:
            return known_start
        j -= 1
    return j


def _is_number_run(data: bytes, j: int, pos: int) -> bool:
    """Does the run starting at `j` (before the quote at `pos`) spell a number? The token the
    quote belongs to starts at the first character that is not a separator quote; it is a
    number when it starts with a digit or with `.` and a digit."""
    while j < pos and data[j] == 0x27:
        j += 1
    head = data[j : j + 2]
    return bool(head) and (head[:1].isdigit() or (head[:1] == b"." and head[1:2].isdigit()))


def _in_number(data: bytes, pos: int) -> bool:
    """Is the quote at `pos` a digit separator (`1'000`, `0x1'ff`, `.5'0`)?"""
    return _is_number_run(data, _run_start(data, pos, (-1, -1)), pos)


def literal_spans(data: bytes, stop: int | None = None) -> list[Span]:
    """Comment, string and character-literal spans of a C/C++/CUDA file, in order (`stop`:
    only those that start before it, which are the same as in the whole file's list)."""
    out: list[Span] = []
    pos = 0
    search = _START.search
    # The last quote read back as part of a number-like run: (its offset, the run's start, is
    # the run a number). A later quote in the same run has the same start and the same answer.
    run = (-1, -1, False)
    while True:
        m = search(data, pos)
        if m is None:
            return out
        at = m.start()
        if stop is not None and at - 3 >= stop:
            return out  # (a literal starts at most 3 bytes before its quote: `u8R"`)
        first = data[at]
        if first == 0x2F:  # `//` or `/*`, or a division
            second = data[at + 1 : at + 2]
            if second != b"/" and second != b"*":
                pos = at + 1
                continue
            lit = (_LINE_COMMENT if second == b"/" else _BLOCK_COMMENT).match(data, at)
            out.append(Span("comment", at, lit.end()))
            pos = lit.end()
            continue
        token = _token_before(data, at)
        if first == 0x27:  # `'`
            if token:
                start = _run_start(data, at, run[:2])
                number = run[2] if start == run[1] else _is_number_run(data, start, at)
                run = (at, start, number)
            if token and number:
                pos = at + 1
                continue
            start = at - len(token) if token in _PREFIXES else at
            lit = _CHAR.match(data, start)
            out.append(Span("char", start, lit.end()))
            pos = lit.end()
            continue
        lit = None
        if token in _RAW_PREFIXES:
            lit = _RAW_STRING.match(data, at - len(token))
        if lit is None:
            start = at - len(token) if token in _PREFIXES else at
            lit = _STRING.match(data, start)
        out.append(Span("string", lit.start(), lit.end()))
        pos = lit.end()


def span_at(spans: list[Span], offset: int) -> Span | None:
    """The span containing `offset` (spans sorted by start), if any."""
    lo, hi = 0, len(spans)
    while lo < hi:
        mid = (lo + hi) // 2
        if spans[mid].end <= offset:
            lo = mid + 1
        else:
            hi = mid
    if lo < len(spans) and spans[lo].start <= offset < spans[lo].end:
        return spans[lo]
    return None
