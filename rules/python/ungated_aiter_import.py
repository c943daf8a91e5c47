"""Reports aiter imports that can run where aiter is not enabled.

## What it does
Reports aiter imports (statements, `importlib.import_module`, `__import__`) that can run on
CUDA, or on ROCm with `SGLANG_USE_AITER` off, on a path that did not choose aiter, as the
`aiter-import-policy` setting says:

### `reachable` (the default)
On such machines aiter gates (`_use_aiter`, `USE_AITER*`, flags read from
`SGLANG_USE_AITER`; `aiter-gates` names others) are false, `_is_hip` is ROCm-only,
environment switches take their default, and a `try:` catching ImportError guards. Reported: a
module-level import in a script or in a module loaded on such a path (an unimported module
counts as loaded); an import in a function that itself chooses the path (its own `if` or early
exit).

Not reported: wrappers with no condition of their own (the caller chooses); code named for
aiter; a function that already imported aiter unconditionally; AMD-only registered tests;
modules loaded by name (`importlib`, class-path strings); chains of over 6 unguarded imports;
conditions on `self.x` flags.

### `lexical`
Reports every import outside an aiter-gated branch (`if _use_aiter:`, code after
`if not _use_aiter: return`) or a `try:` catching ImportError.

### `import-time`
Reports only module-level imports that run on CUDA: of aiter in a package `__init__.py`,
and of checked modules that import aiter at import time (indexed once per run, with SGLang's
gates).

## Why is this bad?
On CUDA, where aiter is not installed, an unguarded import is a `ModuleNotFoundError`. On
ROCm aiter is opt-in (`SGLANG_USE_AITER`), so `if _is_hip:` is not enough.

## Example
```python
from sglang.srt.utils import is_hip

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
No automatic fix: the CUDA path's alternative is the author's call.
"""

from __future__ import annotations

from kernlint.config import import_time_policy
from kernlint.lazyre import lazy_compile
from kernlint.model import Rule
from kernlint.python import walk as _walk
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
    lazy_compile(rb"import(?:[ \t]|\\\r?\n)(?:[^\n;#\\i]|i(?!mport\b)|\\\r?\n)*?\baiter\b"),
    lazy_compile(rb"from(?:[ \t]|\\\r?\n)+aiter\b"),
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
_AITER_IMPORT = lazy_compile(
    rb"import\s(?:[^\n;i]|i(?!mport\b))*\baiter\b|from\s+aiter\b"
    rb"|(?:import_module|__import__)\(\s*[rbu]?['\"]aiter"
)


def check(ctx) -> None:
    policy = getattr(ctx.settings, "aiter_import_policy", "reachable")
    if policy == "import-time":
        _import_time(ctx)
        return
    if not _may_import_aiter(ctx.data):
        return  # cannot hold an aiter import: never parsed (the trigger found `aiter` already)
    if ctx.tree is None:
        return  # unparsable: the engine warns about it when a tree rule runs
    if policy == "lexical":
        _lexical(ctx)
    else:
        _reachable(ctx)


def _lexical(ctx) -> None:
    from kernlint.python.conventions import aiter_fix
    from kernlint.python.conventions import guards as gated

    facts = ctx.facts
    if not facts.aiter_imports:
        return
    guards = gated(ctx)
    fix = aiter_fix(ctx.settings)
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
            f"`{module}` import {why}: {fix}",
        )


def _reachable(ctx) -> None:
    from kernlint.python.aiter_reach import explain
    from kernlint.python.conventions import aiter_fix

    judge, verdicts = explain(ctx)
    fix = None
    for node, name, v, _why in verdicts:
        if v is None:
            continue
        if fix is None:
            fix = aiter_fix(ctx.settings)
        if v.kind == "module":
            message = _module_message(judge, name, v, v.detail, fix)
        else:
            message = _function_message(judge, name, v, fix)
        ctx.report(*node_span(ctx, node), message)


_FIX = "put it under `if _use_aiter:`"


def _module_message(judge, name, v, evidence, fix: str = _FIX) -> str:
    from kernlint.python.aiter_reach import holding

    via = f" ({evidence})" if evidence else ""
    where = v.where()
    if v.first is None:
        return f"`{name}` import runs whenever this module is imported, on {where}{via}: {fix}"
    if v.hip:
        return (
            f"`{name}` import is under a HIP check only: it runs on {where} whenever this "
            f"module is imported{via}: {fix}"
        )
    test, pol = v.first
    return (
        f"`{name}` import is under a condition that is not the aiter gate "
        f"(`{holding(test, pol)}`{_defaults(judge, test)}): it runs on {where} when this "
        f"module is imported{via}: {fix}"
    )


def _function_message(judge, name, v, fix: str = _FIX) -> str:
    from kernlint.python.aiter_reach import holding

    test, pol = v.first
    cond = holding(test, pol)
    if v.hip:
        return (
            f"`{name}` import in `{v.detail}` is under a HIP check only (`{cond}`): it runs on "
            f"{v.where()}: {fix}"
        )
    return (
        f"`{name}` import in `{v.detail}` runs on {v.where()} when `{cond}` holds"
        f"{_defaults(judge, test)}, and nothing on its path selects aiter: {fix}"
    )


def _defaults(judge, test) -> str:
    """`; X is on by default` for the environment switches of a condition that are on."""
    import ast

    on = []
    for sub in _walk(test):
        env = judge._env_read(sub) if isinstance(sub, ast.Call) else None
        if env is not None and env[1] is True and env[0] not in on:
            on.append(env[0])
    if not on:
        return ""
    names = ", ".join(f"`{n}`" for n in on)
    return f"; {names} {'is' if len(on) == 1 else 'are'} on by default"


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
