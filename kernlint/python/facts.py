"""Shared facts about one Python file (imported names, aiter imports, guards), computed once
on first use."""

from __future__ import annotations

import ast
from functools import cached_property

from ..lazyre import lazy_compile
from . import child_nodes


class PyFacts:
    def __init__(self, tree, source) -> None:
        self.tree = tree
        self.source = source
        self._on_lines: dict = {}  # (pattern, types) -> nodes_on_lines

    @cached_property
    def names(self) -> dict[str, str]:
        """Local name -> dotted origin of what it was imported as."""
        if self.tree is None:
            return {}
        nodes = self.nodes_on_lines(_IMPORT_LINE, (ast.Import, ast.ImportFrom))
        return _qualified_names(nodes)

    def qualified(self, expr) -> str | None:
        return qualified(expr, self.names)

    @cached_property
    def parents(self) -> dict[int, ast.AST]:
        """Parent map of the whole tree (a full walk: prefer `guards.ancestors(node)`)."""
        return self.guards.parent

    @cached_property
    def guards(self):
        from .guards import Guards

        return Guards(self.tree)

    @cached_property
    def _after_newline(self) -> bytes:
        from . import lf_view

        # (lone `\r` line breaks read as `\n`: the lines Python, and `line_index`, count)
        return b"\n" + lf_view(self.source.data)

    def nodes_on_lines(self, pattern, types) -> list:
        """Nodes of the given `ast` types in the statements on lines where the bytes regex
        `pattern` matches (the line of the match's last byte; each statement's own
        expressions; nested blocks excluded). The file is searched after a newline, so a
        line-start pattern written `\n[ \t]*@` (several times faster to search than `^[ \t]*@`
        under re.M) also matches the first line. Finds a few nodes in a big file without
        walking the whole tree. (Worked out once per pattern and types: several rules ask
        for the same lines.)"""
        if self.tree is None:
            return []
        key = (pattern, types)
        found = self._on_lines.get(key)
        if found is None:
            found = self._on_lines[key] = self._nodes_on_lines(pattern, types)
        return list(found)

    def _nodes_on_lines(self, pattern, types) -> list:
        line_index = self.source.line_index
        # (offsets in the searched bytes are one more than in the file)
        padded = self._after_newline
        lines = sorted({line_index(max(m.end() - 2, 0)) + 1 for m in pattern.finditer(padded)})
        seen: set[int] = set()
        out = []
        guards = self.guards
        # Statement types are found as the statements themselves (an expression holds none).
        statements_only = all(issubclass(t, ast.stmt) for t in types)
        at_lines = guards.statements_at_lines(lines)
        for line in lines:
            for stmt in at_lines.get(line, ()):
                if id(stmt) in seen:
                    continue
                seen.add(id(stmt))
                if statements_only:
                    if isinstance(stmt, types):
                        out.append(stmt)
                    continue
                for node in header_walk(stmt):
                    if isinstance(node, types):
                        out.append(node)
        out.sort(key=lambda n: (n.lineno, n.col_offset))
        return out

    @cached_property
    def aiter_imports(self) -> list[tuple[ast.AST, str]]:
        """(node, module) for each import of aiter: `import aiter.x`, `from aiter import y`,
        `importlib.import_module("aiter...")`, `__import__("aiter")`."""
        out: list[tuple[ast.AST, str]] = []
        types = (ast.Import, ast.ImportFrom)
        if imports_by_call(self.source.data):
            types += (ast.Call,)
        for node in self.nodes_on_lines(AITER_LINE, types):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if _is_aiter(alias.name):
                        out.append((node, alias.name))
                        break
            elif isinstance(node, ast.ImportFrom):
                if node.level == 0 and _is_aiter(node.module or ""):
                    out.append((node, node.module))
            elif node.args:
                fn = node.func
                name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
                arg = node.args[0]
                if (
                    name in ("import_module", "__import__")
                    and isinstance(arg, ast.Constant)
                    and isinstance(arg.value, str)
                    and _is_aiter(arg.value)
                ):
                    out.append((node, arg.value))
        return out


# Word patterns start with their literal and check the boundary before it by a lookbehind:
# the same matches as a leading `\b`, which would defeat the regex engine's literal-prefix
# search (about 10x slower over a file).
AITER_LINE = lazy_compile(rb"aiter\b(?<=\baiter)")
_IMPORT_LINE = lazy_compile(rb"import\b(?<=\bimport)")


def imports_by_call(data: bytes) -> bool:
    """Can a call in this file import a module (`importlib.import_module`, `__import__`: a
    call can import aiter only through one of those names)?"""
    return b"import_module" in data or b"__import__" in data


def header_walk(stmt):
    """A statement and its own expressions, not the statements nested in its blocks."""
    stack = [stmt]
    while stack:
        node = stack.pop()
        yield node
        for child in child_nodes(node):
            if isinstance(child, (ast.stmt, ast.ExceptHandler)):
                continue
            stack.append(child)


def _is_aiter(module: str) -> bool:
    return module == "aiter" or module.startswith("aiter.")


def ast_offset(source, line: int, byte_col: int) -> int:
    """Byte offset of an `ast` position in the file: `source.ast_offset`, with the first
    line's columns counted after a UTF-8 BOM (Python's parser does not see it)."""
    if line <= 1 and source.data.startswith(b"\xef\xbb\xbf"):
        byte_col += 3
    return source.ast_offset(line, byte_col)


def node_span(ctx, node) -> tuple[int, int]:
    """Byte span of an `ast` node in the file."""
    src = ctx.source
    start = ast_offset(src, node.lineno, node.col_offset)
    end_line = getattr(node, "end_lineno", None) or node.lineno
    end_col = getattr(node, "end_col_offset", None)
    end = ast_offset(src, end_line, end_col if end_col is not None else node.col_offset)
    return start, max(start, end)


def _qualified_names(nodes) -> dict[str, str]:
    """Local name -> dotted origin, from import statements (the last one wins)."""
    out: dict[str, str] = {}
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    out[alias.asname] = alias.name
                else:
                    head = alias.name.split(".")[0]
                    out[head] = head
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                if alias.name != "*":
                    out[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return out


def qualified(expr, names: dict[str, str]) -> str | None:
    """`tt.do_bench` with `import triton.testing as tt` -> `triton.testing.do_bench`."""
    attrs = []
    while isinstance(expr, ast.Attribute):  # (a loop: a dotted name may be thousands long)
        attrs.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    base = names.get(expr.id, expr.id)
    if not attrs or not base:
        return base if not attrs else None
    attrs.append(base)
    attrs.reverse()
    return ".".join(attrs)
