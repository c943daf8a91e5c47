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
from bisect import bisect_left

_BLOCK_START = re.compile(rb"^([ \t]*)(@|(?:async[ \t]+)?def[ \t]|class[ \t(:])", re.M)
_TRIPLE = re.compile(rb"'''|\"\"\"")
_CLOSERS = b")]}"


def _string_line_ranges(data: bytes, starts: list[int]) -> list[tuple[int, int]]:
    """(first, last) line indexes (0-based) strictly inside triple-quoted strings: lines that
    begin inside a string that opened on an earlier line."""
    out = []
    open_kind = None
    open_at = 0
    for m in _TRIPLE.finditer(data):
        at = m.start()
        if open_kind is None:
            line_start = data.rfind(b"\n", 0, at) + 1
            prefix = data[line_start:at]
            if b"#" in prefix and b"'" not in prefix and b'"' not in prefix:
                continue  # in a comment
            open_kind, open_at = m.group(), at
        elif m.group() == open_kind and data[at - 1 : at] != b"\\":
            first = bisect_left(starts, open_at + 1)  # first line starting after the opener
            last = bisect_left(starts, at + 1) - 1  # the line holding the closer
            if first <= last:
                out.append((first, last))
            open_kind = None
    if open_kind is not None:
        out.append((bisect_left(starts, open_at + 1), len(starts) - 1))
    return out


def skeleton(data: bytes, keep: list[int]) -> bytes | None:
    """The file with every def/class block that contains none of the 1-based line numbers in
    `keep` replaced by `pass` and blank lines; None when nothing would be removed."""
    blocks = list(_BLOCK_START.finditer(data))
    if not blocks:
        return None
    lines = data.split(b"\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    in_string = [False] * len(lines)
    for first, last in _string_line_ranges(data, starts):
        for i in range(first, last + 1):
            in_string[i] = True
    keep_idx = sorted({k - 1 for k in keep})

    def starts_statement(i: int) -> bool:
        if in_string[i]:
            return False
        stripped = lines[i].lstrip(b" \t\r\f")
        if not stripped or stripped[:1] == b"#" or stripped[:1] in _CLOSERS:
            return False
        j = i - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        return j < 0 or not lines[j].rstrip(b"\r").endswith(b"\\")

    # Blocks in order: (first line, indent, last line); decorators open the block they decorate.
    spans = []
    pending_decorator = None
    for m in blocks:
        i = bisect_left(starts, m.start())
        if in_string[i]:
            continue
        indent = len(m.group(1))
        if m.group(2) == b"@":
            if pending_decorator is None or pending_decorator[1] != indent:
                pending_decorator = (i, indent)
            continue
        first = pending_decorator[0] if pending_decorator and pending_decorator[1] == indent else i
        pending_decorator = None
        end = i + 1
        while end < len(lines) and not (
            starts_statement(end) and len(lines[end]) - len(lines[end].lstrip(b" \t")) <= indent
        ):
            end += 1
        spans.append((first, indent, end))

    out = list(lines)
    removed = False
    skip_until = -1
    for first, indent, end in spans:
        if first < skip_until:
            continue  # inside a block already removed
        k = bisect_left(keep_idx, first)
        if k < len(keep_idx) and keep_idx[k] < end:
            continue  # holds a wanted line: kept (its inner blocks are judged on their own)
        out[first] = lines[first][:indent] + b"pass"
        for i in range(first + 1, end):
            out[i] = b""
        removed = True
        skip_until = end
    return b"\n".join(out) if removed else None
