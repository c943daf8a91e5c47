"""Python scopes: where each name is bound and which scope each use resolves to.

A small, conservative model of Python's scoping rules (module, function, lambda, comprehension
and class scopes; `global`/`nonlocal`; class bodies not visible from their methods), enough to
ask "is this name bound in this scope, and where is it used?".
"""

from __future__ import annotations

import ast

from ..record import field, record

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


@record(eq=False)
class Scope:
    node: ast.AST
    kind: str  # "module" | "function" | "class" | "comprehension"
    parent: Scope | None
    bindings: dict[str, list[ast.AST]] = field(default_factory=dict)
    params: set[str] = field(default_factory=set)
    declared: set[str] = field(default_factory=set)  # global / nonlocal names
    uses: list[tuple[str, ast.Name]] = field(default_factory=list)
    unknown: bool = False  # `from x import *`, `exec`, `locals()` writes: give up

    def bind(self, name: str, node: ast.AST) -> None:
        self.bindings.setdefault(name, []).append(node)

    def resolve(self, name: str) -> Scope | None:
        """The scope a use of `name` in this scope refers to (None: builtin or undefined)."""
        scope: Scope | None = self
        first = True
        while scope is not None:
            if name in scope.declared and scope.kind != "module":
                return _module(scope) if _is_global(scope, name) else None
            if (first or scope.kind != "class") and (
                name in scope.bindings or name in scope.params
            ):
                return scope
            first = False
            scope = scope.parent
        return None


def _module(scope: Scope) -> Scope:
    while scope.parent is not None:
        scope = scope.parent
    return scope


def _is_global(scope: Scope, name: str) -> bool:
    for stmt in ast.walk(scope.node):
        if isinstance(stmt, ast.Global) and name in stmt.names:
            return True
    return False


def build(tree: ast.Module) -> list[Scope]:
    """All scopes of a module, the module scope first."""
    module = Scope(tree, "module", None)
    scopes = [module]

    def bind_target(target, scope, stmt):
        for node in ast.walk(target):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                scope.bind(node.id, stmt)

    def visit(node, scope):
        for child in ast.iter_child_nodes(node):
            visit_node(child, scope)

    def new_scope(node, kind, parent, params=()):
        s = Scope(node, kind, parent)
        s.params.update(params)
        scopes.append(s)
        return s

    def visit_args(args, scope):
        for a in args.defaults + [d for d in args.kw_defaults if d is not None]:
            visit_node(a, scope)

    def params_of(args):
        names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
        if args.vararg:
            names.append(args.vararg.arg)
        if args.kwarg:
            names.append(args.kwarg.arg)
        return names

    def visit_node(node, scope):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            scope.bind(node.name, node)
            for d in node.decorator_list:
                visit_node(d, scope)
            visit_args(node.args, scope)
            inner = new_scope(node, "function", scope, params_of(node.args))
            for stmt in node.body:
                visit_node(stmt, inner)
        elif isinstance(node, ast.Lambda):
            visit_args(node.args, scope)
            inner = new_scope(node, "function", scope, params_of(node.args))
            visit_node(node.body, inner)
        elif isinstance(node, ast.ClassDef):
            scope.bind(node.name, node)
            for d in node.decorator_list + node.bases + [k.value for k in node.keywords]:
                visit_node(d, scope)
            inner = new_scope(node, "class", scope)
            for stmt in node.body:
                visit_node(stmt, inner)
        elif isinstance(node, _COMPS):
            inner = new_scope(node, "comprehension", scope)
            for i, gen in enumerate(node.generators):
                # The first iterable is evaluated in the enclosing scope.
                visit_node(gen.iter, scope if i == 0 else inner)
                bind_target(gen.target, inner, node)
                for cond in gen.ifs:
                    visit_node(cond, inner)
            for part in ("elt", "key", "value"):
                sub = getattr(node, part, None)
                if sub is not None:
                    visit_node(sub, inner)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            scope.declared.update(node.names)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name == "*":
                    scope.unknown = True
                    continue
                bound = alias.asname or alias.name.split(".")[0]
                scope.bind(bound, node)
        elif isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                scope.uses.append((node.id, node))
            elif isinstance(node.ctx, ast.Store):
                scope.bind(node.id, node)
            else:
                scope.bind(node.id, node)  # del: treat as touching the binding
        elif isinstance(node, ast.NamedExpr):
            target = scope
            while target.kind == "comprehension" and target.parent is not None:
                target = target.parent
            target.bind(node.target.id, node)
            visit_node(node.value, scope)
        elif isinstance(node, ast.ExceptHandler):
            if node.name:
                scope.bind(node.name, node)
            visit(node, scope)
        elif isinstance(node, (ast.AnnAssign, ast.arg)):
            # Annotations are not evaluated under `from __future__ import annotations` and
            # are never a CUDA-path NameError worth reporting: skip them.
            if isinstance(node, ast.AnnAssign):
                visit_node(node.target, scope)
                if node.value is not None:
                    visit_node(node.value, scope)
        elif isinstance(node, ast.MatchAs) or isinstance(node, ast.MatchStar):
            if node.name:
                scope.bind(node.name, node)
            visit(node, scope)
        elif isinstance(node, ast.MatchMapping):
            if node.rest:
                scope.bind(node.rest, node)
            visit(node, scope)
        else:
            visit(node, scope)

    for stmt in tree.body:
        visit_node(stmt, module)
    return scopes
