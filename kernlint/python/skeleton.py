"""Skeletons of Python files: parse only what the rules look at.

`ast.parse` costs about 0.15 s per MB, and the Python rules look at a few lines of each file
they parse (an aiter import, a `SGLANG_USE_AITER` flag, a `load_jit` call) plus what surrounds
those lines: the enclosing functions, classes and conditions, and the module-level statements
(imports, platform flags such as `_is_hip`, aiter gates). A skeleton keeps exactly that and
replaces every function or class (decorators included) that holds none of the wanted lines by
`pass` and blank lines. Line numbers and columns of everything kept are unchanged, so the tree
of the skeleton answers the rules' questions with the positions of the real file.

Block ends are found from indentation: the first later line, indented no deeper than the
`def`/`class`, that starts a statement (not blank, not a comment, not inside a triple-quoted
string, not a backslash continuation, not a closing bracket). Unusual layouts (a column-0 line
inside brackets, a triple quote inside a comment) can make a boundary wrong; the skeleton then
does not parse and the caller parses the whole file instead, so a skeleton is only ever used
when it is valid Python.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from functools import lru_cache

from ..lazyre import lazy_compile
from ..source import occurrences

# A def/class/decorator line: searched after a newline (much faster than `^` under re.M);
# the first line is matched on its own. (The indentation is taken whole, as an atomic group
# would: `(?=([ \t]*))\1`, a lookahead being atomic. Plain `([ \t]*)` would try every
# shorter indentation of every line before moving on: 4x slower.)
_BLOCK_AFTER_NEWLINE = lazy_compile(rb"\n(?=([ \t]*))\1(@|(?:async[ \t]+)?def[ \t]|class[ \t(:])")
_BLOCK_FIRST_LINE = lazy_compile(rb"([ \t]*)(@|(?:async[ \t]+)?def[ \t]|class[ \t(:])")
_TRIPLES = (b'"""', b"'''")
_SPACE = frozenset(b" \t\r\n\f")


def _code_at_end(prefix: bytes) -> bool:
    """Is the end of `prefix` (a line's start, outside any triple-quoted string) code, not
    inside a comment or a one-line string? Strings complete on the line are skipped."""
    return _LineScan(prefix, 0).code_at(len(prefix))


# In code: a quote or a comment; in a one-line string: its quote or an escape.
_CODE_EVENT = lazy_compile(rb"[#'\"]")
_IN_QUOTE = {0x22: lazy_compile(rb'["\\]'), 0x27: lazy_compile(rb"['\\]")}


class _LineScan:
    """What `_code_at_end` says of the prefixes of one line, asked for positions further and
    further along it: the line is scanned once, not once per position (a line with thousands
    of triple quotes costs its length)."""

    __slots__ = ("data", "pos", "quote", "comment")

    def __init__(self, data: bytes, start: int) -> None:
        self.data = data
        self.pos = start  # scanned up to here: `quote` and `comment` hold at this point
        self.quote = None  # the byte of the open one-line string
        self.comment = False

    def code_at(self, at: int) -> bool:
        data = self.data
        while not self.comment and self.pos < at:
            if self.quote is None:
                m = _CODE_EVENT.search(data, self.pos, at)
                if m is None:
                    self.pos = at
                    break
                c = data[m.start()]
                if c == 0x23:  # '#': the rest of the line is a comment
                    self.comment = True
                    self.pos = m.start() + 1
                    break
                self.quote = c
                self.pos = m.end()
            else:
                m = _IN_QUOTE[self.quote].search(data, self.pos, at)
                if m is None:
                    self.pos = at
                    break
                if data[m.start()] == 0x5C:  # backslash: the next byte is escaped
                    self.pos = m.start() + 2
                else:
                    self.quote = None
                    self.pos = m.end()
        if self.comment:
            return False
        return self.quote is None and self.pos == at


def _string_line_ranges(data: bytes, starts: list[int]) -> list[tuple[int, int]]:
    """(first, last) line indexes (0-based) strictly inside triple-quoted strings: lines that
    begin inside a string that opened on an earlier line."""
    out = []
    for open_at, close_at in string_spans(data, lambda at: starts[bisect_right(starts, at) - 1]):
        first = bisect_left(starts, open_at + 1)  # first line starting after the opener
        if close_at is None:
            out.append((first, len(starts) - 1))
            continue
        last = bisect_left(starts, close_at + 1) - 1  # the line holding the closer
        if first <= last:
            out.append((first, last))
    return out


def string_spans(data: bytes, line_begin) -> list[tuple[int, int | None]]:
    """(offset of the opening quotes, offset of the closing ones) of each triple-quoted string
    in code, in file order; None for a string left open at the end of `data`. A line begins
    inside a string when its start `s` has `open < s <= close`. `line_begin(at)`: the offset
    of the start of the line holding offset `at`."""
    out = []
    open_kind = None
    open_at = 0
    scan = None  # the scan of the line of the last opener considered
    scan_begin = -1
    # (what a regex `'''|"""` finds: each kind without overlaps, left to right)
    for at, kind in occurrences(data, _TRIPLES, overlapping=False):
        if open_kind is None:
            begin = line_begin(at)
            if begin != scan_begin or scan is None or scan.pos > at:
                scan, scan_begin = _LineScan(data, begin), begin
            if not scan.code_at(at):
                continue  # in a comment or in a one-line string (`'"""'`)
            open_kind, open_at = kind, at
        elif kind == open_kind and data[at - 1 : at] != b"\\":
            out.append((open_at, at))
            open_kind = None
    if open_kind is not None:
        out.append((open_at, None))
    return out


@lru_cache(maxsize=64)
def _end_pattern(indent: int) -> re.Pattern:
    """A line indented at most `indent` that starts with something other than a comment or a
    closing bracket (searched from a `\\n`, at C speed; the indentation taken whole, as in
    `_BLOCK_AFTER_NEWLINE`)."""
    return re.compile(rb"\n(?=([ \t]{0,%d}))\1(?=[^ \t\r\n\f#)\]}])" % indent)


def skeleton(data: bytes, keep: list[int], starts: list[int] | None = None) -> bytes | None:
    """The file with every def/class block that contains none of the 1-based line numbers in
    `keep` replaced by `pass` and blank lines; None when nothing would be removed. `starts`:
    the offsets of the lines, when the caller has them."""
    from . import has_lone_cr

    if has_lone_cr(data):
        return None  # (lines that `\n` does not end: the searches below would miss them)
    search = _BLOCK_AFTER_NEWLINE.search
    m = _BLOCK_FIRST_LINE.match(data) or search(data)
    if m is None:
        return None
    if starts is None:
        from ..source import line_starts

        starts = line_starts(data)
    n_lines = len(starts)
    strings = _string_line_ranges(data, starts)
    string_firsts = [first for first, _ in strings]

    def in_string(line: int) -> bool:
        k = bisect_left(string_firsts, line + 1) - 1
        return k >= 0 and strings[k][0] <= line <= strings[k][1]

    def continued(line: int) -> bool:
        """Does the last non-blank line before `line` end with a backslash?"""
        j = starts[line] - 1
        while j > 0 and data[j - 1] in _SPACE:
            j -= 1
        return j > 0 and data[j - 1] == 0x5C

    def block_end(line: int, indent: int) -> int:
        """First line after `line` that starts a statement indented at most `indent`."""
        search = _end_pattern(indent).search
        pos = starts[line + 1] - 1 if line + 1 < n_lines else len(data)
        while True:
            m = search(data, pos)
            if m is None:
                return n_lines
            cand = bisect_left(starts, m.start() + 1)
            if not in_string(cand) and not continued(cand):
                return cand
            pos = m.end()

    keep_idx = sorted({k - 1 for k in keep})
    pieces = []
    copied_to = 0  # offset up to which the input has been copied
    pending_decorator = None
    while m is not None:
        line = bisect_right(starts, m.start(1)) - 1
        next_from = m.end()
        indent = len(m.group(1))
        if in_string(line):
            pass
        elif m.group(2) == b"@":
            if pending_decorator is None or pending_decorator[1] != indent:
                pending_decorator = (line, indent)
        else:
            first = line
            if pending_decorator is not None and pending_decorator[1] == indent:
                first = pending_decorator[0]
            pending_decorator = None
            k = bisect_left(keep_idx, first)
            end = block_end(line, indent)
            if k == len(keep_idx) or keep_idx[k] >= end:
                # Holds no wanted line: replaced, and the blocks nested in it are never visited
                # (a kept block's inner blocks are judged on their own).
                start_off = starts[first]
                end_off = starts[end] if end < n_lines else len(data)
                pieces.append(data[copied_to:start_off])
                pieces.append(data[start_off : start_off + indent] + b"pass")
                pieces.append(b"\n" * data.count(b"\n", start_off, end_off))
                copied_to = end_off
                next_from = max(next_from, end_off - 1)  # the newline before the next line
        m = search(data, next_from)
    if not pieces:
        return None
    pieces.append(data[copied_to:])
    return b"".join(pieces)
