"""Python analysis: parsing, skeletons, facts, guards and scopes."""

from __future__ import annotations

import re

# What ends a line for Python: `\r\n`, a lone `\r` or `\n` (universal newlines).
_BREAK = re.compile(rb"\r\n?|\n")
_LONE_CR = re.compile(rb"\r(?!\n)")


def has_lone_cr(data: bytes) -> bool:
    """Does a `\\r` end a line on its own (old Mac line endings, or a stray one)?"""
    return b"\r" in data and data.count(b"\r") != data.count(b"\r\n")


def line_starts(data: bytes) -> list[int]:
    """Byte offset of the start of every line as Python counts lines (`\\r\\n`, `\\r`, `\\n`)."""
    return [0, *(m.end() for m in _BREAK.finditer(data))]


def adopt_line_breaks(source) -> None:
    """Give a Python file with lone `\\r` line breaks the lines Python sees (those of `ast`
    positions and of tracebacks); other files keep theirs (`\\n`-ended, the same lines)."""
    if has_lone_cr(source.data):
        source._line_starts = line_starts(source.data)


def lf_view(data: bytes) -> bytes:
    """`data` with every lone `\\r` read as `\\n`: the same length and offsets, the lines
    Python sees, for searches written with `\\n`."""
    return _LONE_CR.sub(b"\n", data) if has_lone_cr(data) else data


def parse(data: bytes, path: str = "<unknown>"):
    """`ast.parse`, with warnings silenced and without the cyclic garbage collector: an AST
    has no reference cycles, and the collector would otherwise traverse the new nodes again
    and again while they are built (about a fifth of the parse time).

    Raises SyntaxError or ValueError (invalid source), and RecursionError or MemoryError
    (nested deeper than the parser goes: `x = ------...1`, an `elif` chain thousands long)."""
    import ast
    import gc
    import warnings

    enabled = gc.isenabled()
    gc.disable()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(data, filename=path, type_comments=False)
    finally:
        if enabled:
            gc.enable()
