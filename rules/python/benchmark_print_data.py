"""Reports `print_data=` passed to a `marker` benchmark's `run()`.

## What it does
In JIT benchmark files -- `bench_*.py` under `jit-benchmark-roots` (see
`direct-triton-benchmark` for the defaults) -- reports `NAME.run(..., print_data=...)` where
`NAME` is a module-level function decorated with SGLang's `@marker.benchmark(...)` (with only
`@marker.parametrize(...)` above it, so that `NAME` is the `Benchmark` object the framework
returns), however the framework is imported.

Not reported: `run(print_data=...)` on a `triton.testing.perf_report` benchmark (whose
`run()` takes it), on a name rebound elsewhere in the module or shadowed by a local of the
calling function, on a benchmark built by a call rather than a decorator, and on an
attribute (`self.bench.run(...)`).

## Why is this bad?
`Benchmark.run()` of the `marker` framework takes no `print_data` (only the keyword-only
`print_prefix` / `print_suffix` in recent releases): it always prints its table, and the
keyword raises `TypeError: run() got an unexpected keyword argument 'print_data'`, so the
benchmark never runs. The keyword is a leftover of `triton.testing.perf_report`, whose `run()`
prints only when asked. SGLang's JIT kernel guide (Step 5): "Call `benchmark.run()` (no
`print_data=` kwarg -- the marker framework prints directly)".

## Example
```python
# test/registered/kernels/benchmark/elementwise/bench_scale.py
from sglang.kernels.jit.benchmark import marker


@marker.parametrize("size", [4096, 65536])
@marker.benchmark("impl", ["jit", "torch"])
def benchmark(size: int, impl: str):
    return marker.do_bench(lambda: None)


if __name__ == "__main__":
    benchmark.run(print_data=True)
```

## Use instead
```python
# test/registered/kernels/benchmark/elementwise/bench_scale.py
from sglang.kernels.jit.benchmark import marker


@marker.parametrize("size", [4096, 65536])
@marker.benchmark("impl", ["jit", "torch"])
def benchmark(size: int, impl: str):
    return marker.do_bench(lambda: None)


if __name__ == "__main__":
    benchmark.run()
```

## Fix safety
The fix removes the keyword (offered where its value is a constant or a name, so nothing is
left unevaluated, and no comment is in the text it removes). It is unsafe: the call raised
`TypeError` before and runs the benchmark after, which is what the keyword asked for but not
what the code did.
"""

from __future__ import annotations

import ast

from kernlint.model import Edit, Fix, Rule
from kernlint.python import walk as _walk
from kernlint.python.facts import node_span

from .direct_triton_benchmark import is_bench_file, is_jit_benchmark
from .marker_benchmark_not_innermost import marker_kind

RULE = Rule(
    code="PY016",
    name="benchmark-print-data",
    language="python",
    summary="`benchmark.run(print_data=...)` on a `marker` benchmark (it raises TypeError)",
    fix="unsafe",
    triggers=(b"print_data",),
    path_filter=is_bench_file,
    # (parsed only for a JIT benchmark: most `bench_*.py` files are outside the roots)
    needs_tree=False,
)

_BINDERS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def check(ctx) -> None:
    if not is_jit_benchmark(ctx.source.abspath or ctx.source.path, ctx.settings):
        return
    if ctx.tree is None:
        return  # unparsable: the engine warns about it
    facts = ctx.facts
    benchmarks = _marker_benchmarks(ctx.tree, facts)
    if not benchmarks:
        return
    for node in _walk(ctx.tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "run"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in benchmarks
        ):
            continue
        kw = next((k for k in node.keywords if k.arg == "print_data"), None)
        if kw is None:
            continue
        name = node.func.value.id
        if _shadowed(name, node, facts):
            continue
        ctx.report(
            *node_span(ctx, kw),
            f"`{name}` is a `marker` benchmark, whose `run()` takes no `print_data`: the "
            "call raises TypeError (unexpected keyword argument 'print_data') and the "
            f"benchmark never runs; the framework prints its table itself: `{name}.run()`",
            _removal(ctx, node, kw),
        )


def _marker_benchmarks(tree, facts) -> set[str]:
    """Names of module-level functions bound to the `Benchmark` that `@marker.benchmark`
    returns (only `@marker.parametrize` above it), bound nowhere else at module level."""
    found = set()
    bound: dict[str, int] = {}
    for stmt in _module_statements(tree):
        for name in _bound_names(stmt):
            bound[name] = bound.get(name, 0) + 1
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        kinds = [marker_kind(d, facts) for d in stmt.decorator_list]
        if "benchmark" not in kinds:
            continue
        at = kinds.index("benchmark")
        if all(k == "parametrize" for k in kinds[:at]):
            found.add(stmt.name)
    return {n for n in found if bound.get(n) == 1}


def _module_statements(tree):
    """The module's statements, those in its module-level `if`/`try`/`with`/... included."""
    todo = list(tree.body)
    while todo:
        stmt = todo.pop()
        yield stmt
        if isinstance(stmt, (*_BINDERS, ast.Lambda)):
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            for child in getattr(stmt, field, ()) or ():
                if isinstance(child, ast.stmt):
                    todo.append(child)
                else:  # (an except handler or a match case: its statements)
                    todo.extend(getattr(child, "body", ()))


def _bound_names(stmt):
    """The names a module-level statement binds (its own, not those of nested scopes)."""
    if isinstance(stmt, _BINDERS):
        yield stmt.name
        return
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        for alias in stmt.names:
            yield (alias.asname or alias.name).split(".")[0]
        return
    for field in ("targets", "target", "items"):
        value = getattr(stmt, field, None)
        if value is None:
            continue
        for item in value if isinstance(value, list) else [value]:
            node = getattr(item, "optional_vars", item)
            if node is None:
                continue
            for n in ast.walk(node):
                if isinstance(n, ast.Name):
                    yield n.id


def _shadowed(name: str, node, facts) -> bool:
    """Is `name` a local of a function around `node` (a parameter or assigned there)?"""
    for scope in facts.guards.ancestors(node):
        if not isinstance(scope, _SCOPES):
            continue
        args = scope.args
        params = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
        if any(p is not None and p.arg == name for p in params):
            return True
        if isinstance(scope, ast.Lambda):
            continue
        for n in ast.walk(scope):
            if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store):
                return True
            if isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names:
                return False
    return False


def _removal(ctx, call, kw):
    """The edit that removes `kw` and its comma from `call`, or None."""
    if not isinstance(kw.value, (ast.Constant, ast.Name)):
        return None  # (its value would go unevaluated)
    items = sorted([*call.args, *call.keywords], key=lambda n: (n.lineno, n.col_offset))
    i = next(j for j, n in enumerate(items) if n is kw)
    kw_start, kw_end = node_span(ctx, kw)
    if len(items) == 1:
        start, end = kw_start, node_span(ctx, call)[1] - 1  # (up to the closing parenthesis)
    elif i + 1 < len(items):
        start, end = kw_start, node_span(ctx, items[i + 1])[0]
    else:
        start, end = node_span(ctx, items[i - 1])[1], kw_end
    removed = ctx.data[start:end]
    if b"#" in removed or b"\\" in removed:
        return None
    return Fix((Edit(start, end, ""),), "unsafe", "Remove `print_data=`")
