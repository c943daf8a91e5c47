"""Reports benchmark inputs built with `torch.randn`/`torch.empty` where the benchmark
utilities have a shorthand.

## What it does
In JIT benchmark files (`bench_*.py` under `jit-benchmark-roots`), reports `torch.randn(...)`
and `torch.empty(...)` calls (however `torch` is imported) that spell out both `dtype=` and
`device=` and nothing else besides the shape: the open-coded form of the benchmark utilities'
`create_random(*shape, dtype=..., device=...)` and `create_empty(*shape, dtype=...,
device=...)`. It reports only where the JIT benchmark utilities of the file's tree
(`benchmark/utils.py` of the JIT package, found from the file's directory upwards) define
`create_random` (for `torch.randn`) or `create_empty` (for `torch.empty`).

Not reported, by design:
- allocations inside the implementations being timed (a function passed to `do_bench(...)`,
  a value of a module-level dict such as `FN_MAP`): they are the code under test;
- calls with any other keyword (`generator=`, `pin_memory=`, `out=`, ...), with only one of
  `dtype=`/`device=` (the helpers' defaults differ from torch's), or with `**kwargs`;
- `torch.randn_like`/`torch.empty_like` and other constructors (`torch.zeros`, `torch.rand`).

The rule is in preview.

## Why is this bad?
SGLang's JIT kernel guide asks benchmarks to build their inputs with `create_random` /
`create_empty`: one spelling for every benchmark, with the project's default dtype and device
in one place, so that a reader sees at once which inputs deviate from the defaults.

## Example
```python
# benchmark/bench_scale.py
import torch


def inputs(n):
    return torch.randn(n, 4096, dtype=torch.bfloat16, device="cuda")
```

```python
# benchmark/utils.py
import torch


def create_random(*shape, dtype=torch.bfloat16, device="cuda"):
    return torch.randn(shape, dtype=dtype, device=device)
```

## Use instead
```python
# benchmark/bench_scale.py
from sglang.kernels.jit.benchmark.utils import create_random


def inputs(n):
    return create_random(n, 4096)
```

```python
# benchmark/utils.py
import torch


def create_random(*shape, dtype=torch.bfloat16, device="cuda"):
    return torch.randn(shape, dtype=dtype, device=device)
```

## Fix safety
No automatic fix: the helper has to be imported, and a tuple shape unpacked
(`torch.randn((n, d), ...)` becomes `create_random(n, d, ...)`).
"""

from __future__ import annotations

import ast
import os
import re
from collections import deque

from kernlint.lazyre import lazy_compile
from kernlint.model import Rule
from kernlint.python import child_nodes
from kernlint.python.facts import node_span

from .direct_triton_benchmark import is_bench_file, is_jit_benchmark

RULE = Rule(
    code="PY017",
    name="raw-benchmark-tensor",
    language="python",
    summary="`torch.randn`/`torch.empty` with `dtype=` and `device=` in a JIT benchmark "
    "(use `create_random`/`create_empty`)",
    severity="warning",
    status="preview",
    triggers=(b"randn", b"empty"),
    prefilter=lazy_compile(rb"\b(?:randn|empty)\s*\("),
    path_filter=is_bench_file,
    # (parsed only for a JIT benchmark: most `bench_*.py` files are outside the roots)
    needs_tree=False,
)

HELPERS = {"torch.randn": "create_random", "torch.empty": "create_empty"}
# Where a tree keeps its JIT benchmark utilities, relative to a directory above the file.
_UTILS = (
    ("python", "sglang", "kernels", "jit", "benchmark", "utils.py"),
    ("sglang", "kernels", "jit", "benchmark", "utils.py"),
    ("kernels", "jit", "benchmark", "utils.py"),
    ("jit_kernel", "benchmark", "utils.py"),
)
_DEF = lazy_compile(rb"^def[ \t]+(create_random|create_empty)[ \t]*\(", re.M)
_OF_DIR: dict[str, frozenset[str]] = {}


def helpers_for(abspath: str) -> frozenset[str]:
    """The shorthands (`create_random`, `create_empty`) the benchmark utilities of the tree
    holding `abspath` define (empty: no such utilities found). Memoized per directory."""
    from kernlint.jitscope import nearest_above

    found = nearest_above(os.path.dirname(os.path.abspath(abspath)), _read_utils, _OF_DIR)
    return found if found is not None else frozenset()


def _read_utils(directory: str) -> frozenset[str] | None:
    for parts in _UTILS:
        path = os.path.join(directory, *parts)
        try:
            with open(path, "rb") as fh:
                data = fh.read(1 << 20)
        except OSError:
            continue
        return frozenset(m.group(1).decode() for m in _DEF.finditer(data))
    return None


def fingerprint(abspath: str) -> str:
    """What a benchmark file's findings depend on beyond its bytes: the helpers its tree has."""
    return "|bench-helpers:" + ",".join(sorted(helpers_for(abspath)))


def _timed_functions(tree) -> set[str]:
    """Names of the implementations a benchmark times: passed to a `do_bench(...)` call, or a
    value of a module-level dict (`FN_MAP = {"jit": jit_scale, "triton": _triton_impl}`).
    Their allocations are the code under test, not benchmark inputs."""
    out: set[str] = set()
    for stmt in tree.body:
        value = getattr(stmt, "value", None)
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and isinstance(value, ast.Dict):
            out.update(v.id for v in value.values if isinstance(v, ast.Name))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Name)
            and (
                (isinstance(node.func, ast.Attribute) and node.func.attr == "do_bench")
                or (isinstance(node.func, ast.Name) and node.func.id == "do_bench")
            )
        ):
            out.add(node.args[0].id)
    return out


def reset() -> None:
    _OF_DIR.clear()


def check(ctx) -> None:
    path = ctx.source.abspath or ctx.source.path
    if not is_jit_benchmark(path, ctx.settings):
        return
    available = helpers_for(path)
    if not available:
        return
    if ctx.tree is None:
        return  # unparsable: the engine warns about it
    facts = ctx.facts
    names = facts.names
    timed = _timed_functions(ctx.tree)
    for node in _calls_outside(ctx.tree, timed):
        fn = node.func
        # (the origin of a dotted name ends with its last attribute)
        if isinstance(fn, ast.Attribute) and fn.attr not in _LAST_WORDS:
            continue
        if isinstance(fn, ast.Name) and names.get(fn.id, fn.id) not in HELPERS:
            continue
        origin = facts.qualified(fn)
        helper = HELPERS.get(origin)
        if helper is None or helper not in available:
            continue
        keywords = {kw.arg for kw in node.keywords}
        if len(node.keywords) != 2 or keywords != {"device", "dtype"} or not node.args:
            continue
        ctx.report(
            *node_span(ctx, node.func),
            f"`{origin}(..., dtype=..., device=...)` in a JIT benchmark: use the benchmark "
            f"utilities' `{helper}(*shape, dtype=..., device=...)`",
        )


_LAST_WORDS = frozenset(h.rpartition(".")[2] for h in HELPERS)


def _calls_outside(tree, timed: set[str]):
    """The calls of the tree in `walk` order, but those in the functions named `timed`."""
    todo = deque([tree])
    while todo:
        node = todo.popleft()
        if isinstance(node, ast.Call):
            yield node
        for child in child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and child.name in timed:
                continue
            todo.append(child)
