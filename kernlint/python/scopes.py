"""Python scopes: where each name is bound and which scope each use resolves to.

A small, conservative model of Python's scoping rules (module, function, lambda, comprehension
and class scopes; `global`/`nonlocal`; class bodies not visible from their methods), enough to
ask "is this name bound in this scope, and where is it used?".
"""

from __future__ import annotations

import ast

from ..record import field, record
from . import child_nodes
from . import walk as _walk

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
# Node types the scope visit only descends into (none binds, uses or opens a scope itself).
_PLAIN = frozenset(
    {
        ast.Attribute,
        ast.Call,
        ast.Expr,
        ast.Assign,
        ast.AugAssign,
        ast.BinOp,
        ast.BoolOp,
        ast.UnaryOp,
        ast.Compare,
        ast.Subscript,
        ast.Slice,
        ast.Tuple,
        ast.List,
        ast.Dict,
        ast.Set,
        ast.keyword,
        ast.If,
        ast.For,
        ast.AsyncFor,
        ast.While,
        ast.With,
        ast.AsyncWith,
        ast.withitem,
        ast.Return,
        ast.Raise,
        ast.Assert,
        ast.Try,
        ast.IfExp,
        ast.JoinedStr,
        ast.FormattedValue,
        ast.Starred,
        ast.Await,
        ast.Yield,
        ast.YieldFrom,
        ast.Delete,
    }
)


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
    global_names: frozenset[str] | None = field(default=None, repr=False)  # (see _is_global)

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
    """Does a `global` statement in the scope's node (nested ones included) name `name`?
    (The node is walked once per scope, not once per use.)"""
    if scope.global_names is None:
        scope.global_names = frozenset(
            n for stmt in _walk(scope.node) if isinstance(stmt, ast.Global) for n in stmt.names
        )
    return name in scope.global_names


def param_names(args) -> list[str]:
    """The names a function's parameters bind, in order."""
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    if args.vararg:
        names.append(args.vararg.arg)
    if args.kwarg:
        names.append(args.kwarg.arg)
    return names


def build(tree: ast.Module) -> list[Scope]:
    """All scopes of a module, the module scope first, in the order a recursive visit in
    source order creates them. (The visit is a loop over a stack of pending work, in that
    same order: a tree may nest as deep as the parser allows.)"""
    module = Scope(tree, "module", None)
    scopes = [module]
    # The work: (node, scope) to visit, or a callable to run at that point of the visit.
    stack: list = []

    def bind_target(target, scope, stmt):
        for node in _walk(target):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                scope.bind(node.id, stmt)

    def new_scope(node, kind, parent, params=()):
        s = Scope(node, kind, parent)
        s.params.update(params)
        scopes.append(s)
        return s

    def defaults(args):
        return args.defaults + [d for d in args.kw_defaults if d is not None]

    def then(work):
        """Schedule `work` (a list of items, in visit order) to run next."""
        stack.extend(reversed(work))

    def children(node, scope):
        then([(child, scope) for child in child_nodes(node)])

    def enter(node, kind, scope, params, body):
        """Create the node's scope, then visit `body` in it (after what came before)."""

        def run():
            inner = new_scope(node, kind, scope, params)
            then([(b, inner) for b in body])

        return run

    def comprehension(node, scope):
        inner = new_scope(node, "comprehension", scope)
        work: list = []
        for i, gen in enumerate(node.generators):
            # The first iterable is evaluated in the enclosing scope.
            work.append((gen.iter, scope if i == 0 else inner))
            work.append(lambda gen=gen: bind_target(gen.target, inner, node))
            work.extend((cond, inner) for cond in gen.ifs)
        for part in ("elt", "key", "value"):
            sub = getattr(node, part, None)
            if sub is not None:
                work.append((sub, inner))
        then(work)

    def visit_node(node, scope):
        t = node.__class__
        if t is ast.Name:  # (the most common nodes first: one type test, not a chain)
            if node.ctx.__class__ is ast.Load:
                scope.uses.append((node.id, node))
            else:
                scope.bind(node.id, node)  # (a store, or del: treat as touching the binding)
            return
        if t in _PLAIN:
            then([(child, scope) for child in child_nodes(node)])
            return
        if t is ast.Constant:
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            scope.bind(node.name, node)
            work = [(d, scope) for d in node.decorator_list]
            work += [(a, scope) for a in defaults(node.args)]
            work.append(enter(node, "function", scope, param_names(node.args), node.body))
            then(work)
        elif isinstance(node, ast.Lambda):
            work = [(a, scope) for a in defaults(node.args)]
            work.append(enter(node, "function", scope, param_names(node.args), [node.body]))
            then(work)
        elif isinstance(node, ast.ClassDef):
            scope.bind(node.name, node)
            parts = node.decorator_list + node.bases + [k.value for k in node.keywords]
            work = [(d, scope) for d in parts]
            work.append(enter(node, "class", scope, (), node.body))
            then(work)
        elif isinstance(node, _COMPS):
            comprehension(node, scope)
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
            then([(node.value, scope)])
        elif isinstance(node, ast.ExceptHandler):
            if node.name:
                scope.bind(node.name, node)
            children(node, scope)
        elif isinstance(node, (ast.AnnAssign, ast.arg)):
            # Annotations are not evaluated under `from __future__ import annotations` and
            # are never a CUDA-path NameError worth reporting: skip them.
            if isinstance(node, ast.AnnAssign):
                work = [(node.target, scope)]
                if node.value is not None:
                    work.append((node.value, scope))
                then(work)
        elif isinstance(node, ast.MatchAs) or isinstance(node, ast.MatchStar):
            if node.name:
                scope.bind(node.name, node)
            children(node, scope)
        elif isinstance(node, ast.MatchMapping):
            if node.rest:
                scope.bind(node.rest, node)
            children(node, scope)
        else:
            children(node, scope)

    then([(stmt, module) for stmt in tree.body])
    while stack:
        item = stack.pop()
        if callable(item):
            item()
        else:
            visit_node(*item)
    return scopes
