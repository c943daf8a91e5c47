"""A small C/C++/CUDA lexer that finds comments and string/character literals.

Used where a full parse is not needed (the ASCII rule, suppression comments): it knows line and
block comments, line continuations in `//` comments, ordinary and prefixed string literals
(`u8"..."`, `L"..."`), raw strings (`R"tag(...)tag"`), character literals and digit
separators (`1'000`), so that quotes inside comments and `//` inside strings are not confused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN = re.compile(
    rb"""
      (?P<line_comment>//(?:[^\n\\]|\\\r?\n|\\.)*)
    | (?P<block_comment>/\*.*?(?:\*/|\Z))
    | (?P<raw_string>(?:u8|u|U|L)?R"(?P<tag>[^()\\\s"]{0,16})\(.*?(?:\)(?P=tag)"|\Z))
    | (?P<string>(?:u8|u|U|L)?"(?:[^"\\\n]|\\.|\\\n)*(?:"|$))
    | (?P<char>(?:u8|u|U|L)?'(?:[^'\\\n]|\\.)*(?:'|$))
    | (?P<number>\.?\d(?:[eEpP][+-]|[\w.']|)*)
    | (?P<ident>[A-Za-z_]\w*)
    """,
    re.S | re.X | re.M,
)


@dataclass(frozen=True)
class Span:
    kind: str  # "comment" | "string" | "char"
    start: int
    end: int


def literal_spans(data: bytes) -> list[Span]:
    """Comment, string and character-literal spans of a C/C++/CUDA file, in order."""
    out: list[Span] = []
    for m in _TOKEN.finditer(data):
        kind = m.lastgroup
        if kind in ("line_comment", "block_comment"):
            out.append(Span("comment", m.start(), m.end()))
        elif kind in ("string", "raw_string"):
            out.append(Span("string", m.start(), m.end()))
        elif kind == "char":
            out.append(Span("char", m.start(), m.end()))
    return out


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
