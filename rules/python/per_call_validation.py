"""Reports tensor checks in a JIT kernel's per-call entry point.

## What it does
In a module-level function that calls the module a `@cache_once` factory of the same file
builds with `load_jit(...)` (`_jit_module(x.dtype).run(...)`; other names: `jit-loaders`,
`jit-cache-decorators`), reports each statement of its own body that checks a tensor on every
call: `assert <condition>` or `if <condition>: raise ...`, where the
condition reads `.shape`, `.dtype`, `.device`, `.ndim`, `.is_cuda` or calls
`.is_contiguous()`, `.size()`, `.stride()`, `.dim()`, `.numel()` on a name.

Not reported:
- checks inside the factory, in a nested block (`if debug: assert ...`) or nested function;
- conditions picking a module or a fallback without raising;
- entry points calling a factory imported from another module;
- a contiguity check of a tensor the function then reshapes or views (`x.view(-1, d)`);
- other checks (device capability, flags, integer arguments).

In preview: checks C++ cannot express (a flattened view's page shape, pinned host memory)
are still reported.

## Why is this bad?
SGLang's JIT kernel guide keeps the per-call entry point to picking the module and
allocating `out`: tensor invariants go in the C++ launcher (`TensorMatcher`, `CHECK_HOST`),
compile-key checks in the `@cache_once` factory (once per specialisation). A check left in
the entry point costs interpreter time on every forward pass.

## Example
```python
import torch

from sglang.kernels.jit.utils import cache_once, load_jit


@cache_once
def _jit_scale_module(dtype):
    return load_jit("scale", cuda_files=["elementwise/scale.cuh"])


def scale(src, factor):
    assert src.is_contiguous()
    out = torch.empty_like(src)
    _jit_scale_module(src.dtype).scale(out, src, factor)
    return out
```

## Use instead
```python
import torch

from sglang.kernels.jit.utils import cache_once, load_jit


@cache_once
def _jit_scale_module(dtype):
    if dtype not in (torch.float16, torch.bfloat16, torch.float32):
        raise RuntimeError(f"Unsupported dtype {dtype}")
    return load_jit("scale", cuda_files=["elementwise/scale.cuh"])


def scale(src, factor):
    out = torch.empty_like(src)
    _jit_scale_module(src.dtype).scale(out, src, factor)
    return out
```

## Fix safety
No automatic fix: the check moves to C++ (`TensorMatcher`) or into the factory, whose
arguments it may need.
"""

from __future__ import annotations

import ast

from kernlint.model import Rule
from kernlint.python import walk as _walk
from kernlint.python.facts import node_span
from kernlint.python.jit import when_loaders_configured

RULE = Rule(
    code="PY018",
    name="per-call-validation",
    language="python",
    summary="tensor check in a JIT entry point, run on every call (check in C++ or the factory)",
    severity="warning",
    status="preview",
    triggers=(b"load_jit",),
    untriggered_when=when_loaders_configured,  # (`jit-loaders`: other names)
)

_ATTRIBUTES = frozenset({"shape", "dtype", "device", "ndim", "is_cuda"})
_METHODS = frozenset({"is_contiguous", "size", "stride", "dim", "numel"})


def check(ctx) -> None:
    from kernlint.python.jit import (
        cache_shown,
        caches,
        decorator_kind,
        is_load_jit,
        loaders_here,
    )

    names, here = loaders_here(ctx)
    if not here:
        return
    cached = caches(ctx.settings)
    tree = ctx.tree
    if tree is None:
        return
    facts = ctx.facts
    functions = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    factories = set()
    for f in functions:
        if any(decorator_kind(d, facts, cached) == "cache_once" for d in f.decorator_list) and any(
            isinstance(n, ast.Call) and is_load_jit(n, facts, names) for n in _own_nodes(f)
        ):
            factories.add(f.name)
    if not factories:
        return
    for f in functions:
        if f.name in factories:
            continue
        factory = _calls_module(f, factories)
        if factory is None:
            continue
        reshaped = {
            n.func.value.id
            for n in _own_nodes(f)
            if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr in ("view", "reshape")
            and isinstance(n.func.value, ast.Name)
        }
        for stmt in f.body:
            prop = _checked_property(stmt)
            if prop is not None and prop.endswith(".is_contiguous()"):
                if prop.split(".")[0] in reshaped:
                    continue  # (it guards a Python-side view: C++ sees only the view)
            if prop is not None:
                ctx.report(
                    *node_span(ctx, stmt),
                    f"per-call check of `{prop}` in `{f.name}`, which runs the JIT module of "
                    f"`{factory}`: check tensors in the C++ launcher (`TensorMatcher`) and "
                    f"compile-key values in the {cache_shown(ctx.settings)} factory",
                )


def _own_nodes(func):
    """The nodes of `func`'s body, nested functions, classes and lambdas left out."""
    stack = list(func.body)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
            ):
                stack.append(child)


def _calls_module(func, factories) -> str | None:
    """The factory whose module `func` calls (`f(...).run(...)`, or `m = f(...)` then
    `m.run(...)`), or None."""
    bound: dict[str, str] = {}
    nodes = list(_own_nodes(func))
    for node in nodes:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and _factory_call(node.value, factories)
        ):
            bound[node.targets[0].id] = _factory_call(node.value, factories)
    for node in nodes:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            name = _factory_call(owner, factories)
            if name is not None:
                return name
            if isinstance(owner, ast.Name) and owner.id in bound:
                return bound[owner.id]
    return None


def _factory_call(node, factories) -> str | None:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in factories:
        return node.func.id
    return None


def _checked_property(stmt) -> str | None:
    """`x.shape` (or `x.is_contiguous()`, ...) when `stmt` is an assert or an
    `if ...: raise` reading it, else None."""
    if isinstance(stmt, ast.Assert):
        test = stmt.test
    elif isinstance(stmt, ast.If) and stmt.body and isinstance(stmt.body[0], ast.Raise):
        test = stmt.test
    else:
        return None
    for node in _walk(test):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.attr in _ATTRIBUTES:
                return f"{node.value.id}.{node.attr}"
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _METHODS
            and isinstance(node.func.value, ast.Name)
        ):
            return f"{node.func.value.id}.{node.func.attr}()"
    return None
