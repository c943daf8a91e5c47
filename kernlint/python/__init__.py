"""Python analysis: parsing, skeletons, facts, guards and scopes."""

from __future__ import annotations

from ast import AST as _AST

from ..lazyre import lazy_compile

# What ends a line for Python: `\r\n`, a lone `\r` or `\n` (universal newlines).
_BREAK = lazy_compile(rb"\r\n?|\n")
_LONE_CR = lazy_compile(rb"\r(?!\n)")


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


class LineSearch:
    """Lines of a Python file around given offsets, found by searching for the line breaks
    near each offset instead of listing every line start (most of a test file is never
    looked at): the lines Python counts (a lone `\\r` ends one too, as in `lf_view`)."""

    __slots__ = ("view", "_at", "_line")

    def __init__(self, data: bytes) -> None:
        self.view = lf_view(data)
        self._at = 0  # an offset whose 0-based line is `_line` (lines are counted from it)
        self._line = 0

    def begin(self, at: int) -> int:
        """The offset of the start of the line holding offset `at`."""
        return self.view.rfind(b"\n", 0, at) + 1

    def end(self, begin: int) -> int:
        """The offset just after the line break ending the line that starts at `begin` (the
        end of the file for its last line)."""
        i = self.view.find(b"\n", begin)
        return len(self.view) if i < 0 else i + 1

    def number(self, at: int) -> int:
        """The 0-based line of offset `at` (counted from the last offset asked about)."""
        if at >= self._at:
            self._line += self.view.count(b"\n", self._at, at)
        else:
            self._line -= self.view.count(b"\n", at, self._at)
        self._at = at
        return self._line


def parse(data: bytes, path: str = "<unknown>", mode: str = "exec"):
    """`ast.parse` (`mode` as its), with warnings silenced (an invalid escape is no concern of
    a linter) and without the cyclic garbage collector: an AST
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
            return ast.parse(data, filename=path, mode=mode, type_comments=False)
    finally:
        if enabled:
            gc.enable()


# Fields that hold only leaf singletons (`Load`, `Store`, `Add`, `Eq`, ...): no child worth a
# visit, and the objects are shared between nodes (no parent of their own).
_LEAF_FIELDS = frozenset({"ctx", "op", "ops"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def child_nodes(node) -> list:
    """`ast.iter_child_nodes` as a list, without the leaf singletons of `ctx`/`op`/`ops`
    fields (about a third of the nodes `ast.walk` yields), several times faster."""
    t = type(node)
    fields = _CHILD_FIELDS.get(t)
    if fields is None:
        fields = _CHILD_FIELDS[t] = tuple(f for f in t._fields if f not in _LEAF_FIELDS)
    out = []
    for name in fields:
        value = getattr(node, name, None)
        if value.__class__ is list:
            for item in value:
                if isinstance(item, _AST):
                    out.append(item)
        elif isinstance(value, _AST):
            out.append(value)
    return out


def walk(node):
    """`ast.walk` (breadth first, the same order) over `child_nodes`: without the leaf
    singletons of `ctx`/`op`/`ops` fields."""
    from collections import deque

    todo = deque([node])
    while todo:
        node = todo.popleft()
        todo.extend(child_nodes(node))
        yield node
