"""Reports JIT modules built outside a `@cache_once` factory.

## What it does
Reports each `load_jit(...)` call (however imported, or as `module.load_jit(...)`) that is not
inside a function decorated with `@cache_once` (however imported), including calls at module
level outside any function. The finding sits on the call. Configure: `jit-loaders`, `jit-cache-decorators` (docs/presets.md).

Not reported: a call inside a function nested in a `@cache_once` function (it runs once per
cached call); a call in a function decorated with `functools.lru_cache`/`functools.cache`
(that is `lru-cache-on-jit-module`'s finding); a call in a function that the module passes to a
decorator as a registration callback (`@lazy_register_class("name", _init)`): registration
runs it once.

## Why is this bad?
`load_jit` compiles (or loads from the on-disk cache) and `dlopen`s a module. Called per
invocation it re-hashes sources and re-loads the library on the hot path; at module level it
compiles at import time, for every user, even those who never call the kernel. SGLang's guide
builds every JIT module inside a `@cache_once` factory keyed by its template arguments.

## Example
```python
from sglang.jit_kernel.utils import load_jit


def fused_add_rmsnorm(x, residual, weight, eps):
    module = load_jit("fused_add_rmsnorm", cuda_files=["elementwise/fused_add_rmsnorm.cuh"])
    module.run(x, residual, weight, eps)
```

## Use instead
```python
from sglang.jit_kernel.utils import cache_once, load_jit


@cache_once
def _jit_module():
    return load_jit("fused_add_rmsnorm", cuda_files=["elementwise/fused_add_rmsnorm.cuh"])


def fused_add_rmsnorm(x, residual, weight, eps):
    _jit_module().run(x, residual, weight, eps)
```

## Fix safety
No automatic fix: the factory's arguments (the template parameters of the module) are the
author's design.
"""

from __future__ import annotations

import ast

from kernlint.lazyre import lazy_compile
from kernlint.model import Rule
from kernlint.python.facts import node_span
from kernlint.python.jit import partial_lines as jit_partial_lines
from kernlint.python.jit import when_loaders_configured

RULE = Rule(
    code="PY004",
    name="jit-module-not-cached",
    language="python",
    summary="`load_jit(...)` outside a `@cache_once` factory",
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
        loader_name,
        loaders_here,
    )

    names, here = loaders_here(ctx)
    if not here:
        return
    cached = caches(ctx.settings)
    facts = ctx.facts
    callbacks = _decorator_callbacks(facts)
    for call in load_jit_calls(facts, names):
        funcs = enclosing_functions(call, facts.guards)
        kinds = [
            {decorator_kind(d, facts, cached) for d in getattr(f, "decorator_list", [])}
            for f in funcs
        ]
        if any("cache_once" in k for k in kinds):
            continue
        if kinds and "lru_cache" in kinds[0]:
            continue  # lru-cache-on-jit-module reports it
        if funcs and getattr(funcs[0], "name", None) in callbacks:
            continue
        where = (
            f"function `{funcs[0].name}`"
            if funcs and hasattr(funcs[0], "name")
            else "a lambda"
            if funcs
            else "code at module level"
        )
        loader = "load_jit" if names is None else loader_name(call, facts)
        ctx.report(
            *node_span(ctx, call),
            f"`{loader}(...)` in {where} is not cached: build the module in a "
            f"{cache_shown(ctx.settings)} factory",
        )


# (A line start written as a newline: much faster than `^` under re.M; `nodes_on_lines`
# searches the file after a newline, so the first line is included.)
_DECORATOR_LINE = lazy_compile(rb"\n[ \t]*@")


def _decorator_callbacks(facts) -> set[str]:
    """Names passed as arguments to decorator calls (`@lazy_register_class("x", _init)`)."""
    out = set()
    types = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    for node in facts.nodes_on_lines(_DECORATOR_LINE, types):
        if isinstance(node, types):
            for dec in node.decorator_list:
                if isinstance(dec, ast.Call):
                    for arg in list(dec.args) + [k.value for k in dec.keywords]:
                        if isinstance(arg, ast.Name):
                            out.add(arg.id)
    return out
