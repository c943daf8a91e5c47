"""Reports aiter flags computed from `SGLANG_USE_AITER` without a HIP check.

## What it does
Reports an assignment whose value reads the `SGLANG_USE_AITER` environment variable --
`get_bool_env_var("SGLANG_USE_AITER")`, `os.environ["SGLANG_USE_AITER"]`,
`os.environ.get(...)`, `os.getenv(...)`, `envs.SGLANG_USE_AITER.get()`,
`envs.SGLANG_USE_AITER.value` -- unless the value is and-ed with a HIP check (`_is_hip`,
`is_hip()`, `_is_rocm`, `is_rocm()`, `current_platform.is_rocm()`, or an aiter gate that
already implies one), or the assignment itself sits in a branch that runs only on HIP
(`if _is_hip:`). The finding sits on the value.

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
import re

from kernlint.model import Rule
from kernlint.python.facts import node_span

RULE = Rule(
    code="PY002",
    name="aiter-flag-without-hip-check",
    language="python",
    summary="`SGLANG_USE_AITER` flag not and-ed with a HIP check",
    triggers=(b"SGLANG_USE_AITER",),
    partial_lines=re.compile(rb"SGLANG_USE_AITER"),
)
_ENV_LINE = re.compile(rb"SGLANG_USE_AITER\b")


def check(ctx) -> None:
    types = (ast.Assign, ast.AnnAssign, ast.NamedExpr)
    for node in ctx.facts.nodes_on_lines(_ENV_LINE, types):
        _judge(node, ctx)


def _judge(node, ctx) -> None:
    from kernlint.python.guards import is_hip_check, reads_aiter_env

    value = node.value
    if value is None or not _reads_flag(value, reads_aiter_env):
        return
    guards = ctx.facts.guards
    if _conjunct_hip(value, is_hip_check, guards):
        return
    if guards.on_cuda(node) is False:
        return  # assigned only where CUDA never runs (`if _is_hip:`)
    ctx.report(
        *node_span(ctx, value),
        "aiter flag reads `SGLANG_USE_AITER` without a HIP check: "
        "and it with `_is_hip` so the flag stays false on CUDA",
    )


def _reads_flag(value, reads_aiter_env) -> bool:
    # The flag itself, not a name that merely contains it (`SGLANG_USE_AITER_FP8_...`).
    for sub in ast.walk(value):
        if isinstance(sub, ast.Constant) and sub.value == "SGLANG_USE_AITER":
            return True
        if isinstance(sub, ast.Attribute) and sub.attr == "SGLANG_USE_AITER":
            return True
    return False


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
    return False
