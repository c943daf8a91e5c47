"""Reports aiter flags computed from `SGLANG_USE_AITER` without a HIP check.

## What it does
Reports an assignment whose value reads the `SGLANG_USE_AITER` environment variable --
`get_bool_env_var("SGLANG_USE_AITER")`, `os.environ["SGLANG_USE_AITER"]`,
`os.environ.get(...)`, `os.getenv(...)`, `envs.SGLANG_USE_AITER.get()`,
`envs.SGLANG_USE_AITER.value` -- unless the value is and-ed with a HIP check (`_is_hip`,
`is_hip()`, `_is_rocm`, `is_rocm()`, `current_platform.is_rocm()`, or an aiter gate that
already implies one), or the assignment itself sits in a branch that runs only on HIP
(`if _is_hip:`). The finding sits on the value. Configure:
`aiter-gates` (docs/presets.md).

Only reads count: the variable's name as the first argument of a read call, `os.environ[...]`
loaded, `"SGLANG_USE_AITER" in os.environ`, or `envs.SGLANG_USE_AITER.get()` / `.value`. A
literal that sets the variable for a launched process (`{"SGLANG_USE_AITER": "1"}`,
`env_vars={...}`, `{**os.environ, "SGLANG_USE_AITER": "1"}`) is not a read, and a raw string
read kept as text (`cls._old = os.environ.get("SGLANG_USE_AITER")`, saved to restore it later)
is not a flag; compared, converted or combined (`os.getenv(...) == "1"`, `bool(...)`), it is.

Reads that are not assignments (`if get_bool_env_var("SGLANG_USE_AITER"):` in a function, a
log message) are not reported: the convention is about the module's flag.

## Why is this bad?
`SGLANG_USE_AITER=1` is set in shared launch scripts and container images. Without the HIP
check, the flag turns true on a CUDA machine too, and every `if _use_aiter:` branch then tries
to import aiter -- which is not installed there -- or takes a ROCm-only code path. SGLang's guide
spells the flag `_use_aiter = get_bool_env_var("SGLANG_USE_AITER") and _is_hip`.

## Example
```python
from sglang.srt.utils import get_bool_env_var

_use_aiter = get_bool_env_var("SGLANG_USE_AITER")
```

## Use instead
```python
from sglang.srt.utils import get_bool_env_var, is_hip

_is_hip = is_hip()
_use_aiter = get_bool_env_var("SGLANG_USE_AITER") and _is_hip
```

## Fix safety
No automatic fix: the module may not define `_is_hip` yet.
"""

from __future__ import annotations

import ast

from kernlint.lazyre import lazy_compile
from kernlint.model import Rule
from kernlint.python import walk as _walk
from kernlint.python.facts import node_span

RULE = Rule(
    code="PY002",
    name="aiter-flag-without-hip-check",
    language="python",
    summary="`SGLANG_USE_AITER` flag not and-ed with a HIP check",
    triggers=(b"SGLANG_USE_AITER",),
    partial_lines=lazy_compile(rb"SGLANG_USE_AITER"),
)
_ENV_LINE = lazy_compile(rb"SGLANG_USE_AITER\b")
_AITER_ENV = "SGLANG_USE_AITER"


def check(ctx) -> None:
    types = (ast.Assign, ast.AnnAssign, ast.NamedExpr)
    for node in ctx.facts.nodes_on_lines(_ENV_LINE, types):
        _judge(node, ctx)


def _judge(node, ctx) -> None:
    from kernlint.python.conventions import guards as gated
    from kernlint.python.guards import is_hip_check

    value = node.value
    if value is None or not _reads_flag(value):
        return
    guards = gated(ctx)
    if _conjunct_hip(value, is_hip_check, guards):
        return
    if guards.on_cuda(node) is False:
        return  # assigned only where CUDA never runs (`if _is_hip:`)
    ctx.report(
        *node_span(ctx, value),
        "aiter flag reads `SGLANG_USE_AITER` without a HIP check: "
        "and it with `_is_hip` so the flag stays false on CUDA",
    )


_BOOL_READERS = frozenset({"get_bool_env_var"})
_STR_READERS = frozenset({"getenv", "get_env_var", "get_str_env_var"})
# String methods that keep a string a string: `os.getenv(...).strip().lower()` is still text.
_STR_METHODS = frozenset({"lower", "upper", "strip", "lstrip", "rstrip", "casefold"})


def _reads_flag(value) -> bool:
    """Does the value compute a flag from `SGLANG_USE_AITER`? Only real reads count -- the
    variable's name as the first argument of a read call (`get_bool_env_var`, `os.getenv`,
    `os.environ.get`), `os.environ[...]` loaded, `"SGLANG_USE_AITER" in os.environ`,
    `envs.SGLANG_USE_AITER.get()` / `.value` -- not a literal that sets it
    (`{"SGLANG_USE_AITER": "1"}`, `env_vars={...}`). A string read that stays a string
    (`old = os.environ.get("SGLANG_USE_AITER")`, saved to restore later) is not a flag."""
    parents = {}
    for sub in _walk(value):
        for child in ast.iter_child_nodes(sub):
            parents[id(child)] = sub
    for sub in _walk(value):
        kind = _read_kind(sub, parents)
        if kind == "bool":
            return True
        if kind == "str" and not _stays_string(sub, value, parents):
            return True
    return False


def _is_flag(node) -> bool:
    return isinstance(node, ast.Constant) and node.value == _AITER_ENV


def _is_environ(node) -> bool:
    return (isinstance(node, ast.Name) and node.id == "environ") or (
        isinstance(node, ast.Attribute) and node.attr == "environ"
    )


def _read_kind(node, parents) -> str | None:
    """ "bool" for a read that yields a flag, "str" for one that yields the raw text."""
    if isinstance(node, ast.Call) and node.args and _is_flag(node.args[0]):
        fn = node.func
        name = fn.id if isinstance(fn, ast.Name) else getattr(fn, "attr", None)
        if name in _BOOL_READERS:
            return "bool"
        if name in _STR_READERS or (
            name == "get" and isinstance(fn, ast.Attribute) and _is_environ(fn.value)
        ):
            return "str"
        return None
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.ctx, ast.Load)
        and _is_environ(node.value)
        and _is_flag(node.slice)
    ):
        return "str"
    if (
        isinstance(node, ast.Compare)
        and _is_flag(node.left)
        and len(node.ops) == 1
        and isinstance(node.ops[0], (ast.In, ast.NotIn))
        and _is_environ(node.comparators[0])
    ):
        return "bool"
    if isinstance(node, ast.Attribute) and node.attr == _AITER_ENV:
        # `envs.SGLANG_USE_AITER.get()` / `.value`; not `.set(...)`, `.override(...)`.
        up = parents.get(id(node))
        if isinstance(up, ast.Attribute) and up.attr == "value":
            return "bool"
        if isinstance(up, ast.Attribute) and up.attr == "get":
            call = parents.get(id(up))
            if isinstance(call, ast.Call) and call.func is up:
                return "bool"
    return None


def _stays_string(read, value, parents) -> bool:
    """The whole value is the read's text, through string methods only."""
    node = read
    while node is not value:
        up = parents.get(id(node))
        if (
            isinstance(up, ast.Attribute)
            and up.attr in _STR_METHODS
            and isinstance(parents.get(id(up)), ast.Call)
        ):
            node = parents[id(up)]
            continue
        return False
    return True


def _conjunct_hip(value, is_hip_check, guards) -> bool:
    # (A loop over the nested `and`s: a condition may nest as deep as the parser allows.)
    stack = [value]
    while stack:
        value = stack.pop()
        if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.And):
            stack.extend(reversed(value.values))
        elif is_hip_check(value):
            return True
        # `_use_aiter_x = _use_aiter and ...` / `envs.X.get() and _use_aiter`: a gate implies HIP.
        elif isinstance(value, ast.Name) and guards.implies_aiter(value, True):
            return True
        elif guards.gate_names is not None and guards.implies_aiter(value, True):
            return True  # (a configured gate: `envs.USE_X`, `use_x()`)
    return False
