"""Reports aiter imports that are not gated by `_use_aiter`.

## What it does
Reports `import aiter...`, `from aiter... import ...`, `importlib.import_module("aiter...")`
and `__import__("aiter...")` unless the import sits lexically inside a branch that runs only
when the aiter flag is true, at module or function level:

* `if _use_aiter:`, `if _use_aiter and X:`, `elif _use_aiter:`, the `else:` of
  `if not _use_aiter:`, nested ifs, `_use_aiter and f()`, and the code after an early exit
  `if not _use_aiter: return` in the same block;
* the same with a derived gate: a module-level name assigned from an expression that implies
  `_use_aiter` or reads `SGLANG_USE_AITER` (`_use_aiter_gfx95 = _use_aiter and is_gfx95()`).

How the six patterns found in SGLang 0.5.23 (190 aiter imports) are treated:

| pattern | default (`lexical`) | `import-time` |
|---|---|---|
| under `_use_aiter` or a derived gate | fine | fine |
| under `_is_hip` only | reported: ROCm without aiter enabled still imports it | fine (never runs on CUDA) |
| function-local, no guard | reported | fine (does not run at import) |
| module level in an aiter-only module | reported | reported only where the CUDA path imports that module |
| under another condition (`if use_fp8_kernel:`) | reported | fine unless it runs on CUDA |
| in `try:` / `except ImportError:` | fine: the CUDA path cannot break | fine |

`aiter-import-policy = "import-time"` (in `kernlint.toml` or `[tool.kernlint]`) reports only
imports that execute when a module is imported on a CUDA machine (`_is_hip` false,
`SGLANG_USE_AITER` unset): module-level aiter imports in a package `__init__.py`, and every
module-level import (on the CUDA path) of a module of the checked tree that itself imports aiter
at import time, directly or through such imports. An aiter-only backend module is fine as long
as nothing imports it unguarded; the finding sits on the unguarded import that pulls it in.
Conditions the analysis cannot decide on CUDA (a flag read from a config) count as "may not
run": the import-time policy stays silent there.

## Why is this bad?
On CUDA machines aiter is not installed: an unguarded import breaks every CUDA user of the
module with `ModuleNotFoundError`. On ROCm, SGLang's guide makes aiter opt-in with
`SGLANG_USE_AITER`, so even `if _is_hip:` is not enough: a ROCm user who turned aiter off (or
whose aiter build lacks a kernel) must not pay for or fail on the import.

## Example
```python
from sglang.srt.utils import get_bool_env_var, is_hip

_is_hip = is_hip()
if _is_hip:
    from aiter import rmsnorm2d_fwd
```

## Use instead
```python
from sglang.srt.utils import get_bool_env_var, is_hip

_is_hip = is_hip()
_use_aiter = get_bool_env_var("SGLANG_USE_AITER") and _is_hip
if _use_aiter:
    from aiter import rmsnorm2d_fwd
```

## Fix safety
No automatic fix: the gate to use, and what the CUDA path does instead, are the author's call.
"""

from __future__ import annotations

import re

from kernlint.config import import_time_policy
from kernlint.model import Rule
from kernlint.python.facts import AITER_LINE, imports_by_call, node_span

# The lines of a skeleton (engine.Context.tree) that can hold an aiter import statement:
# `import` and an `aiter` name with only names, commas, `as` and line continuations between
# them (a comment or a `;` ends an import statement), or `from aiter` (the same). An import
# through `importlib.import_module` / `__import__` can be spelled in many more ways, so a file
# naming either keeps every line with the word `aiter` (the lines `aiter_imports` looks at).
# (Two patterns, each starting with its literal: five times faster to search than one
# alternation.)
# (No other `import` word inside the statement: a line of many `import`s without an aiter
# import is searched once from each, up to the next one, not to the end of the line.)
_IMPORT_STATEMENT_LINES = (
    re.compile(rb"import(?:[ \t]|\\\r?\n)(?:[^\n;#\\i]|i(?!mport\b)|\\\r?\n)*?\baiter\b"),
    re.compile(rb"from(?:[ \t]|\\\r?\n)+aiter\b"),
)


def _import_lines(data: bytes):
    return AITER_LINE if imports_by_call(data) else _IMPORT_STATEMENT_LINES


RULE = Rule(
    code="PY001",
    name="ungated-aiter-import",
    language="python",
    summary="aiter import outside an `if _use_aiter:` branch",
    triggers=(b"aiter",),
    # Under the `import-time` policy a file can be reported for importing a module that
    # imports aiter, without the word in its own bytes.
    untriggered_when=import_time_policy,
    needs_tree=False,
    # The imports, their enclosing blocks and the module's gates are all it reads.
    partial_lines=_import_lines,
)

# An aiter import needs `import ... aiter`, `from aiter`, or `import_module("aiter`.
# (No leading `\b`: a pattern that starts with a literal is searched much faster, and a
# superset is fine for a filter.)
_AITER_IMPORT = re.compile(
    rb"import\s(?:[^\n;i]|i(?!mport\b))*\baiter\b|from\s+aiter\b"
    rb"|(?:import_module|__import__)\(\s*[rbu]?['\"]aiter"
)


def check(ctx) -> None:
    if import_time_policy(ctx.settings):
        _import_time(ctx)
        return
    if not _may_import_aiter(ctx.data):
        return  # cannot hold an aiter import: never parsed (the trigger found `aiter` already)
    if ctx.tree is None:
        return  # unparsable: the engine warns about it when a tree rule runs
    facts = ctx.facts
    if not facts.aiter_imports:
        return
    guards = facts.guards
    for node, module in facts.aiter_imports:
        if guards.aiter_gated(node) or guards.in_import_guard(node):
            continue
        # (Queries that remember what each block contributes: no listing of the whole path
        # per import, which costs the length of the blocks before it.)
        if guards.hip_only(node):
            why = "is under a HIP check only"
        elif guards.conditioned(node):
            why = "is under a condition that is not the aiter gate"
        elif guards.enclosing_function(node) is not None:
            why = "runs whenever this function is called"
        else:
            why = "runs when this module is imported"
        ctx.report(
            *node_span(ctx, node),
            f"`{module}` import {why}: put it under `if _use_aiter:`",
        )


def _may_import_aiter(data: bytes) -> bool:
    """Is there an aiter import pattern around an occurrence of `aiter` (the line and the one
    before it, for `import_module(\n "aiter...")`)? Searching only there is much faster than
    searching the whole file."""
    from kernlint.python import lf_view

    data = lf_view(data)  # (lone `\r` line breaks end lines too)
    find = data.find
    i = find(b"aiter")
    while i >= 0:
        previous_end = data.rfind(b"\n", 0, i)  # the newline that ends the previous line
        start = data.rfind(b"\n", 0, previous_end) + 1 if previous_end > 0 else 0
        end = find(b"\n", i)
        end = len(data) if end < 0 else end
        if _AITER_IMPORT.search(data, start, end):
            return True
        i = find(b"aiter", end)
    return False


def _import_time(ctx) -> None:
    from kernlint.project import aiter_import_time_findings
    from kernlint.python.facts import ast_offset

    for lineno, col, end_lineno, end_col, message in aiter_import_time_findings(ctx.source.abspath):
        start = ast_offset(ctx.source, lineno, col)
        end = ast_offset(ctx.source, end_lineno, end_col)
        ctx.report(start, max(start, end), message)
