"""Reports names bound only on ROCm/aiter branches but used on the CUDA path.

## What it does
Reports the uses reachable on CUDA of a name that its scope binds only in branches that
cannot run on CUDA (`if _use_aiter:` or `aiter-gates` names, `if _is_hip:`, the `else:` of
`if _is_cuda:`). A
binding on the CUDA side (an `else:`, an earlier one) makes the name safe.

Not reported:
- uses under a condition (or after an early exit) false on CUDA: platform checks, HIP-only
  predicates (`mxfp_supported()`), names or functions returning one, names saying aiter,
  HIP, ROCm, AMD, gfx/MI3xx, MoRI, NPU, Ascend or XPU (`self.use_aiter_moe`), unknown
  conditions naming a platform;
- uses in code named for a platform (`forward_aiter`, `aiter_backend.py`, an `amd/`
  package) or documented as running only there;
- uses in private helpers referenced only off the CUDA path (or nowhere), in methods of a
  class whose `__init__` raises on CUDA;
- scopes with `from x import *`, `global`/`nonlocal` names, uses inside a `try:` catching
  `NameError`, annotations.

In preview; false positives: guards held in data (a constructor that raises on CUDA,
`x is not None` where only aiter sets `x`, public helpers called only from aiter-only code).

## Why is this bad?
SGLang runs the same Python on CUDA and ROCm: such a use is a `NameError` (or
`UnboundLocalError`) on CUDA, often first seen in production.

## Example
```python
from sglang.srt.utils import get_bool_env_var, is_hip

_use_aiter = get_bool_env_var("SGLANG_USE_AITER") and is_hip()
if _use_aiter:
    from aiter import rmsnorm2d_fwd as rms_norm


def forward(x):
    return rms_norm(x)
```

## Use instead
```python
from sglang.srt.utils import get_bool_env_var, is_hip

_use_aiter = get_bool_env_var("SGLANG_USE_AITER") and is_hip()
if _use_aiter:
    from aiter import rmsnorm2d_fwd as rms_norm
else:
    from sgl_kernel import rmsnorm as rms_norm


def forward(x):
    return rms_norm(x)
```

## Fix safety
No automatic fix: what CUDA should use instead is the author's call.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache

from kernlint.lazyre import lazy_compile
from kernlint.model import Rule
from kernlint.python import child_nodes
from kernlint.python import walk as _walk
from kernlint.python.conventions import NamePattern, when_configured
from kernlint.python.facts import node_span


def _configured_gate_condition(names) -> re.Pattern:
    """A condition on one of the configured aiter gates (`aiter-gates`)."""
    if not names:
        return re.compile(rb"(?!)")
    alternatives = b"|".join(re.escape(n.encode()) for n in sorted(names))
    return re.compile(rb"\b(?:if|elif|and|or|not)\b[^:\n]*\b(?:" + alternatives + rb")\b")


def _not_platform_named(path: str) -> bool:
    return not _platform_stem(path)


RULE = Rule(
    code="PY003",
    name="cuda-path-unbound-name",
    language="python",
    summary="name bound only on ROCm/aiter branches but used on the CUDA path",
    status="preview",
    triggers=(b"is_hip", b"is_rocm", b"_use_aiter", b"USE_AITER", b"_IS_HIP", b"_IS_ROCM"),
    # (`aiter-gates`: a file may name only the configured gates)
    untriggered_when=when_configured("aiter_gates"),
    # A module named for a platform is not checked (`_platform_module`): not even parsed.
    path_filter=_not_platform_named,
    # A ROCm-only binding needs a condition (`if`/`elif`/`and`/`if ... else`) on a HIP check
    # or an aiter gate, or a gate assigned from the environment variable.
    prefilter=NamePattern(
        lazy_compile(
            rb"\b(?:if|elif|and|or|not)\b[^:\n]*(?:is_hip|is_rocm|_use_aiter|USE_AITER|_IS_HIP|_IS_ROCM)"
            rb"|\b(?:if|elif)\s*\(\s*$|SGLANG_USE_AITER",
            re.M,
        ),
        "aiter_gates",
        _configured_gate_condition,
    ),
)


def _platform_words():
    """A platform's name as a word of an identifier or text, not a substring: `_use_aiter`,
    `AiterMoeRunner`, `is_gfx95_supported`, `HIPBackend`, `forward_mla_rocm`, `mi300x`; not
    `input` (npu), `relationship` (hip) or `waiter`."""
    words = [
        "aiter",
        "hip",
        "rocm",
        "amd",
        "amdgpu",
        "gfx",
        "mori",
        "moriep",
        "npu",
        "ascend",
        "xpu",
    ]
    alts = [r"(?<![A-Za-z])mi3\d\d[a-z]?(?![a-z])", r"(?<![A-Z])MI3\d\d[A-Z]?(?![a-z])"]
    for w in words:
        alts.append(rf"(?<![A-Za-z]){w}(?![a-z])")  # aiter, _aiter_x, gfx95
        alts.append(rf"{w.capitalize()}(?![a-z])")  # useAiter, AiterMoe, MoEAscend
        alts.append(rf"(?<![A-Z]){w.upper()}(?![a-z])")  # _IS_HIP, HIPBackend
    alts.append(r"(?<![A-Z])ROCm(?![a-z])")
    return re.compile("|".join(alts))


@lru_cache(maxsize=1)
def _patterns() -> tuple[re.Pattern, re.Pattern, re.Pattern]:
    """(platform words, a raise message naming a platform, a docstring saying "only on" one),
    compiled on first use: a run without this rule does not pay for them."""
    words = _platform_words()
    # A raise message: "requires an owned AITER runner", "requires an AMD ROCm device", "only
    # supported on AMD GPUs", "is only supported with aiter".
    requires = re.compile(
        rf"\b(?:requires?|needs?|only supported (?:on|with|by)|supported only (?:on|with))"
        rf"(?:\s+[\w-]+){{0,3}}?\s+(?:{words.pattern})"
    )
    # "Only used with the aiter backend", "only on ROCm", "ROCm-only", "ROCm/HIP Only", "NPU
    # support only"; not "CUDA and HIP only", "CUDA/HIP only".
    only = re.compile(
        rf"\b{_ONLY}(?:\s+\w+){{0,2}}?\s+(?:with|on|for|by|in|under)\s+(?:the\s+|an?\s+)?"
        rf"(?:{words.pattern})"
        rf"|(?<!and )(?<!or )(?<!/)(?:{words.pattern})(?:[-/ ](?!and\b|or\b)\w+)?"
        rf"[- ]{_ONLY}\b"
    )
    return words, requires, only


_ONLY = r"(?:[Oo]nly|ONLY)"
_NAME_ERRORS = frozenset({"NameError", "UnboundLocalError", "Exception", "BaseException"})
# SGLang's predicates that are false on every non-HIP build (`srt/utils/common.py`).
_HIP_ONLY_CALLS = frozenset({"mxfp_supported"})
# How many aliases, helpers and predicates deep a judgement follows (each is a few frames of
# Python recursion; past it the answer is unknown, the use reachable).
_MAX_DEPTH = 40
_ENV_FUNCS = lazy_compile(r"^(?:get_(?:bool|int|float|str)_env_var|getenv|get_env_\w+)$")


def check(ctx) -> None:
    from kernlint.python.unbound_scan import build_scopes, statement_bindings

    if _platform_module(ctx.source.path):
        return
    from kernlint.python.conventions import guards as gated

    tree = ctx.tree
    guards = gated(ctx)
    # Which bindings can run on CUDA, judged statement by statement: most files bind no name
    # only off CUDA, and then there is nothing more to do.
    found = statement_bindings(tree, guards, ctx.data)
    if found is not None and not found.only_off:
        return
    scopes = build_scopes(tree)
    uses_by_name: dict[str, list] = {}
    for scope in scopes:
        for name, use in scope.uses:
            uses_by_name.setdefault(name, []).append((scope, use))
    # Each name's uses grouped by the scope they resolve to, once per name when first needed
    # (not once per scope binding the name: many functions binding `x` share its uses).
    resolved: dict[str, dict[int, list]] = {}
    platform = _Platform(ctx, guards, scopes)

    for scope in scopes:
        if scope.kind not in ("module", "function") or scope.unknown:
            continue
        key = id(scope.node)
        for name, bindings in scope.bindings.items():
            if name in scope.params or name in scope.declared or name not in uses_by_name:
                continue
            if found is not None and (key, name) not in found.only_off:
                continue  # (a binding of the name can run on CUDA)
            by_scope = resolved.get(name)
            if by_scope is None:
                by_scope = resolved[name] = {}
                for use_scope, use in uses_by_name[name]:
                    target = use_scope.resolve(name)
                    if target is not None:
                        by_scope.setdefault(id(target), []).append(use)
            uses = by_scope.get(id(scope))
            if not uses:
                continue  # (no use reads this binding: the costlier question is not asked)
            # Bound only where CUDA definitely never runs (known platform conditions only).
            # ROCm/aiter branches only: NPU/XPU/CPU code has dispatch conventions of its own.
            if found is None and any(
                guards.on_cuda(b, others=False) is not False for b in bindings
            ):
                continue
            guard = _first_false_condition(bindings[0], guards, platform)
            kind = "UnboundLocalError" if scope.kind == "function" else "NameError"
            for use in uses:
                if not platform.reached(use) or guards.in_try_catching(use, _NAME_ERRORS):
                    continue
                ctx.report(
                    *node_span(ctx, use),
                    f"`{name}` is bound only when `{guard}` (line {_line(bindings[0])}) but "
                    f"used here on the CUDA path: {kind} on CUDA; bind it on the CUDA path "
                    f"too (an `else:` branch) or put this use under `if {guard}:`",
                )


def _line(node) -> int:
    return getattr(node, "lineno", 0)


def _platform_module(path: str) -> bool:
    """`.../amd/x.py`, `forward_mla_rocm.py`, `aiter_backend.py`: a module for one platform."""
    parts = path.replace("\\", "/").split("/")
    return _platform_stem(parts[-1]) or any(p in ("amd", "rocm", "hip") for p in parts[:-1])


def _platform_stem(path: str) -> bool:
    """Is the file named for a platform (`forward_mla_rocm.py`, `aiter_backend.py`)? The same
    answer for a file's display path and its absolute path (the engine's path filters get
    the latter): the last component is the same."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return bool(_patterns()[0].search(name.rsplit(".", 1)[0]))


def _private(name: str) -> bool:
    return name.startswith("_") and not name.endswith("__")


def _inside(node, func) -> bool:
    """Is `node` within `func`'s lines (a recursive call, not a reference from outside)?"""
    line = getattr(node, "lineno", 0)
    return func.lineno <= line <= (func.end_lineno or func.lineno)


def _own_returns(func) -> list:
    """The `return` statements of `func` itself, not of functions nested in it."""
    out, stack = [], list(func.body)
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Return):
            out.append(n)
        elif not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(child_nodes(n))
    return out


def _env_read(e) -> bool:
    """`envs.X.get()`, `envs.X.value`, `get_bool_env_var(...)`, `os.getenv(...)`,
    `os.environ[...]`: a setting whose value on CUDA is the user's."""
    if isinstance(e, ast.Call):
        fn = e.func
        if isinstance(fn, ast.Attribute) and fn.attr == "get":
            return isinstance(fn.value, ast.Attribute) or _environ(fn.value)
        return bool(_callee(e) and _ENV_FUNCS.match(_callee(e)))
    if isinstance(e, ast.Attribute) and e.attr == "value":
        return isinstance(e.value, ast.Attribute) and e.value.attr.isupper()
    return isinstance(e, ast.Subscript) and _environ(e.value)


def _environ(e) -> bool:
    return (isinstance(e, ast.Name) and e.id == "environ") or (
        isinstance(e, ast.Attribute) and e.attr == "environ"
    )


def _callee(call) -> str | None:
    fn = call.func
    return fn.id if isinstance(fn, ast.Name) else getattr(fn, "attr", None)


def _platform_def(n, _field) -> bool:
    """A function or class named for a platform, or whose docstring says it runs only there
    ("Only used with the aiter (ROCm) backend.", "ROCm/HIP only")."""
    if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return False
    if _patterns()[0].search(n.name):
        return True
    doc = ast.get_docstring(n, clean=False) if n.body else None
    return bool(doc) and _patterns()[2].search(doc.split("\n\n", 1)[0]) is not None


class _Platform:
    """What the CUDA path can reach: conditions evaluated on CUDA (known platform checks, then
    what names a platform), aliases followed, helpers judged by their call sites, classes by
    their constructor; what each function contributes computed once."""

    def __init__(self, ctx, guards, scopes) -> None:
        self.ctx = ctx
        self.guards = guards
        self._assigned: dict[int, set[str]] = {}
        self._named: dict[int, bool] = {}
        self._scope_of = {id(sc.node): sc for sc in scopes}
        self._module = scopes[0]
        self._values: dict[int, object] = {}
        self._busy: set[int] = set()
        self._reach: dict[int, bool] = {}
        self._refs = None
        self._ctor: dict[int, bool] = {}
        self._subclassed = None
        self._method_index = None
        self._depth = 0  # aliases, helpers and predicates followed so far (bounded)

    def text(self, node) -> str:
        """The node as Python text: `ast.unparse`, or the source where it nests too deep."""
        try:
            return ast.unparse(node)
        except RecursionError:
            start, end = node_span(self.ctx, node)
            return self.ctx.data[start:end].decode("utf-8", "replace")

    # -- can the CUDA path reach a node? --------------------------------------------------
    def reached(self, node) -> bool:
        """Can the CUDA path reach this node? Not under a condition false on CUDA (`value`),
        not inside a function or class named for a platform (`forward_aiter`, `HipBackend`),
        not in a private helper whose every reference is itself unreachable (or that nothing
        references), not in a method of a class whose `__init__` raises on CUDA."""
        guards = self.guards
        if guards.first_ancestor(node, "platform-def", _platform_def) is not None:
            return False

        def stops(test, pol) -> bool:
            v = self.value(test)
            if v is None:  # unknown: a condition that names a platform is taken as a guard,
                # and so is an early `raise` saying what platform the code after it requires.
                return self.names_a_platform(test) or (not pol and self._requires(test))
            return v != pol

        if guards.first_on_path(node, "cuda-path-stops-v2", stops) is not None:
            return False
        func = guards.enclosing_function(node)
        if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return self._function_reached(func)
        return True

    def _function_reached(self, func) -> bool:
        key = id(func)
        found = self._reach.get(key)
        if found is not None:
            return found
        if self._depth >= _MAX_DEPTH:
            return True  # (a chain of helpers this long: taken as reachable)
        self._reach[key] = True  # (a cycle of helpers: taken as reachable)
        self._depth += 1
        try:
            found = self._judge_function(func)
        finally:
            self._depth -= 1
        self._reach[key] = found
        return found

    def _judge_function(self, func) -> bool:
        found = True
        # The node whose block holds the definition: found by position (no parent map of the
        # whole tree; a handler's or a case's block is its `try`'s or `match`'s, as good here).
        step, stmt = self.guards.locate(func)
        if stmt is func and step is not None:
            owner = step.owner
        else:
            owner = self.guards.parent.get(id(func))
        if isinstance(owner, ast.ClassDef) and self._constructor_raises(owner, func):
            found = False
        elif isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found = self._function_reached(owner)  # defined only when the outer one runs
        elif _private(func.name) and isinstance(owner, (ast.Module, ast.ClassDef)):
            refs = self._references(func.name, method=isinstance(owner, ast.ClassDef))
            found = any(self.reached(r) for r in refs if not _inside(r, func))
        return found

    def _references(self, name: str, method: bool) -> list:
        """Loads of `name` (a module-level function) or of `.name` (a method) in the module."""
        if self._refs is None:
            names: dict[str, list] = {}
            attrs: dict[str, list] = {}
            for n in _walk(self.ctx.tree):
                if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store):
                    names.setdefault(n.id, []).append(n)
                elif isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Store):
                    attrs.setdefault(n.attr, []).append(n)
                elif isinstance(n, ast.Constant) and isinstance(n.value, str):
                    # `getattr(self, "_helper")`, `"_helper"` in a dispatch table.
                    names.setdefault(n.value, []).append(n)
                    attrs.setdefault(n.value, []).append(n)
            self._refs = (names, attrs)
        return self._refs[1 if method else 0].get(name, [])

    def _constructor_raises(self, cls, func) -> bool:
        """`func` is a method of `cls` (not `__init__`, not static or class-level) and
        `cls.__init__` raises on CUDA at its top level (`if not _is_hip: raise ...`,
        `assert is_gfx95_supported()`); no class of the module derives from `cls`."""
        if func.name == "__init__" or any(
            isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod")
            for d in func.decorator_list
        ):
            return False
        key = id(cls)
        found = self._ctor.get(key)
        if found is None:
            found = self._ctor[key] = self._init_raises(cls) and not self._derived(cls.name)
        return found

    def _init_raises(self, cls) -> bool:
        for item in cls.body:
            if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                for stmt in item.body:
                    if (
                        isinstance(stmt, ast.If)
                        and stmt.body
                        and isinstance(stmt.body[-1], ast.Raise)
                        and not stmt.orelse
                        and self.value(stmt.test) is True
                    ):
                        return True
                    if isinstance(stmt, ast.Assert) and self.value(stmt.test) is False:
                        return True
        return False

    def _derived(self, name: str) -> bool:
        if self._subclassed is None:
            self._subclassed = {
                base.id if isinstance(base, ast.Name) else getattr(base, "attr", None)
                for n in _walk(self.ctx.tree)
                if isinstance(n, ast.ClassDef)
                for base in n.bases
            }
        return name in self._subclassed

    # -- conditions on CUDA ---------------------------------------------------------------
    def value(self, test):
        """Three-valued value of a condition on CUDA. Leaves: the guard model's platform
        checks (`_is_hip`, `_use_aiter`, ...), HIP-only predicates (`mxfp_supported()`),
        names assigned only from such conditions (`_is_shuffle = is_gfx95_supported()`, a
        local `ok = x and self._can_use_rocm_y()`), then a leaf whose text names a platform
        (`self.use_aiter_moe`, `is_gfx95`), or a call to a module function whose body does, is
        taken as false on CUDA (`!=`, `not in` and `is None` comparisons of such a name as
        true); anything else is unknown."""
        from kernlint.python.guards import evaluate

        key = id(test)
        if key in self._values:
            return self._values[key]
        if key in self._busy or self._depth >= _MAX_DEPTH:
            return None  # (an alias defined through itself, or a chain this long)
        self._busy.add(key)
        self._depth += 1

        def expand(e):
            if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
                return "not", e.operand
            if isinstance(e, ast.BoolOp):
                return ("and" if isinstance(e.op, ast.And) else "or"), e.values
            return "value", self._leaf(e)

        try:
            found = evaluate(test, expand)
        finally:
            self._busy.discard(key)
            self._depth -= 1
        self._values[key] = found
        return found

    def _leaf(self, e):
        v = self.guards.cuda_value(e)
        if v is not None:
            return v
        if isinstance(e, ast.Name):
            v = self._alias(e)
            if v is not None:
                return v
        if isinstance(e, ast.Call):
            if _callee(e) in _HIP_ONLY_CALLS:
                return False
            v = self._returns(e)
            if v is not None:
                return v
        if isinstance(e, ast.Compare) and len(e.ops) == 1:
            if not self.names_a_platform(e):
                return None
            op, right = e.ops[0], e.comparators[0]
            none = isinstance(right, ast.Constant) and right.value is None
            if isinstance(op, (ast.NotEq, ast.NotIn)) or (isinstance(op, ast.Is) and none):
                return True
            if isinstance(op, (ast.Eq, ast.In)) or (isinstance(op, ast.IsNot) and none):
                return False
            return None
        if isinstance(e, ast.Compare) or _env_read(e):
            return None  # (`envs.SGLANG_USE_AITER_MOE_GU_ITLV.get()` defaults to true)
        return False if self.names_a_platform(e) else None

    def _requires(self, test) -> bool:
        """`if not getattr(self, "_owns_moe_runner", False): raise RuntimeError("... requires
        an owned AITER runner.")`: the test of an early `raise` whose message says that what
        follows requires a platform."""
        _step, stmt = self.guards.locate(test)  # (an `if` test's innermost statement is the `if`)
        if not (isinstance(stmt, ast.If) and stmt.test is test and stmt.body):
            return False
        last = stmt.body[-1]
        if not isinstance(last, ast.Raise) or last.exc is None:
            return False
        text = " ".join(
            n.value
            for n in _walk(last.exc)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
        )
        return _patterns()[1].search(text) is not None

    def _returns(self, call):
        """The value on CUDA of a call to a function of this module (`f(...)`, or a method
        `self.f(...)` defined once in the module) whose every `return` gives that value."""
        fn = call.func
        if isinstance(fn, ast.Name):
            func = self.guards.local_functions.get(fn.id)
        elif isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Name):
            func = self._methods().get(fn.attr) if fn.value.id in ("self", "cls") else None
        else:
            func = None
        if func is None or id(func) in self._busy:
            return None
        self._busy.add(id(func))
        try:
            found = None
            for ret in _own_returns(func):
                v = self.value(ret.value) if ret.value is not None else None
                if v is None or (found is not None and v != found):
                    return None
                found = v
            return found
        finally:
            self._busy.discard(id(func))

    def _methods(self) -> dict:
        """Methods by name, for the names only one class of the module defines."""
        if self._method_index is None:
            seen: dict = {}
            for n in _walk(self.ctx.tree):
                if isinstance(n, ast.ClassDef):
                    for item in n.body:
                        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                            seen[item.name] = None if item.name in seen else item
            self._method_index = {k: v for k, v in seen.items() if v is not None}
        return self._method_index

    def _alias(self, name):
        """The value on CUDA of a name whose every binding in its scope is `name = <cond>`
        with that same value (None when any binding is something else)."""
        func = self.guards.enclosing_function(name)
        scope = self._scope_of.get(id(func)) if func is not None else self._module
        target = scope.resolve(name.id) if scope is not None else None
        if target is None or name.id in target.params or name.id in target.declared:
            return None
        found = None
        for binding in target.bindings.get(name.id, ()):
            _step, stmt = self.guards.locate(binding)
            if not (isinstance(stmt, ast.Assign) and any(t is binding for t in stmt.targets)):
                return None
            v = self.value(stmt.value)
            if v is None or (found is not None and v != found):
                return None
            found = v
        return found

    def names_a_platform(self, test) -> bool:
        """The condition's text names a platform, or it calls a function of this module whose
        body does (`if _use_flydsl_linear(x):` with `return USE_AITER_GFX1250 and ...`)."""
        if _patterns()[0].search(self.text(test)):
            return True
        local = self.guards.local_functions
        for sub in _walk(test):
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name):
                func = local.get(sub.func.id)
                if func is not None and self._names_platform(func):
                    return True
        return False

    def _names_platform(self, func) -> bool:
        found = self._named.get(id(func))
        if found is None:
            found = self._named[id(func)] = bool(_patterns()[0].search(self.text(func)))
        return found


def _first_false_condition(node, guards, platform) -> str:
    for test, pol in guards.path(node):
        v = guards.cuda_value(test, others=False)
        if v is not None and v != pol:
            text = platform.text(test)
            text = text if pol else f"not ({text})" if " " in text else f"not {text}"
            return text if len(text) <= 60 else text[:57] + "..."
    return "a ROCm-only branch"  # not reached: callers check on_cuda() is False first
