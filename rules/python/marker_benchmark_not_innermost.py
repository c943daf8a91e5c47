"""Reports `@marker.benchmark(...)` that is not a benchmark function's innermost decorator.

## What it does
In JIT benchmark files -- `bench_*.py` under `jit-benchmark-roots` (see
`direct-triton-benchmark` for the defaults) -- reports a `@marker.benchmark(...)` decorator
of a function that has another decorator below it (between it and the `def`). `marker` is
SGLang's benchmark framework (`sglang.kernels.jit.benchmark.marker`, or
`sglang.jit_kernel.benchmark.marker` in older releases), however it is imported:
`from sglang.kernels.jit.benchmark import marker`, `import ... marker as m`,
`from ...marker import benchmark as bench`.

Not reported: a `marker.benchmark(...)(fn)` call that is not a decorator, a function
imported through a relative import (`from .marker import benchmark`), and files outside the
JIT benchmark roots.

## Why is this bad?
Decorators apply from the bottom up. `@marker.benchmark(...)` turns the function into the
`Benchmark` object that each `@marker.parametrize(...)` above it adds its axis to; a
`@marker.parametrize` below it receives the plain function instead, and the file fails at
import (`'function' object has no attribute 'add_config'`). Any other decorator below it
hands `marker.benchmark` its wrapper rather than the benchmark function: the framework reads
the benchmark's parameters from what it is given, and checks its `line_arg` against them.
SGLang's JIT kernel guide (Step 5) makes `@marker.benchmark` the innermost decorator,
directly above the `def`.

## Example
```python
# test/registered/kernels/benchmark/elementwise/bench_scale.py
from sglang.kernels.jit.benchmark import marker


@marker.benchmark("impl", ["jit", "torch"])
@marker.parametrize("size", [4096, 65536])
def benchmark(size: int, impl: str):
    return marker.do_bench(lambda: None)
```

## Use instead
```python
# test/registered/kernels/benchmark/elementwise/bench_scale.py
from sglang.kernels.jit.benchmark import marker


@marker.parametrize("size", [4096, 65536])
@marker.benchmark("impl", ["jit", "torch"])
def benchmark(size: int, impl: str):
    return marker.do_bench(lambda: None)
```

## Fix safety
No automatic fix: moving a decorator changes what every decorator below it wraps.
"""

from __future__ import annotations

import ast

from kernlint.model import Rule
from kernlint.python import walk as _walk
from kernlint.python.facts import node_span

from .direct_triton_benchmark import is_bench_file, is_jit_benchmark

RULE = Rule(
    code="PY015",
    name="marker-benchmark-not-innermost",
    language="python",
    summary="`@marker.benchmark(...)` not the innermost decorator of a JIT benchmark",
    # (every way of naming the framework spells its module, `marker`)
    triggers=(b"marker",),
    # The file name is fixed; the folders (`jit-benchmark-roots`) are the config's.
    path_filter=is_bench_file,
    # (parsed only for a JIT benchmark: most `bench_*.py` files are outside the roots)
    needs_tree=False,
)

# The `marker` framework's modules (the current layout and 0.5.15's `jit_kernel/`).
MARKER_MODULES = (
    "sglang.kernels.jit.benchmark.marker",
    "sglang.jit_kernel.benchmark.marker",
)
BENCHMARK = frozenset(f"{m}.benchmark" for m in MARKER_MODULES)
PARAMETRIZE = frozenset(f"{m}.parametrize" for m in MARKER_MODULES)


def marker_kind(decorator, facts) -> str | None:
    """ "benchmark" or "parametrize" for a `@marker.benchmark(...)` / `@marker.parametrize(...)`
    decorator, else None."""
    if not isinstance(decorator, ast.Call):
        return None
    origin = facts.qualified(decorator.func)
    if origin in BENCHMARK:
        return "benchmark"
    if origin in PARAMETRIZE:
        return "parametrize"
    return None


def check(ctx) -> None:
    if not is_jit_benchmark(ctx.source.abspath or ctx.source.path, ctx.settings):
        return
    if ctx.tree is None:
        return  # unparsable: the engine warns about it
    facts = ctx.facts
    for node in _walk(ctx.tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        decorators = node.decorator_list
        for i, dec in enumerate(decorators[:-1]):
            if marker_kind(dec, facts) != "benchmark":
                continue
            below = decorators[i + 1 :]
            inner = next((d for d in below if marker_kind(d, facts) == "parametrize"), None)
            if inner is not None:
                why = (
                    f"`@{ast.unparse(inner.func)}(...)` below it receives the plain function, "
                    "not the `Benchmark` it adds its axis to, and the file fails at import "
                    "(`'function' object has no attribute 'add_config'`)"
                )
            else:
                shown = ast.unparse(below[0].func if isinstance(below[0], ast.Call) else below[0])
                why = (
                    f"it wraps what `@{shown}` returns, not `{node.name}`, and reads the "
                    "benchmark's parameters from that wrapper (one that does not keep the "
                    "function's signature fails the `line_arg` check at import)"
                )
            ctx.report(
                *node_span(ctx, dec),
                f"`@{ast.unparse(dec.func)}(...)` is not the innermost decorator of "
                f"`{node.name}`: {why}; put it directly above the `def`",
            )
