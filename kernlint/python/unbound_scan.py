"""Fast paths of `cuda-path-unbound-name`: which bindings run only off CUDA, judged from the
statements; the scopes of a module in one loop.

The rule reports a name whose every binding in its scope is under a condition false on CUDA
(`Guards.on_cuda(binding, others=False) is False`). A statement's binding (an assignment's,
`for`'s or `with`'s target, an import, a `def` or `class`, a `del`, an `except ... as` name, a
`case` pattern) has its statement's path on CUDA: the conditions of the `if` statements around
it and the early exits (`if c: return`, `assert c`) before it in each block. One walk over the
statements gives every binding the answer `on_cuda` would give, evaluating a condition only
when a binding under it could change the result, and so the (scope, name) pairs the rule must
look at: in most files none, and then no expression is walked. Assignment expressions (`:=`)
are looked for only in the statements on the lines that hold one.
"""

from __future__ import annotations

import ast
from bisect import bisect_left

from . import LineSearch, child_nodes
from . import walk as _walk
from .scopes import param_names

_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
# Statements that bind nothing themselves and hold no statement block.
_INERT = frozenset({ast.Expr, ast.Return, ast.Raise, ast.Pass, ast.Break, ast.Continue})
_TRY = tuple(t for t in (ast.Try, getattr(ast, "TryStar", None)) if t is not None)


class _Scope:
    __slots__ = ("node", "kind", "on", "off", "params", "declared", "unknown")

    def __init__(self, node, kind: str, params=()) -> None:
        self.node = node
        self.kind = kind
        self.on: set[str] = set()  # names with a binding that can run on CUDA
        self.off: set[str] = set()  # names with a binding that cannot
        self.params = set(params)
        self.declared: set[str] = set()
        self.unknown = False


def _target_names(target, out: list) -> None:
    """Names a target binds (`x`, `x, *y`, `[a, b]`; not `a.x` or `a[i]`, whose names are
    read)."""
    stack = [target]
    while stack:
        t = stack.pop()
        c = t.__class__
        if c is ast.Name:
            out.append(t.id)
        elif c is ast.Tuple or c is ast.List:
            stack.extend(t.elts)
        elif c is ast.Starred:
            stack.append(t.value)


def _pattern_names(pattern, out: list) -> None:
    """Names a `case` pattern binds (`MatchAs`, `MatchStar` names, `MatchMapping` rests)."""
    stack = [pattern]
    while stack:
        p = stack.pop()
        if isinstance(p, (ast.MatchAs, ast.MatchStar)):
            if p.name:
                out.append(p.name)
            sub = getattr(p, "pattern", None)
            if sub is not None:
                stack.append(sub)
        elif isinstance(p, ast.MatchMapping):
            if p.rest:
                out.append(p.rest)
            stack.extend(p.patterns)
        elif isinstance(p, ast.MatchOr):
            stack.extend(p.patterns)
        elif isinstance(p, ast.MatchSequence):
            stack.extend(p.patterns)
        elif isinstance(p, ast.MatchClass):
            stack.extend(p.patterns)
            stack.extend(p.kwd_patterns)


class _Path:
    """A condition (`test` holds if `pol`, fails if not) on the way to a block, below the
    conditions `up` (a `_Path`, or False: none); `off` once judged: does a condition false on
    CUDA hold there (None: not judged yet)?"""

    __slots__ = ("test", "pol", "up", "off")

    def __init__(self, test, pol: bool, up) -> None:
        self.test = test
        self.pol = pol
        self.up = up
        self.off = None


class StatementBindings:
    """What `statement_bindings` found: `on`, the (id of the scope's node, name) pairs with a
    statement binding that can run on CUDA; `only_off`, those of module and function scopes
    (not one with `from x import *`), the name not a parameter nor `global`/`nonlocal` there,
    whose statement bindings are all false on CUDA."""

    __slots__ = ("on", "only_off")

    def __init__(self, on: set, only_off: set) -> None:
        self.on = on
        self.only_off = only_off


def statement_bindings(tree, guards, data: bytes) -> StatementBindings | None:
    """Every binding of module and function scopes, each judged as `guards.on_cuda(binding,
    others=False) is False` judges it, from the conditions of the statements around it
    (`guards.cuda_value(test, others=False)`, once per condition). A statement's expressions
    are walked only where an assignment expression (`:=`, found in `data`, the tree's source)
    may be: its own conditions (`a if c else b`, `c and f()`) count too. None for a tree
    holding a statement this walk does not know, or an assignment expression in an `except`
    clause or an f-string."""
    memo: dict = {}  # id(test) -> its value on CUDA (True, False or None: unknown)
    value = guards.cuda_value

    def false(test, pol: bool) -> bool:
        key = id(test)
        found = memo.get(key, memo)
        if found is memo:
            found = memo[key] = value(test, others=False)
        return found is not None and found != pol

    def resolve(state) -> bool:
        """Is a condition on the way false on CUDA? The conditions are evaluated only now,
        outermost first, and no further than the first false one."""
        if state.__class__ is bool:
            return state
        todo = []
        while state.__class__ is _Path and state.off is None:
            todo.append(state)
            state = state.up
        off = state if state.__class__ is bool else state.off
        for step in reversed(todo):
            off = step.off = off or false(step.test, step.pol)
        return off

    def bind(scope, names, path) -> None:
        if not scope.on.issuperset(names):  # (else the answer changes nothing)
            (scope.off if resolve(path) else scope.on).update(names)

    def named_expressions(stmt, scope, path) -> bool:
        """Bind the assignment expressions of the statement's own expressions (those
        `scopes.build` visits); False where this walk cannot tell their conditions."""
        roots = _expression_roots(stmt)
        if roots is None:
            return False
        work = [(r, scope, path) for r in roots]
        while work:
            node, sc, p = work.pop()
            c = node.__class__
            if c is ast.NamedExpr:
                bind(sc, (node.target.id,), p)
                work.append((node.value, sc, p))
            elif c is ast.IfExp:
                work.append((node.test, sc, p))
                work.append((node.body, sc, _Path(node.test, True, p)))
                work.append((node.orelse, sc, _Path(node.test, False, p)))
            elif c is ast.BoolOp and node.op.__class__ is ast.And:
                for v in node.values:
                    work.append((v, sc, p))
                    p = _Path(v, True, p)  # (for the operands after it)
            elif c is ast.Lambda:
                work.extend((d, sc, p) for d in _defaults(node.args))
                inner = _Scope(node, "function", param_names(node.args))
                scopes.append(inner)
                work.append((node.body, inner, p))
            elif c is ast.JoinedStr:
                if any(n.__class__ is ast.NamedExpr for n in _walk(node)):
                    return False  # (positions inside an f-string: the guard model's own)
            else:
                work.extend((n, sc, p) for n in child_nodes(node) if not isinstance(n, ast.stmt))
        return True

    walrus = _lines_holding(data, b":=") if b":=" in data else None
    module = _Scope(tree, "module")
    scopes = [module]
    # Work: (block, scope, path): the statements of `block`, in `scope`; `path` says whether
    # a condition false on CUDA holds on the way to the block: False, or a `_Path` of the
    # conditions, judged when a statement there binds a name the scope has not bound on CUDA
    # (most conditions around no such binding are never evaluated).
    stack: list = [(tree.body, module, False)]
    while stack:
        block, scope, path = stack.pop()
        for stmt in block:
            c = stmt.__class__
            if walrus is not None and _holds_a_line(walrus, stmt):
                if not named_expressions(stmt, scope, path):
                    return None
            if c in _INERT:
                continue
            names: list[str] = []
            if c is ast.Assign:
                targets = stmt.targets
                if len(targets) == 1 and targets[0].__class__ is ast.Name:  # (most of them)
                    name = targets[0].id
                    if name not in scope.on:
                        (scope.off if resolve(path) else scope.on).add(name)
                    continue
                for t in targets:
                    _target_names(t, names)
            elif c is ast.If:
                test = stmt.test
                stack.append((stmt.body, scope, _Path(test, True, path)))
                if stmt.orelse:
                    stack.append((stmt.orelse, scope, _Path(test, False, path)))
                elif stmt.body and isinstance(stmt.body[-1], _EXITS):
                    path = _Path(test, False, path)  # (for the statements after it)
            elif c in _FUNCS:
                names.append(stmt.name)
                inner = _Scope(stmt, "function", param_names(stmt.args))
                scopes.append(inner)
                stack.append((stmt.body, inner, path))
            elif c is ast.ClassDef:
                names.append(stmt.name)
                inner = _Scope(stmt, "class")
                scopes.append(inner)
                stack.append((stmt.body, inner, path))
            elif c is ast.Import:
                for alias in stmt.names:
                    names.append(alias.asname or alias.name.split(".")[0])
            elif c is ast.ImportFrom:
                for alias in stmt.names:
                    if alias.name == "*":
                        scope.unknown = True
                    else:
                        names.append(alias.asname or alias.name.split(".")[0])
            elif c is ast.AugAssign or c is ast.AnnAssign:
                _target_names(stmt.target, names)
            elif c is ast.For or c is ast.AsyncFor:
                _target_names(stmt.target, names)
                stack.append((stmt.body, scope, path))
                stack.append((stmt.orelse, scope, path))
            elif c is ast.While:
                stack.append((stmt.body, scope, path))
                stack.append((stmt.orelse, scope, path))
            elif c is ast.With or c is ast.AsyncWith:
                for item in stmt.items:
                    if item.optional_vars is not None:
                        _target_names(item.optional_vars, names)
                stack.append((stmt.body, scope, path))
            elif c in _TRY:
                stack.append((stmt.body, scope, path))
                for h in stmt.handlers:
                    if h.name:
                        names.append(h.name)
                    stack.append((h.body, scope, path))
                stack.append((stmt.orelse, scope, path))
                stack.append((stmt.finalbody, scope, path))
            elif c is ast.Assert:
                path = _Path(stmt.test, True, path)  # (for the statements after it)
            elif c is ast.Global or c is ast.Nonlocal:
                scope.declared.update(stmt.names)
            elif c is ast.Delete:
                for t in stmt.targets:
                    _target_names(t, names)
            elif c is ast.Match:
                for case in stmt.cases:
                    _pattern_names(case.pattern, names)
                    stack.append((case.body, scope, path))
            else:
                return None  # (a statement of a newer Python: `type X = ...`)
            if names:
                bind(scope, names, path)
    on = set()
    only_off = set()
    for sc in scopes:
        key = id(sc.node)
        on.update((key, name) for name in sc.on)
        if sc.kind == "class" or sc.unknown or not sc.off:
            continue
        for name in sc.off - sc.on - sc.params - sc.declared:
            only_off.add((key, name))
    return StatementBindings(on, only_off)


def _expression_roots(stmt) -> list | None:
    """The expressions of a statement that `scopes.build` visits (not annotations, not the
    statements of its blocks); None for a handler's exception holding `:=` (the guard model
    sees no condition around it)."""
    c = stmt.__class__
    if c in _FUNCS:
        return stmt.decorator_list + _defaults(stmt.args)
    if c is ast.ClassDef:
        return stmt.decorator_list + stmt.bases + [k.value for k in stmt.keywords]
    if c is ast.AnnAssign:
        return [stmt.target] if stmt.value is None else [stmt.target, stmt.value]
    if c in _TRY:
        for h in stmt.handlers:
            if h.type is not None and any(n.__class__ is ast.NamedExpr for n in _walk(h.type)):
                return None
        return []
    return [n for n in child_nodes(stmt) if not isinstance(n, (ast.stmt, ast.ExceptHandler))]


def _lines_holding(data: bytes, word: bytes) -> list[int]:
    """The (1-based) lines holding `word`, as Python counts lines, in order."""
    lines = LineSearch(data)
    find = lines.view.find
    out = []
    i = find(word)
    while i >= 0:
        line = lines.number(i) + 1
        if not out or out[-1] != line:
            out.append(line)
        i = find(word, i + len(word))
    return out


def _holds_a_line(lines: list[int], stmt) -> bool:
    """Does the statement (its decorators included) span one of the sorted `lines`?"""
    first = stmt.lineno
    for d in getattr(stmt, "decorator_list", ()):
        first = min(first, d.lineno)
    i = bisect_left(lines, first)
    return i < len(lines) and lines[i] <= (stmt.end_lineno or stmt.lineno)


# -- scopes ---------------------------------------------------------------------------------
_SET_SCOPE = 0  # work item (_SET_SCOPE, scope): what follows is visited in `scope`
_ENTER = 1  # (_ENTER, node, kind, params, body): open the node's scope and visit `body` in it
_BIND = 2  # (_BIND, target, scope, node): a comprehension's target binds its names to `node`
_LEAF_FIELDS = frozenset({"ctx", "op", "ops"})
_REVERSED_FIELDS: dict[type, tuple[str, ...]] = {}
_COMPS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _reversed_fields(c) -> tuple[str, ...]:
    found = _REVERSED_FIELDS.get(c)
    if found is None:
        found = _REVERSED_FIELDS[c] = tuple(f for f in reversed(c._fields) if f not in _LEAF_FIELDS)
    return found


def build_scopes(tree) -> list:
    """`kernlint.python.scopes.build(tree)`: the same scopes, in the same order, with the same
    bindings, uses and declarations in the same order (so everything judged from them is
    judged alike), from one loop over a stack of nodes whose most common types are taken
    apart directly (the scope is switched by markers on the stack, not carried by each item).
    No recursion: a tree may nest as deep as the parser allows."""
    from .scopes import Scope

    # (the node types as locals: the loop below tests them for every node)
    AST, Name, Load, Attribute = ast.AST, ast.Name, ast.Load, ast.Attribute
    Constant, Call, keyword, Expr = ast.Constant, ast.Call, ast.keyword, ast.Expr
    Assign, Subscript, BinOp, Tuple = ast.Assign, ast.Subscript, ast.BinOp, ast.Tuple
    List, Compare, Return, If = ast.List, ast.Compare, ast.Return, ast.If
    funcs = _FUNCS
    module = Scope(tree, "module", None)
    scopes = [module]
    scope = module
    uses = module.uses
    bindings = module.bindings
    stack: list = list(reversed(tree.body))
    push = stack.append
    extend = stack.extend
    pop = stack.pop
    while stack:
        node = pop()
        c = node.__class__
        if c is Name:
            if node.ctx.__class__ is Load:
                uses.append((node.id, node))
            else:  # (a store, or del: treat as touching the binding)
                found = bindings.get(node.id)
                if found is None:
                    bindings[node.id] = [node]
                else:
                    found.append(node)
            continue
        # (A name that is the first child visited is taken at once, not pushed: the same
        # order. The value of an attribute, a called function and a keyword's value are
        # always read, never stores.)
        if c is Attribute:
            v = node.value
            while v.__class__ is Attribute:
                v = v.value
            if v.__class__ is Name:
                uses.append((v.id, v))
            else:
                push(v)
            continue
        if c is Constant:
            continue
        if c is Call:
            if node.keywords:
                extend(reversed(node.keywords))
            if node.args:
                extend(reversed(node.args))
            v = node.func
            while v.__class__ is Attribute:
                v = v.value
            if v.__class__ is Name:
                uses.append((v.id, v))
            else:
                push(v)
            continue
        if c is keyword:
            v = node.value
            if v.__class__ is Name:
                uses.append((v.id, v))
            elif v.__class__ is not Constant:
                push(v)
            continue
        if c is Expr or c is Return:
            if node.value is not None:
                push(node.value)
            continue
        if c is Assign:
            push(node.value)
            extend(reversed(node.targets))
            continue
        if c is Subscript:
            push(node.slice)
            push(node.value)
            continue
        if c is BinOp:
            push(node.right)
            push(node.left)
            continue
        if c is Tuple or c is List:
            extend(reversed(node.elts))
            continue
        if c is Compare:
            extend(reversed(node.comparators))
            push(node.left)
            continue
        if c is If:
            extend(reversed(node.orelse))
            extend(reversed(node.body))
            push(node.test)
            continue
        if c is tuple:  # a marker
            kind = node[0]
            if kind == _SET_SCOPE:
                scope = node[1]
            elif kind == _ENTER:
                _, owner, skind, params, body = node
                inner = Scope(owner, skind, scope)
                inner.params.update(params)
                scopes.append(inner)
                push((_SET_SCOPE, scope))
                extend(reversed(body))
                scope = inner
            else:
                _, target, inner, owner = node
                for n in _walk(target):
                    if isinstance(n, Name) and isinstance(n.ctx, ast.Store):
                        inner.bind(n.id, owner)
            uses = scope.uses
            bindings = scope.bindings
            continue
        if c in funcs:
            scope.bind(node.name, node)
            args = node.args
            push((_ENTER, node, "function", param_names(args), node.body))
            extend(reversed(_defaults(args)))
            extend(reversed(node.decorator_list))
        elif c is ast.Lambda:
            args = node.args
            push((_ENTER, node, "function", param_names(args), [node.body]))
            extend(reversed(_defaults(args)))
        elif c is ast.ClassDef:
            scope.bind(node.name, node)
            push((_ENTER, node, "class", (), node.body))
            parts = node.decorator_list + node.bases + [k.value for k in node.keywords]
            extend(reversed(parts))
        elif c in _COMPS:
            inner = Scope(node, "comprehension", scope)
            scopes.append(inner)
            work: list = []
            for i, gen in enumerate(node.generators):
                # The first iterable is evaluated in the enclosing scope.
                if i == 0:
                    work.append(gen.iter)
                    work.append((_SET_SCOPE, inner))
                else:
                    work.append(gen.iter)
                work.append((_BIND, gen.target, inner, node))
                work.extend(gen.ifs)
            for part in ("elt", "key", "value"):
                sub = getattr(node, part, None)
                if sub is not None:
                    work.append(sub)
            work.append((_SET_SCOPE, scope))
            extend(reversed(work))
        elif c is ast.Global or c is ast.Nonlocal:
            scope.declared.update(node.names)
        elif c is ast.Import or c is ast.ImportFrom:
            for alias in node.names:
                if alias.name == "*":
                    scope.unknown = True
                    continue
                scope.bind(alias.asname or alias.name.split(".")[0], node)
        elif c is ast.NamedExpr:
            target = scope
            while target.kind == "comprehension" and target.parent is not None:
                target = target.parent
            target.bind(node.target.id, node)
            push(node.value)
        elif c is ast.AnnAssign:
            # Annotations are not evaluated under `from __future__ import annotations` and
            # are never a CUDA-path NameError worth reporting: skip them.
            if node.value is not None:
                push(node.value)
            push(node.target)
        elif c is ast.arg:
            pass
        else:
            if c is ast.ExceptHandler or c is ast.MatchAs or c is ast.MatchStar:
                if node.name:
                    scope.bind(node.name, node)
            elif c is ast.MatchMapping:
                if node.rest:
                    scope.bind(node.rest, node)
            for f in _reversed_fields(c):
                value = getattr(node, f, None)
                if value.__class__ is list:
                    for item in reversed(value):
                        if isinstance(item, AST):
                            push(item)
                elif isinstance(value, AST):
                    push(value)
    return scopes


def _defaults(args) -> list:
    return args.defaults + [d for d in args.kw_defaults if d is not None]
