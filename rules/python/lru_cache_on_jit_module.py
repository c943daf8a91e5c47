"""Reports `functools.lru_cache` / `functools.cache` on functions that build JIT modules.

## What it does
Reports the `@lru_cache`, `@lru_cache(...)`, `@cache`, `@functools.lru_cache(maxsize=None)`,
... decorator (however `functools` or the decorator was imported or aliased:
`from functools import lru_cache as lc`, `import functools as ft`) on a function whose own
body calls `load_jit(...)`. Configure: `jit-loaders`, `jit-cache-decorators` (docs/presets.md).

## Why is this bad?
`torch.compile` cannot trace through `functools.lru_cache`-wrapped functions (the wrapper is a
C extension object Dynamo graph-breaks on), so every compiled model that reaches the kernel
falls back to eager around it. SGLang's `@cache_once` is a plain-Python cache that Dynamo can
trace, and is the guide's spelling for JIT module factories.

## Example
```python
import functools

from sglang.jit_kernel.utils import load_jit


@functools.lru_cache(maxsize=None)
def _jit_module(dtype):
    return load_jit("scale", dtype, cuda_files=["elementwise/scale.cuh"])
```

## Use instead
```python
from sglang.jit_kernel.utils import cache_once, load_jit


@cache_once
def _jit_module(dtype):
    return load_jit("scale", dtype, cuda_files=["elementwise/scale.cuh"])
```

## Fix safety
The fix replaces the decorator with `@cache_once`, and is offered only when the module already
imports `cache_once`. It is unsafe: `lru_cache(maxsize=N)` evicts, `cache_once` does not, and
code that calls `.cache_clear()` on the function breaks.
"""

from __future__ import annotations

from kernlint.model import Edit, Fix, Rule
from kernlint.python.facts import node_span
from kernlint.python.jit import partial_lines as jit_partial_lines
from kernlint.python.jit import when_loaders_configured

RULE = Rule(
    code="PY005",
    name="lru-cache-on-jit-module",
    language="python",
    summary="`functools.lru_cache` on a JIT module factory (use `@cache_once`)",
    fix="unsafe",
    triggers=(b"load_jit",),
    untriggered_when=when_loaders_configured,  # (`jit-loaders`: other names)
    partial_lines=jit_partial_lines,
)


def check(ctx) -> None:
    from kernlint.python.jit import (
        cache_shown,
        caches,
        decorator_kind,
        enclosing_functions,
        load_jit_calls,
        loaders_here,
    )

    names, here = loaders_here(ctx)
    if not here:
        return
    cached = caches(ctx.settings)
    facts = ctx.facts
    wanted = ("cache_once",) if cached is None else ctx.settings.jit_cache_decorators
    cache_once_name = next(
        (
            n
            for want in wanted
            for n, origin in facts.names.items()
            if origin.split(".")[-1] == want
        ),
        None,
    )
    use = cache_shown(ctx.settings) if cached is None or cached else "a cache it can trace"
    seen = set()
    for call in load_jit_calls(facts, names):
        funcs = enclosing_functions(call, facts.guards)
        if not funcs or not hasattr(funcs[0], "decorator_list"):
            continue
        func = funcs[0]
        for dec in func.decorator_list:
            if decorator_kind(dec, facts, cached) != "lru_cache" or id(dec) in seen:
                continue
            seen.add(id(dec))
            start, end = node_span(ctx, dec)
            fix = None
            if cache_once_name:
                fix = Fix((Edit(start, end, cache_once_name),), "unsafe", f"Use {use}")
            ctx.report(
                start,
                end,
                f"`{func.name}` builds a JIT module under `functools` caching, which "
                f"`torch.compile` cannot trace: use {use}",
                fix,
            )
