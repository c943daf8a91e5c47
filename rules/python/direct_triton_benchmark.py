"""Reports `triton.testing` benchmarking in JIT benchmark files.

## What it does
In JIT benchmark files -- `bench_*.py` under `jit-benchmark-roots` -- reports calls to
`triton.testing.do_bench`, `triton.testing.do_bench_cudagraph` and uses of
`triton.testing.perf_report` (as a decorator or a call), however imported: `import triton`,
`import triton.testing as tt`, `from triton.testing import do_bench as db`,
`from triton import testing`.

The default `jit-benchmark-roots` are the locations SGLang's JIT kernel guide gives them:
`**/test/registered/kernels/benchmark/**` (the CI-registered benchmarks that `run_suite.py`
runs) and the JIT trees' own `benchmark/` folders in the wheels' layouts
(`**/kernels/jit/benchmark/**`, `**/jit_kernel/benchmark/**`), excluding `**/aot/**`. Out of
scope: AOT kernel benchmarks (`kernels/aot/benchmark/`: the sgl-kernel guide prescribes
`triton.testing` there), the top-level `benchmark/` folder of model and serving benchmarks,
and files not named `bench_*.py` (the `marker` framework itself, `benchmark/utils.py`).
A project with its JIT benchmarks elsewhere sets `jit-benchmark-roots` (or
`extend-jit-benchmark-roots`) in its config.

## Why is this bad?
SGLang's JIT kernel benchmarks use the project's `marker` framework (`marker.do_bench`): it
handles CUDA graphs, L2 flushing, warm-up and reporting the same way for every kernel so
results are comparable across kernels and PRs, and CI can collect them. A raw
`triton.testing.do_bench` measures differently and reports nowhere.

## Example
```python
# test/registered/kernels/benchmark/elementwise/bench_scale.py
import triton.testing


def bench(fn):
    return triton.testing.do_bench(fn, quantiles=[0.5, 0.2, 0.8])
```

## Use instead
```python
# test/registered/kernels/benchmark/elementwise/bench_scale.py
from sglang.kernels.jit.benchmark import marker


def bench(fn):
    return marker.do_bench(fn)
```

## Fix safety
No automatic fix: `marker.do_bench` has its own signature and output.
"""

from __future__ import annotations

import ast
import os
import re
from bisect import bisect_left
from collections import deque

from kernlint.model import Rule
from kernlint.python import child_nodes
from kernlint.python import walk as _walk
from kernlint.python.facts import node_span


def is_bench_file(path: str) -> bool:
    """Is the file named `bench_*.py` (as `fnmatch` matches it: without case where the
    platform's paths have none)? (A path filter: asked of every Python file, most of which
    have no `bench_` in their path.)"""
    if "bench_" not in path.lower():
        return False
    name = os.path.normcase(os.path.basename(path.replace("\\", "/")))
    return name.startswith("bench_") and name.endswith(".py")


RULE = Rule(
    code="PY007",
    name="direct-triton-benchmark",
    language="python",
    summary="`triton.testing.do_bench`/`perf_report` in a JIT benchmark (use `marker`)",
    triggers=(b"do_bench", b"perf_report"),
    # The file name is fixed; the folders (`jit-benchmark-roots`) are the config's.
    path_filter=is_bench_file,  # (one function: the engine asks it once per file)
    # (parsed only for a JIT benchmark: most `bench_*.py` files are outside the roots)
    needs_tree=False,
)

TARGETS = frozenset(
    {
        "triton.testing.do_bench",
        "triton.testing.do_bench_cudagraph",
        "triton.testing.perf_report",
    }
)


_LAST_WORDS = frozenset(t.rpartition(".")[2] for t in TARGETS)


def is_jit_benchmark(path: str, settings=None) -> bool:
    """A `bench_*.py` under the settings' `jit-benchmark-roots` (the defaults without
    settings)."""
    if not is_bench_file(path):
        return False
    if settings is None or not hasattr(settings, "is_jit_benchmark"):
        from kernlint.config import DEFAULT_JIT_BENCHMARK_ROOTS
        from kernlint.globmatch import matcher

        spec = matcher(tuple(DEFAULT_JIT_BENCHMARK_ROOTS))
        return spec.match_file(os.path.abspath(path).replace(os.sep, "/").lstrip("/"))
    return settings.is_jit_benchmark(os.path.abspath(path))


def check(ctx) -> None:
    if not is_jit_benchmark(ctx.source.abspath or ctx.source.path, ctx.settings):
        return
    if ctx.tree is None:
        return  # unparsable: the engine warns about it
    facts = ctx.facts
    names = facts.names
    inner = set()  # the `value` of an attribute: judged as part of the whole dotted name
    for node in _candidates(ctx, names):
        if isinstance(node, ast.Attribute):
            inner.add(id(node.value))
            # (a dotted name's origin ends with its last attribute)
            if node.attr not in _LAST_WORDS:
                continue
        elif isinstance(node, ast.Name):
            if names.get(node.id, node.id) not in TARGETS:
                continue
        else:
            continue
        if not isinstance(node.ctx, ast.Load) or id(node) in inner:
            continue
        origin = facts.qualified(node)
        if origin in TARGETS:
            ctx.report(
                *node_span(ctx, node),
                f"`{origin}` in a JIT benchmark: use the project's `marker` framework "
                "(`marker.do_bench`)",
            )


def _candidates(ctx, names: dict[str, str]):
    """The tree's nodes in `walk` order, less the statements (and all they hold) whose lines
    name no target: no attribute ending in a target's last word, no name imported as a
    target. (A name is the bytes of its line in an ASCII file; elsewhere every node: a
    non-ASCII identifier can spell an ASCII one.)"""
    if not ctx.data.isascii():
        return _walk(ctx.tree)
    words = _LAST_WORDS | {n for n, origin in names.items() if origin in TARGETS}
    alternatives = b"|".join(re.escape(w.encode()) for w in sorted(words))
    line_index = ctx.source.line_index
    lines = sorted(
        {
            line_index(m.start()) + 1
            for m in re.finditer(rb"\b(?:" + alternatives + rb")\b", ctx.data)
        }
    )
    return _walk_lines(ctx.tree, lines)


def _walk_lines(tree, lines: list[int]):
    """`walk` that leaves out every statement holding none of the sorted 1-based `lines`."""
    todo = deque([tree])
    while todo:
        node = todo.popleft()
        yield node
        for child in child_nodes(node):
            if isinstance(child, ast.stmt):
                first = child.lineno
                for d in getattr(child, "decorator_list", ()):
                    first = min(first, d.lineno)
                i = bisect_left(lines, first)
                if i == len(lines) or lines[i] > (child.end_lineno or child.lineno):
                    continue
            todo.append(child)
