"""Reports `triton.testing` benchmarking in JIT benchmark files.

## What it does
In JIT benchmark files -- `bench_*.py` inside a folder named `benchmark` (SGLang's
`jit_kernel/benchmark/`) -- reports calls to `triton.testing.do_bench`,
`triton.testing.do_bench_cudagraph` and uses of `triton.testing.perf_report` (as a decorator
or a call), however imported: `import triton`, `import triton.testing as tt`,
`from triton.testing import do_bench as db`, `from triton import testing`.

Files elsewhere (model benchmarks under `benchmarks/`, the benchmark framework's own helpers
such as `benchmark/utils.py`) are out of scope.

## Why is this bad?
SGLang's JIT kernel benchmarks use the project's `marker` framework (`marker.do_bench`): it
handles CUDA graphs, L2 flushing, warm-up and reporting the same way for every kernel so
results are comparable across kernels and PRs, and CI can collect them. A raw
`triton.testing.do_bench` measures differently and reports nowhere.

## Example
```python
# benchmark/bench_scale.py
import triton.testing


def bench(fn):
    return triton.testing.do_bench(fn, quantiles=[0.5, 0.2, 0.8])
```

## Use instead
```python
# benchmark/bench_scale.py
from sglang.jit_kernel.benchmark import marker


def bench(fn):
    return marker.do_bench(fn)
```

## Fix safety
No automatic fix: `marker.do_bench` has its own signature and output.
"""

from __future__ import annotations

import ast
import fnmatch
import os

from kernlint.model import Rule
from kernlint.python.facts import node_span

RULE = Rule(
    code="PY007",
    name="direct-triton-benchmark",
    language="python",
    summary="`triton.testing.do_bench`/`perf_report` in a JIT benchmark (use `marker`)",
    triggers=(b"do_bench", b"perf_report"),
    path_filter=lambda path: is_jit_benchmark(path),
)

TARGETS = frozenset(
    {
        "triton.testing.do_bench",
        "triton.testing.do_bench_cudagraph",
        "triton.testing.perf_report",
    }
)


def is_jit_benchmark(path: str) -> bool:
    parts = path.replace(os.sep, "/").split("/")
    return fnmatch.fnmatch(parts[-1], "bench_*.py") and "benchmark" in parts[:-1]


def check(ctx) -> None:
    if not is_jit_benchmark(ctx.source.abspath or ctx.source.path):
        return
    facts = ctx.facts
    for node in ast.walk(ctx.tree):
        if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(
            getattr(node, "ctx", None), ast.Load
        ):
            parent = facts.parents.get(id(node))
            if isinstance(parent, ast.Attribute):
                continue  # judge the whole dotted name, not its prefix
            origin = facts.qualified(node)
            if origin in TARGETS:
                ctx.report(
                    *node_span(ctx, node),
                    f"`{origin}` in a JIT benchmark: use the project's `marker` framework "
                    "(`marker.do_bench`)",
                )
