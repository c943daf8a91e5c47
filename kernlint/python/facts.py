"""Shared facts about one Python file (imports), computed once on first use."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cached_property


@dataclass(frozen=True)
class Import:
    node: ast.AST
    module: str  # the imported module (`a.b` for `import a.b` and `from a.b import c`)
    names: tuple[tuple[str, str], ...]  # (imported name, bound alias); ("*", "*") for star
    level: int  # relative import level
    in_function: bool


class PyFacts:
    def __init__(self, tree, source) -> None:
        self.tree = tree
        self.source = source

    @cached_property
    def imports(self) -> list[Import]:
        out: list[Import] = []

        def visit(node, in_function):
            for child in ast.iter_child_nodes(node):
                inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
                if isinstance(child, ast.Import):
                    for alias in child.names:
                        bound = alias.asname or alias.name.split(".")[0]
                        out.append(
                            Import(child, alias.name, ((alias.name, bound),), 0, in_function)
                        )
                elif isinstance(child, ast.ImportFrom):
                    names = tuple((a.name, a.asname or a.name) for a in child.names)
                    out.append(Import(child, child.module or "", names, child.level, in_function))
                visit(child, inner)

        if self.tree is not None:
            visit(self.tree, False)
        return out
