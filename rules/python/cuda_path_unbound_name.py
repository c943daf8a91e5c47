"""Reports names bound only on ROCm/aiter branches but used on the CUDA path.

## What it does
For each scope (module or function), finds names whose every binding -- import, assignment,
`def`, `class`, `for` target, `with ... as` -- sits in a branch that cannot run on CUDA:
`if _use_aiter:`, `if _is_hip:`, `elif _use_aiter_gfx95:`, `else:` of `if _is_cuda:`, code
after `if not _use_aiter: return`, and so on (see the guard model in `kernlint/python/guards.py`).
Then reports each use of such a name that the CUDA path can reach: a use that is not itself
inside a matching guard. A binding on the CUDA side -- an `else:`, an earlier unconditional
binding, `if not _use_aiter:` -- makes the name safe.

Stays silent when unsure:
* a use under a condition the analysis cannot evaluate on CUDA whose text names aiter, HIP,
  ROCm, AMD or a gfx target (`if self.use_aiter_moe:`, `if is_gfx95:`) is taken to be a
  matching guard; other unknown conditions (`if x.shape[0] > 0:`) do not stop the CUDA path;
* a use under a local flag computed from such a call (`ok = x and self._can_use_rocm_y()`,
  then `if ok:`);
* uses inside a function or class named for a platform (`forward_aiter`, `forward_hip`,
  `AiterMoeRunner`), and whole modules named for one (`aiter_backend.py`,
  `forward_mla_rocm.py`, anything under an `amd/` or `rocm/` package): those are the ROCm path;
* a module with `from x import *` in the same scope, names declared `global`/`nonlocal`,
  uses inside `try:` blocks that catch `NameError` (or broader), and uses in annotations.

## Why is this bad?
SGLang runs the same Python on CUDA and ROCm. A name that only exists when `_use_aiter` is true
but is used unconditionally is a `NameError` (or `UnboundLocalError` in a function) waiting for
every CUDA user -- typically found in production, on the first request that takes that line.
The guide's rule: never break the CUDA path in the `else:` branch.

## Example
```python
from sglang.srt.utils import get_bool_env_var, is_hip

_is_hip = is_hip()
_use_aiter = get_bool_env_var("SGLANG_USE_AITER") and _is_hip
if _use_aiter:
    from aiter import rmsnorm2d_fwd as rms_norm


def forward(x, w):
    return rms_norm(x, w, 1e-6)
```

## Use instead
```python
from sglang.srt.utils import get_bool_env_var, is_hip

_is_hip = is_hip()
_use_aiter = get_bool_env_var("SGLANG_USE_AITER") and _is_hip
if _use_aiter:
    from aiter import rmsnorm2d_fwd as rms_norm
else:
    from sgl_kernel import rmsnorm as rms_norm


def forward(x, w):
    return rms_norm(x, w, 1e-6)
```

## Fix safety
No automatic fix: what the CUDA path should use instead is the author's decision.
"""

from __future__ import annotations

import ast
import re

from kernlint.model import Rule
from kernlint.python.facts import node_span

RULE = Rule(
    code="PY003",
    name="cuda-path-unbound-name",
    language="python",
    summary="name bound only on ROCm/aiter branches but used on the CUDA path",
    status="preview",
    triggers=(b"is_hip", b"is_rocm", b"_use_aiter", b"USE_AITER", b"_IS_HIP", b"_IS_ROCM"),
    # A ROCm-only binding needs a condition (`if`/`elif`/`and`/`if ... else`) on a HIP check
    # or an aiter gate, or a gate assigned from the environment variable.
    prefilter=re.compile(
        rb"\b(?:if|elif|and|or|not)\b[^:\n]*(?:is_hip|is_rocm|_use_aiter|USE_AITER|_IS_HIP|_IS_ROCM)"
        rb"|\b(?:if|elif)\s*\(\s*$|SGLANG_USE_AITER",
        re.M,
    ),
)

_PLATFORM_WORDS = re.compile(r"aiter|hip|rocm|amd|gfx|mi3\d\d|mori|npu|ascend|xpu", re.I)
_NAME_ERRORS = frozenset({"NameError", "UnboundLocalError", "Exception", "BaseException"})


def check(ctx) -> None:
    from kernlint.python.scopes import build

    if _platform_module(ctx.source.path):
        return
    tree = ctx.tree
    guards = ctx.facts.guards
    scopes = build(tree)
    uses_by_name: dict[str, list] = {}
    for scope in scopes:
        for name, use in scope.uses:
            uses_by_name.setdefault(name, []).append((scope, use))
    # Each name's uses grouped by the scope they resolve to, once per name when first needed
    # (not once per scope binding the name: many functions binding `x` share its uses).
    resolved: dict[str, dict[int, list]] = {}
    platform = _Platform(ctx, guards)

    for scope in scopes:
        if scope.kind not in ("module", "function") or scope.unknown:
            continue
        for name, bindings in scope.bindings.items():
            if name in scope.params or name in scope.declared or name not in uses_by_name:
                continue
            # Bound only where CUDA definitely never runs (known platform conditions only).
            # ROCm/aiter branches only: NPU/XPU/CPU code has dispatch conventions of its own.
            if any(guards.on_cuda(b, others=False) is not False for b in bindings):
                continue
            by_scope = resolved.get(name)
            if by_scope is None:
                by_scope = resolved[name] = {}
                for use_scope, use in uses_by_name[name]:
                    target = use_scope.resolve(name)
                    if target is not None:
                        by_scope.setdefault(id(target), []).append(use)
            uses = by_scope.get(id(scope))
            if not uses:
                continue
            guard = _first_false_condition(bindings[0], guards, platform)
            kind = "UnboundLocalError" if scope.kind == "function" else "NameError"
            for use in uses:
                if not _use_reached(use, guards, platform) or guards.in_try_catching(
                    use, _NAME_ERRORS
                ):
                    continue
                ctx.report(
                    *node_span(ctx, use),
                    f"`{name}` is bound only when `{guard}` (line {_line(bindings[0])}) but "
                    f"used here on the CUDA path: {kind} on CUDA",
                )


def _line(node) -> int:
    return getattr(node, "lineno", 0)


def _platform_module(path: str) -> bool:
    """`.../amd/x.py`, `forward_mla_rocm.py`, `aiter_backend.py`: a module for one platform."""
    parts = path.replace("\\", "/").split("/")
    stem = parts[-1].rsplit(".", 1)[0]
    return bool(_PLATFORM_WORDS.search(stem)) or any(
        p in ("amd", "rocm", "hip") for p in parts[:-1]
    )


def _use_reached(node, guards, platform) -> bool:
    """Can the CUDA path reach this use? Unknown conditions that name a platform (aiter, HIP,
    ROCm, AMD, gfx) are taken as matching guards; other unknown conditions do not stop it; a
    use inside a function or class named for a platform (`forward_aiter`, `HipBackend`) is
    on that platform's path."""
    if guards.first_ancestor(node, "platform-def", _platform_def) is not None:
        return False

    def stops(test, pol) -> bool:
        v = guards.cuda_value(test)
        if v is None:
            return platform.names_a_platform(test)
        return v != pol

    return guards.first_on_path(node, "cuda-path-stops", stops) is None


def _platform_def(n, _field) -> bool:
    return isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and bool(
        _PLATFORM_WORDS.search(n.name)
    )


class _Platform:
    """Whether conditions name a platform, with what each function contributes computed once
    (a function's platform-valued assignments, whether its text names a platform)."""

    def __init__(self, ctx, guards) -> None:
        self.ctx = ctx
        self.guards = guards
        self._assigned: dict[int, set[str]] = {}
        self._named: dict[int, bool] = {}

    def text(self, node) -> str:
        """The node as Python text: `ast.unparse`, or the source where it nests too deep."""
        try:
            return ast.unparse(node)
        except RecursionError:
            start, end = node_span(self.ctx, node)
            return self.ctx.data[start:end].decode("utf-8", "replace")

    def names_a_platform(self, test) -> bool:
        """The condition's text names a platform, or it calls a function of this module whose
        body does (`if _use_flydsl_linear(x):` with `return USE_AITER_GFX1250 and ...`)."""
        if _PLATFORM_WORDS.search(self.text(test)):
            return True
        # A local flag computed from a platform check: `ok = ... and self._can_use_rocm_x(...)`.
        names = {n.id for n in ast.walk(test) if isinstance(n, ast.Name)}
        func = self.guards.enclosing_function(test) if names else None
        if func is not None and names & self._platform_assigned(func):
            return True
        local = self.guards.local_functions
        for sub in ast.walk(test):
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name):
                func = local.get(sub.func.id)
                if func is not None and self._names_platform(func):
                    return True
        return False

    def _platform_assigned(self, func) -> set[str]:
        """Names assigned in `func` (nested functions included) from a value whose text names
        a platform."""
        found = self._assigned.get(id(func))
        if found is None:
            found = set()
            for sub in ast.walk(func):
                if isinstance(sub, ast.Assign):
                    targets = {t.id for t in sub.targets if isinstance(t, ast.Name)}
                    if targets and _PLATFORM_WORDS.search(self.text(sub.value)):
                        found |= targets
            self._assigned[id(func)] = found
        return found

    def _names_platform(self, func) -> bool:
        found = self._named.get(id(func))
        if found is None:
            found = self._named[id(func)] = bool(_PLATFORM_WORDS.search(self.text(func)))
        return found


def _first_false_condition(node, guards, platform) -> str:
    for test, pol in guards.path(node):
        v = guards.cuda_value(test, others=False)
        if v is not None and v != pol:
            text = platform.text(test)
            text = text if pol else f"not ({text})" if " " in text else f"not {text}"
            return text if len(text) <= 60 else text[:57] + "..."
    return "a ROCm-only branch"  # not reached: callers check on_cuda() is False first
