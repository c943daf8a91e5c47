"""Can an import run on a machine where aiter is not enabled, on a path that did not select
aiter? The local half of `ungated-aiter-import`'s default (`reachable`) policy.

Two machines are modelled: CUDA (`_is_hip` false, `_is_cuda` true) and ROCm without aiter
(`_is_hip` true, `SGLANG_USE_AITER` off, aiter not installed). Every condition on the way to
an import (enclosing `if`s, `elif`/`else`, early exits, `a if c else b`, `c and ...`, and the
`skipIf`/`skipUnless` decorators of enclosing tests) is evaluated on each, to true, false,
unknown (may hold), or "cannot tell". An import is silent when no machine can reach it:

* aiter gates (`_use_aiter`, `_use_aiter_*`, `USE_AITER*`, names derived from them; or the
  `aiter-gates` setting's names, see `Guards.use_gates`) are false;
* a condition that names aiter (`get_moe_runner_backend().is_aiter()`, `backend ==
  "aiter_sparse"`, `getattr(w, "aiter_bpreshuffled", False)`) means aiter was selected: false;
* an environment switch takes its default: `get_bool_env_var("X")` is off unless a default
  says otherwise, `envs.X.get()` has the default declared by `X = EnvBool(...)` in the
  checked package (unknown there: "cannot tell", so silent);
* an availability probe (a name bound by an aiter import inside `try:`/`except ImportError`,
  or the result of a function that returns a falsy value when aiter does not import) is
  false: aiter is not installed;
* `_is_hip`/`is_hip()`/`_is_rocm` hold on ROCm only, `_is_cuda` on CUDA only, `_is_npu` and
  the other platforms on neither, `gfx` architecture checks are false on CUDA and unknown on
  ROCm, `TYPE_CHECKING` is false; module-level and function-local names assigned once are
  evaluated through their value.

An import inside `try:` whose handler catches ImportError (or a superclass: `Exception`,
`BaseException`, a bare `except:`) is silent. A function-local import is further silent when:
the function, or a class around it, or the package module holding it, is named for aiter
(`forward_aiter`, `AiterRunnerCore`, `moe_runner/aiter.py`); the function imports aiter (or
an aiter-named module) unconditionally before it; or nothing in the function itself chooses
the path to it (no `if`/early exit of its own, lazy-initialization tests of globals and
probes aside): such a wrapper runs when its caller chooses, which this analysis cannot see.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left
from functools import cached_property

from ..lazyre import lazy_compile
from . import walk as _walk
from .guards import (
    _IMPORT_ERRORS,
    AITER_ENV,
    CUDA_CALLS,
    CUDA_NAMES,
    HIP_CALLS,
    HIP_NAMES,
    OTHER_CALLS,
    OTHER_NAMES,
    _handler_names,
    hip_test,
    module_level,
)

CUDA, ROCM = 0, 1
MODELS = (CUDA, ROCM)
MACHINE = {CUDA: "CUDA", ROCM: "ROCm without aiter enabled"}
CANNOT = "cannot-tell"  # a fourth truth value: whether the condition holds cannot be told
IMPORT_ERRORS = _IMPORT_ERRORS  # ImportError and its superclasses
_AITER = lazy_compile(r"(?<![wW])[aA][iI][tT][eE][rR]")
_GFX = lazy_compile(r"gfx", re.I)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_NAME_BUDGET = 8  # how many assignments a condition is followed through


def names_aiter(text: str) -> bool:
    return bool(_AITER.search(text))


def is_aiter_module(name: str) -> bool:
    return name == "aiter" or name.startswith("aiter.")


def catches_import_errors(try_node) -> bool:
    return any(h.type is None or _handler_names(h.type) & IMPORT_ERRORS for h in try_node.handlers)


def _not4(v):
    if v is None or v is CANNOT:
        return v
    return not v


def _combine4(op: str, args: list):
    if op == "not":
        return _not4(args[0])
    if op == "and":
        if False in args:
            return False
        if CANNOT in args:
            return CANNOT
        return True if all(a is True for a in args) else None
    if True in args:
        return True
    if CANNOT in args:
        return CANNOT
    return False if all(a is False for a in args) else None


def _str_const(node) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _func_name(fn) -> str:
    if isinstance(fn, ast.Name):
        return fn.id
    if isinstance(fn, ast.Attribute):
        return fn.attr
    return ""


def _mentions_aiter(expr) -> bool:
    """Does an expression name aiter (an identifier, attribute or string)?"""
    for sub in _walk(expr):
        if isinstance(sub, ast.Name) and names_aiter(sub.id):
            return True
        if isinstance(sub, ast.Attribute) and names_aiter(sub.attr):
            return True
        s = _str_const(sub)
        if s is not None and names_aiter(s):
            return True
    return False


def _imported_module(node) -> str | None:
    """The absolute module an `import`/`from` statement names first (None: relative)."""
    if isinstance(node, ast.Import):
        return node.names[0].name if node.names else None
    if isinstance(node, ast.ImportFrom):
        return node.module if node.level == 0 else "." * node.level + (node.module or "")
    return None


def _imports_aiter(stmt) -> bool:
    if isinstance(stmt, ast.Import):
        return any(is_aiter_module(a.name) for a in stmt.names)
    if isinstance(stmt, ast.ImportFrom):
        return stmt.level == 0 and is_aiter_module(stmt.module or "")
    return False


def _imports_aiter_named(stmt) -> bool:
    """An import of aiter or of a module named for aiter (`...moe_runner.aiter`)."""
    if _imports_aiter(stmt):
        return True
    if isinstance(stmt, ast.Import):
        return any(names_aiter(a.name) for a in stmt.names)
    if isinstance(stmt, ast.ImportFrom):
        return names_aiter(stmt.module or "")
    return False


def _bound_names(stmt) -> set[str]:
    out = set()
    for a in stmt.names:
        if a.name == "*":
            continue
        out.add(a.asname or a.name.split(".")[0])
    return out


def _falsy_const(node) -> bool:
    return node is None or (isinstance(node, ast.Constant) and not node.value)


def _walk_function(func):
    """Statements of a function body, nested functions and classes left out."""
    stack = list(reversed(func.body))
    while stack:
        stmt = stack.pop()
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            block = getattr(stmt, field, None)
            if isinstance(block, list):
                stack.extend(reversed([s for s in block if isinstance(s, ast.stmt)]))
        for h in getattr(stmt, "handlers", ()) or ():
            stack.extend(reversed(h.body))
        for case in getattr(stmt, "cases", ()) or ():
            stack.extend(reversed(case.body))


def _probe_names_in(statements) -> set[str]:
    """Names that say whether aiter imported: bound by an aiter import in a `try:` catching
    ImportError, or assigned there and a falsy value in the handler."""
    out: set[str] = set()
    for stmt in statements:
        if not isinstance(stmt, ast.Try) or not catches_import_errors(stmt):
            continue
        if not any(_imports_aiter(s) for s in stmt.body):
            continue
        assigned = set()
        for s in stmt.body:
            if _imports_aiter(s):
                out |= _bound_names(s)
            elif isinstance(s, ast.Assign):
                assigned |= {t.id for t in s.targets if isinstance(t, ast.Name)}
        for h in stmt.handlers:
            for s in h.body:
                if isinstance(s, ast.Assign) and _falsy_const(s.value):
                    out |= {t.id for t in s.targets if isinstance(t, ast.Name)} & assigned
    return out


class _Scope:
    """What a function (or the module) says about its own names."""

    __slots__ = ("assigns", "probes", "globals")

    def __init__(self, assigns, probes, globals_) -> None:
        self.assigns = assigns  # name -> its only assigned value (None: assigned more often)
        self.probes = probes
        self.globals = globals_


class Judge:
    """The reachable-policy verdict on the imports of one parsed file."""

    def __init__(self, tree, guards, env_defaults, package_module: str | None = None) -> None:
        self.tree = tree
        self.guards = guards
        self.env = env_defaults  # name -> default value, or None (no table known)
        self.module = package_module  # dotted name, None for a script
        self._memo: dict = {}
        self._scopes: dict = {}

    # -- scopes ---------------------------------------------------------------------------
    @cached_property
    def module_scope(self) -> _Scope:
        assigns: dict = {}
        statements = []
        for stmt, _ in module_level(self.tree):
            statements.append(stmt)
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                t = stmt.targets[0]
                if isinstance(t, ast.Name):
                    assigns[t.id] = stmt.value if t.id not in assigns else None
            elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) and isinstance(
                stmt.target, ast.Name
            ):
                assigns[stmt.target.id] = None
        probes = _probe_names_in(statements)
        for name, value in assigns.items():
            if self._is_probe_call(value):
                probes.add(name)
        return _Scope(assigns, probes, frozenset())

    @cached_property
    def probe_functions(self) -> frozenset[str]:
        """Module-level functions that return a falsy value when aiter does not import."""
        out = set()
        for stmt in self.tree.body:
            if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for s in _walk_function(stmt):
                if not isinstance(s, ast.Try) or not any(_imports_aiter(b) for b in s.body):
                    continue
                for h in s.handlers:
                    if h.type is None or _handler_names(h.type) & IMPORT_ERRORS:
                        if any(isinstance(r, ast.Return) and _falsy_const(r.value) for r in h.body):
                            out.add(stmt.name)
        return frozenset(out)

    def _is_probe_call(self, value) -> bool:
        return (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id in self.probe_functions
        )

    def scope(self, func) -> _Scope:
        if func is None or isinstance(func, ast.Lambda):
            return self.module_scope
        found = self._scopes.get(id(func))
        if found is None:
            assigns: dict = {}
            globals_: set = set()
            statements = list(_walk_function(func))
            for s in statements:
                if isinstance(s, ast.Assign):
                    for t in s.targets:
                        if isinstance(t, ast.Name):
                            ok = len(s.targets) == 1 and t.id not in assigns
                            assigns[t.id] = s.value if ok else None
                elif isinstance(s, (ast.AugAssign, ast.AnnAssign, ast.For)):
                    t = s.target
                    if isinstance(t, ast.Name):
                        assigns[t.id] = None
                elif isinstance(s, (ast.Global, ast.Nonlocal)):
                    globals_ |= set(s.names)
            probes = _probe_names_in(statements)
            for name, value in assigns.items():
                if self._is_probe_call(value):
                    probes.add(name)
            found = self._scopes[id(func)] = _Scope(assigns, probes, frozenset(globals_))
        return found

    # -- values -----------------------------------------------------------------------------
    def value(self, test, model: int, func=None, world: int = 0):
        """Truth of a condition on a machine: True, False or None (unknown). An environment
        switch whose default is not known is off in world 0 (turning it on would be an
        explicit choice) and unknown in world 1 (on by default); a path is open only when it
        is open in both."""
        key = (id(test), model, id(func), world)
        if key in self._memo:
            return self._memo[key]
        stack = [(test, None, _NAME_BUDGET)]
        values: list = []
        while stack:
            item, pending, budget = stack.pop()
            if pending is not None:
                op, count = pending
                args = values[len(values) - count :]
                del values[len(values) - count :]
                values.append(_combine4(op, args))
                continue
            kind, arg = self._expand(item, model, func, budget, world)
            if kind == "value":
                values.append(arg)
            elif kind == "expr":
                stack.append((arg, None, budget - 1))
            else:
                operands = (arg,) if kind == "not" else arg
                stack.append((None, (kind, len(operands)), budget))
                stack.extend((o, None, budget) for o in reversed(operands))
        result = self._memo[key] = values[0]
        return result

    def _expand(self, e, model, func, budget, world):
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
            return "not", e.operand
        if isinstance(e, ast.BoolOp):
            return ("and" if isinstance(e.op, ast.And) else "or"), e.values
        if isinstance(e, ast.Name):
            return self._name(e.id, model, func, budget)
        if isinstance(e, ast.Call):
            return "value", self._call(e, model, func, world)
        if isinstance(e, ast.Attribute):
            return "value", self._attribute(e, model)
        if isinstance(e, ast.Compare):
            return "value", self._compare(e, model, func, world)
        if isinstance(e, ast.Constant):
            return "value", bool(e.value)
        return "value", False if _mentions_aiter(e) else None

    def _name(self, name, model, func, budget):
        if name in HIP_NAMES:
            return "value", model == ROCM
        if name in CUDA_NAMES:
            return "value", model == CUDA
        if name in OTHER_NAMES or name == "TYPE_CHECKING":
            return "value", False
        guards = self.guards
        if name in guards.gates or guards.gate_pattern.match(name):
            return "value", False
        scopes = [self.scope(func)] if func is not None else []
        scopes.append(self.module_scope)
        for sc in scopes:
            if name in sc.probes:
                return "value", False
            if name in sc.assigns and name not in sc.globals:
                value = sc.assigns[name]
                if value is not None and budget > 0:
                    return "expr", value
                break
        if names_aiter(name):
            return "value", False
        if _GFX.search(name):
            return "value", False if model == CUDA else None
        return "value", None

    def _call(self, e, model, func, world):
        env = self._env_read(e)
        if env is not None:
            if env[1] is CANNOT:
                return None if world else False
            # Off by default: turning it on is an explicit choice (false on the machines
            # modelled). On by default: it holds, and turning it off selects nothing either.
            return None if env[1] else False
        fn = e.func
        if isinstance(fn, ast.Name) and fn.id in self.probe_functions:
            return False
        name = _func_name(fn)
        if self.guards.gate_names is not None and name in self.guards.gate_names:
            return False  # (a configured gate: `aiter-gates`)
        if name in HIP_CALLS:
            return model == ROCM
        if name in CUDA_CALLS:
            return model == CUDA
        if name in OTHER_CALLS:
            return False
        if _mentions_aiter(e):
            return False
        if _GFX.search(name):
            return False if model == CUDA else None
        return None

    def _attribute(self, e, model):
        if self.guards.gate_names is not None and e.attr in self.guards.gate_names:
            return False  # (a configured gate: `aiter-gates`)
        if e.attr in HIP_CALLS:
            return model == ROCM
        if e.attr in CUDA_CALLS:
            return model == CUDA
        if e.attr in OTHER_CALLS:
            return False
        if _mentions_aiter(e):
            return False
        if _GFX.search(e.attr):
            return False if model == CUDA else None
        return None

    def _compare(self, e, model, func, world):
        if len(e.ops) != 1:
            return False if _mentions_aiter(e) else None
        op, left, right = e.ops[0], e.left, e.comparators[0]
        # `"X" in os.environ`: unset by default
        if isinstance(op, (ast.In, ast.NotIn)) and _is_environ(right):
            name = _str_const(left)
            if name is not None:
                return isinstance(op, ast.NotIn)
        for a, b in ((left, right), (right, left)):
            env = self._env_read(a)
            if env is not None and isinstance(b, ast.Constant):
                if env[1] is CANNOT:
                    if world or not isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)):
                        return None
                    return isinstance(op, (ast.NotEq, ast.NotIn))
                x, y = (env[1], b.value) if a is left else (b.value, env[1])
                return _apply(op, x, y)
        probe = self._probe_operand(left, func)
        if probe and isinstance(right, ast.Constant):
            # a probe holds a truthy value when aiter imported
            present = _apply(op, 1, right.value) if right.value is not None else None
            if isinstance(op, (ast.Is, ast.IsNot)) and right.value is None:
                present = isinstance(op, ast.IsNot)
            if present is None:
                return None
            return False if present else True
        if _mentions_aiter(e):
            negated = isinstance(op, (ast.NotEq, ast.IsNot, ast.NotIn))
            return negated
        return None

    def _probe_operand(self, e, func) -> bool:
        if isinstance(e, ast.Call):
            return isinstance(e.func, ast.Name) and e.func.id in self.probe_functions
        if not isinstance(e, ast.Name):
            return False
        if func is not None and e.id in self.scope(func).probes:
            return True
        return e.id in self.module_scope.probes

    def _env_read(self, e):
        """(name, default) for a read of an environment switch, else None. The default is
        CANNOT where it is not known."""
        if not isinstance(e, ast.Call):
            return None
        fn = e.func
        if isinstance(fn, ast.Attribute) and fn.attr in ("get", "is_set"):
            owner = fn.value
            if (
                isinstance(owner, ast.Attribute)
                and isinstance(owner.value, ast.Name)
                and owner.value.id == "envs"
            ):
                name = owner.attr
                if fn.attr == "is_set":
                    return name, False
                if name == AITER_ENV:
                    return name, False
                if self.env is None or name not in self.env:
                    return name, CANNOT
                return name, self.env[name]
        name = _func_name(fn)
        if not e.args:
            return None
        var = _str_const(e.args[0])
        if var is None:
            return None
        default_node = e.args[1] if len(e.args) > 1 else None
        for kw in e.keywords:
            if kw.arg == "default":
                default_node = kw.value
        if var == AITER_ENV:
            return var, False
        if name == "get_bool_env_var":
            if default_node is None:
                return var, False
            d = _str_const(default_node)
            if d is None:
                if isinstance(default_node, ast.Constant):
                    return var, bool(default_node.value)
                return var, CANNOT
            return var, d.lower() in ("true", "1")
        if name == "get_int_env_var":
            if default_node is None:
                return var, 0
            if isinstance(default_node, ast.Constant):
                return var, default_node.value
            return var, CANNOT
        if name == "getenv" or (name == "get" and _is_environ(fn.value)):
            if default_node is None:
                return var, None
            if isinstance(default_node, ast.Constant):
                return var, default_node.value
            return var, CANNOT
        return None

    # -- paths ------------------------------------------------------------------------------
    def literals(self, node) -> list[tuple]:
        """(test, polarity, kind, inside) for every condition that holds when `node` runs,
        innermost first: kind is "branch" (if/elif/else, `a if c else b`, `c and ...`),
        "exit" (an earlier `if c: return`), "assert", or "decorator" (`skipIf`); inside: in
        the innermost enclosing function."""
        guards = self.guards
        step, stmt = guards.locate(node)
        out = [(t, p, "branch", True) for t, p in guards._local_literals(node, stmt)]
        inside = True
        while step is not None:
            idx, lits = guards._block_exits(step.block)
            for j in range(bisect_left(idx, step.index) - 1, -1, -1):
                kind = "assert" if isinstance(step.block[idx[j]], ast.Assert) else "exit"
                out.append((lits[j][0], lits[j][1], kind, inside))
            owner = step.owner
            if isinstance(owner, ast.If):
                out.append((owner.test, step.field == "body", "branch", inside))
            if isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    inside = False
                for d in owner.decorator_list:
                    lit = _skip_literal(d)
                    if lit is not None:
                        out.append((lit[0], lit[1], "decorator", False))
            step = step.up
        return out

    def _dominated(self, node, func) -> bool:
        """Does the function import aiter, or an aiter-named module, unconditionally before
        the statement holding `node`?"""
        key = ("first-aiter", id(func))
        found = self._scopes.get(key)
        if found is None:
            body = func.body
            first = next((i for i, s in enumerate(body) if _imports_aiter_named(s)), len(body))
            starts = [(s.lineno, s.col_offset) for s in body[: first + 1]]
            found = self._scopes[key] = (first, starts)
        first, starts = found
        if first >= len(func.body):
            return False
        # how many of the body's statements up to that import start before the node
        return bisect_left(starts, (node.lineno, node.col_offset)) > first

    def _lazy_test(self, test, func) -> bool:
        """A lazy-initialization or probe test: only globals of the function and probes."""
        sc = self.scope(func)
        allowed = sc.globals | sc.probes | self.module_scope.probes
        names = []
        for sub in _walk(test):
            if isinstance(sub, ast.Name):
                names.append(sub.id)
            elif isinstance(sub, ast.Call) and not self._is_probe_call(sub):
                return False
        return bool(names) and all(n in allowed or n == "None" for n in names)

    # -- the verdict ------------------------------------------------------------------------
    def verdict(self, node, reasons: bool = False) -> Verdict:
        """`reasons`: say which condition no machine satisfies (costs the node's depth)."""
        guards = self.guards
        if guards.in_try_catching(node, IMPORT_ERRORS):
            return Verdict("silent", "in a `try:` whose handler catches ImportError", why="try")
        # (Each question below is one `first_on_path`/`first_ancestor` query: what each block
        # and step contributes is remembered, so an import costs its depth once for all.)
        closed = self._closed(node)
        open_models = tuple(m for m in MODELS if not closed & (3 << (2 * m)))
        if not open_models:
            why = self._blocked(node) if reasons else "no machine without aiter takes this path"
            return Verdict("silent", why, why="path")
        first = guards.first_on_path(node, ("aiter-reach", "telling"), self._telling_literal)
        hip = first is not None and (
            guards.first_on_path(node, ("aiter-reach", "not-hip"), self._telling_not_hip) is None
        )
        func = guards.enclosing_function(node)
        if func is None:
            return Verdict("module", "", open_models, first, hip)
        named = self._named_scope(node, func)
        if named is not None:
            return Verdict("silent", f"in `{named}`, named for aiter", why="named")
        if self.module is not None and names_aiter(self.module.rsplit(".", 1)[-1]):
            return Verdict(
                "silent", f"in a function of `{self.module}`, named for aiter", why="named"
            )
        if isinstance(func, ast.Lambda):
            func_name = "<lambda>"
        else:
            func_name = func.name
            if self._dominated(node, func):
                return Verdict(
                    "silent", f"`{func_name}` imports aiter unconditionally before", why="dominated"
                )
        lit = guards.first_on_path(node, ("aiter-reach", "dispatch"), self._dispatch_literal)
        if lit is None or guards.enclosing_function(lit[0]) is not func:
            return Verdict(
                "silent",
                f"nothing in `{func_name}` chooses this path: its caller does",
                why="caller",
            )
        dispatch = guards.first_on_path(
            node, ("aiter-reach", "telling-dispatch"), self._telling_dispatch
        )
        if dispatch is None or guards.enclosing_function(dispatch[0]) is not func:
            dispatch = lit
        dispatch = _normal([dispatch])[0]
        hip = hip and p_hip(dispatch)
        return Verdict("function", func_name, open_models, dispatch, hip)

    # -- the literal predicates (node-independent: their answers are remembered per step) ---
    def _scope_of(self, test):
        return self.guards.enclosing_function(test)

    def _literal(self, test, pol, model, world):
        v = self.value(test, model, self._scope_of(test), world)
        return v if pol else _not4(v)

    def _closed(self, node) -> int:
        """A bit per (machine, world), 1 << (2 * model + world), set where some condition on
        the way to `node` is false (a `skipIf` decorator included). One walk up the node's
        steps; what each step and everything above it contributes is remembered."""
        guards = self.guards
        step, stmt = guards.locate(node)
        mask = 0
        for test, pol in guards._local_literals(node, stmt):
            mask |= self._false_mask(test, pol)
        memo = self._mask_memo
        todo = []
        above = 0
        s = step
        while s is not None:
            k = (id(s.block), s.index)
            if k in memo:
                above = memo[k]
                break
            todo.append(s)
            s = s.up
        for s in reversed(todo):
            own = self._exits_mask(s.block, s.index)
            owner = s.owner
            if isinstance(owner, ast.If):
                own |= self._false_mask(owner.test, s.field == "body")
            elif isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                for d in owner.decorator_list:
                    lit = _skip_literal(d)
                    if lit is not None:
                        own |= self._false_mask(*lit)
            above |= own
            memo[(id(s.block), s.index)] = above
        return mask | above

    @cached_property
    def _mask_memo(self) -> dict:
        return {}

    def _false_mask(self, test, pol) -> int:
        mask = 0
        for model in MODELS:
            for world in (0, 1):
                if self._literal(test, pol, model, world) is False:
                    mask |= 1 << (2 * model + world)
        return mask

    def _exits_mask(self, block, index) -> int:
        """The false bits of the early exits before `index` in `block` (prefix ORs, once per
        block)."""
        key = ("exits-mask", id(block))
        found = self._scopes.get(key)
        if found is None:
            idx, lits = self.guards._block_exits(block)
            prefix, acc = [], 0
            for test, pol in lits:
                acc |= self._false_mask(test, pol)
                prefix.append(acc)
            found = self._scopes[key] = (idx, prefix)
        idx, prefix = found
        j = bisect_left(idx, index) - 1
        return prefix[j] if j >= 0 else 0

    def _always(self, test, pol) -> bool:
        return all(self._literal(test, pol, m, w) is True for m in MODELS for w in (0, 1))

    def _telling_literal(self, test, pol) -> bool:
        """A condition worth naming: one that does not hold on both machines modelled
        (`not _use_aiter`, `not _is_npu` always do)."""
        return not self._always(test, pol)

    def _telling_not_hip(self, test, pol) -> bool:
        return self._telling_literal(test, pol) and not p_hip(_normal([(test, pol)])[0])

    def _dispatch_literal(self, test, pol) -> bool:
        """A condition by which a function chooses a path: not an `assert`, not a test of its
        own lazily initialized globals or of an availability probe."""
        _step, stmt = self.guards.locate(test)
        if isinstance(stmt, ast.Assert) and stmt.test is test:
            return False
        func = self._scope_of(test)
        return func is not None and not self._lazy_test(test, func)

    def _telling_dispatch(self, test, pol) -> bool:
        return self._dispatch_literal(test, pol) and self._telling_literal(test, pol)

    def _named_scope(self, node, func):
        """The innermost function around `node`, or class around a function around it, named
        for aiter (a class body itself runs at import: it chooses nothing)."""
        guards = self.guards
        f = guards.first_ancestor(
            node,
            ("aiter-reach", "named-function"),
            lambda n, _f: (
                isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and names_aiter(n.name)
            ),
        )
        if f is not None:
            return f.name
        c = guards.first_ancestor(
            node,
            ("aiter-reach", "named-class"),
            lambda n, _f: isinstance(n, ast.ClassDef) and names_aiter(n.name),
        )
        if c is not None and (c.lineno, c.col_offset) < (func.lineno, func.col_offset):
            return c.name  # (the function is inside the class)
        return None

    def _blocked(self, node) -> str:
        """Why no machine takes the path: the condition false on each (outermost first)."""
        parts: list = []
        lits = [(t, p) for t, p, _k, _i in self.literals(node)]
        for model in MODELS:
            found = None
            for world in (0, 1):
                for test, pol in reversed(lits):
                    if self._literal(test, pol, model, world) is False:
                        found = f"`{holding(test, pol)}`"
                        if world:
                            found += " (a switch whose default is not known)"
                        break
                if found:
                    break
            if found is None:
                found = "a `skipIf`/`skipUnless` decorator"
            for i, (c, m) in enumerate(parts):
                if c == found:
                    parts[i] = (c, f"{m} and {MACHINE[model]}")
                    break
            else:
                parts.append((found, MACHINE[model]))
        return "; ".join(f"{c} is false on {m}" for c, m in parts)


def p_hip(literal) -> bool:
    """Is a (test, polarity) literal a HIP check (alone or and-ed with HIP checks)?"""
    test, pol = literal
    return pol and hip_test(test) and _pure_hip(test)


class Verdict:
    """kind: "silent" (`detail`: why), "module" (runs when the module is imported, on
    `machines`), "function" (runs when `detail`, the function, takes this path). `first`:
    the innermost condition worth naming (test, polarity) or None; `hip`: every condition
    worth naming is a HIP check."""

    __slots__ = ("kind", "detail", "machines", "first", "hip", "why")

    def __init__(self, kind, detail, machines=(), first=None, hip=False, why="") -> None:
        self.kind = kind
        self.detail = detail
        self.machines = tuple(machines)
        self.first = first
        self.hip = hip
        self.why = why  # for "silent": try, path, named, dominated or caller

    def where(self) -> str:
        return " and on ".join(MACHINE[m] for m in self.machines)


def _normal(conditions) -> list:
    out = []
    for t, p in conditions:
        while isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not):
            t, p = t.operand, not p
        out.append((t, p))
    return out


def _apply(op, x, y):
    try:
        if isinstance(op, ast.Eq):
            return x == y
        if isinstance(op, ast.NotEq):
            return x != y
        if isinstance(op, ast.Is):
            return x is y
        if isinstance(op, ast.IsNot):
            return x is not y
        if isinstance(op, ast.In):
            return x in y
        if isinstance(op, ast.NotIn):
            return x not in y
        if isinstance(op, ast.Lt):
            return x < y
        if isinstance(op, ast.LtE):
            return x <= y
        if isinstance(op, ast.Gt):
            return x > y
        if isinstance(op, ast.GtE):
            return x >= y
    except TypeError:
        return None
    return None


def _is_environ(e) -> bool:
    return isinstance(e, ast.Attribute) and e.attr == "environ"


def _skip_literal(d):
    """`@unittest.skipIf(c, ...)` / `@pytest.mark.skipif(c, ...)`: (c, False);
    `@unittest.skipUnless(c, ...)`: (c, True)."""
    if not isinstance(d, ast.Call) or not d.args:
        return None
    name = _func_name(d.func)
    if name in ("skipIf", "skipif"):
        return d.args[0], False
    if name == "skipUnless":
        return d.args[0], True
    return None


def unparse(node, limit: int = 80) -> str:
    try:
        text = ast.unparse(node)
    except Exception:  # (an exotic node)
        return f"<expression at line {getattr(node, 'lineno', '?')}>"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def holding(test, pol: bool, show=unparse) -> str:
    """The condition that holds on the path: `test` (`pol`), or its negation (`not x`), each
    expression written by `show`."""
    if pol:
        return show(test)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return show(test.operand)
    if isinstance(test, (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)):
        return f"not {show(test)}"
    return f"not ({show(test)})"


def _pure_hip(test) -> bool:
    from .guards import is_hip_check

    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return all(is_hip_check(v) for v in test.values)
    return is_hip_check(test)


def envs_package(tree, module: str | None) -> str | None:
    """The top-level package a file imports `envs` from (`from sglang.srt.environ import
    envs`: "sglang"); its own package otherwise; None for a script that does not."""
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and any(
            (a.asname or a.name) == "envs" for a in stmt.names
        ):
            if stmt.level == 0 and stmt.module:
                return stmt.module.split(".")[0]
            return module.split(".")[0] if module else None
    return module.split(".")[0] if module else None


AMD_CI = lazy_compile(rb"\bregister_amd_ci\s*\(")
_OTHER_CI = lazy_compile(rb"\bregister_(?!amd_ci\b)\w+_ci\s*\(")


def amd_ci_only(data: bytes) -> bool:
    """Is the file a test registered for AMD CI only (`register_amd_ci(...)`, no other
    `register_*_ci(...)`)?"""
    return b"register_amd_ci" in data and bool(AMD_CI.search(data)) and not _OTHER_CI.search(data)


def explain(ctx, reasons: bool = False) -> tuple:
    """The `reachable` verdict on each aiter import of a parsed file: (the Judge or None, a
    list of (node, module name, Verdict or None, why)), a Verdict for a reported import, and
    `why` saying why an import is not reported (empty for a reported one). The aiter gates
    are the settings' (`aiter-gates`), in this file and in the importers of its module."""
    from .. import aiter_graph

    facts = ctx.facts
    if not facts.aiter_imports:
        return None, []
    gates = getattr(ctx.settings, "aiter_gates", None)
    if gates is not None:
        gates = frozenset(gates)
        facts.guards.use_gates(gates)
    abspath = ctx.source.abspath
    judge = None
    if abspath and not reasons:
        # Where every import is silent on the file's own evidence, the module's place in its
        # package's import graph cannot make one reported: the graph is not read (a check of
        # a few files stays fast). Otherwise, or to explain each import, it is.
        module = aiter_graph.module_for(abspath)
        env = aiter_graph.env_for(envs_package(ctx.tree, module), abspath)
        judge = Judge(ctx.tree, facts.guards, env, module)
        verdicts = [judge.verdict(node, reasons) for node, _ in facts.aiter_imports]
        if all(v.kind == "silent" for v in verdicts):
            return judge, [
                (node, name, None, v.detail)
                for (node, name), v in zip(facts.aiter_imports, verdicts, strict=True)
            ]
    if abspath and gates is not None:
        module, (status, evidence, reached_on) = aiter_graph.facts_for(abspath, gates)
    elif abspath:
        module, (status, evidence, reached_on) = aiter_graph.facts_for(abspath)
    else:
        module, (status, evidence, reached_on) = None, ("script", "", MODELS)
    if status == "aiter-only":
        why = f"module `{module}`: {evidence}"
        return None, [(node, name, None, why) for node, name in facts.aiter_imports]
    if status == "unknown":
        why = f"module `{module}`: not readable when its package was indexed"
        return None, [(node, name, None, why) for node, name in facts.aiter_imports]
    if amd_ci_only(ctx.data):
        why = "a test registered for AMD CI only"
        return None, [(node, name, None, why) for node, name in facts.aiter_imports]
    if judge is None:  # (else judged above, with the same module name)
        env = aiter_graph.env_for(envs_package(ctx.tree, module), abspath)
        judge = Judge(ctx.tree, facts.guards, env, module)
        verdicts = [judge.verdict(node, reasons) for node, _ in facts.aiter_imports]
    out = []
    for (node, name), v in zip(facts.aiter_imports, verdicts, strict=True):
        if v.kind == "silent":
            out.append((node, name, None, v.detail))
            continue
        if v.kind == "module":
            if status == "root" and module and names_aiter(module.rsplit(".", 1)[-1]):
                why = f"module `{module}` is named for aiter and nothing imports it"
                out.append((node, name, None, why))
                continue
            both = tuple(m for m in v.machines if m in reached_on)
            if both:
                v.machines = both  # (the machines its importer runs on)
            v.detail = evidence if status == "reachable" else ""
        out.append((node, name, v, ""))
    return judge, out
