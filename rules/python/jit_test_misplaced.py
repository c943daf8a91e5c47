"""Reports JIT kernel tests and benchmarks outside their group's folder.

## What it does
Reports a JIT kernel test (`test_*.py`) not under `test/registered/kernels/ops/<group>/`, and
a JIT kernel benchmark (`bench_*.py`) not under `test/registered/kernels/benchmark/<group>/`,
where `<group>` is the folder of `python/sglang/kernels/ops/` holding a JIT kernel wrapper
(a module calling `load_jit(...)`) that the file imports. Judged: files under the
`registered-tests-roots` (`test/registered/` by default) whose other `sglang` imports are
kernel code, test helpers (`sglang.test...`) or utilities (`sglang.utils`,
`sglang.srt.utils`). Any imported group's folder does.

Not reported:
- tests of kernels whose modules do not call `load_jit` (Triton, CuTe DSL);
- a test of several groups directly in `kernels/ops/` (`kernels/benchmark/`);
- wrappers imported through package re-exports or `importlib`, or reaching `load_jit`
  through another module;
- trees without `python/sglang/kernels/ops/` above the test.

CI runs a registered file wherever it sits: this is a layout warning.

## Why is this bad?
SGLang's kernel guide keeps them there, mirroring the wrapper's group. Elsewhere, a test is
missed by anyone looking for a kernel's coverage, and editing it does not start the
JIT-kernel PR job (whose change filter is `test/registered/kernels/**`).

## Example
```python
# test/registered/lora/test_scale.py
import torch

from sglang.kernels.ops.elementwise.scale import scale
from sglang.test.ci.ci_register import register_cuda_ci

register_cuda_ci(est_time=30, stage="base-b-kernel-unit", runner_config="1-gpu-large")


def test_scale():
    assert scale(torch.ones(4, device="cuda"), 2.0).sum() == 8
```

```python
# python/sglang/kernels/ops/elementwise/scale.py
from sglang.kernels.jit.utils import cache_once, load_jit


@cache_once
def _jit_scale_module():
    return load_jit("scale", cuda_files=["elementwise/scale.cuh"], cuda_wrappers=[("scale", "scale")])


def scale(src, factor):
    return _jit_scale_module().scale(src, factor)
```

## Use instead
```python
# test/registered/kernels/ops/elementwise/test_scale.py
import torch

from sglang.kernels.ops.elementwise.scale import scale
from sglang.test.ci.ci_register import register_cuda_ci

register_cuda_ci(est_time=30, stage="base-b-kernel-unit", runner_config="1-gpu-large")


def test_scale():
    assert scale(torch.ones(4, device="cuda"), 2.0).sum() == 8
```

```python
# python/sglang/kernels/ops/elementwise/scale.py
from sglang.kernels.jit.utils import cache_once, load_jit


@cache_once
def _jit_scale_module():
    return load_jit("scale", cuda_files=["elementwise/scale.cuh"], cuda_wrappers=[("scale", "scale")])


def scale(src, factor):
    return _jit_scale_module().scale(src, factor)
```

## Fix safety
No automatic fix: the file has to move (with any helpers it imports by relative path).
"""

from __future__ import annotations

import ast
import os
import re

from kernlint.ci_layout import (
    collected_test,
    is_collected_test,
    may_be_collected_test,
    registered_root,
)
from kernlint.lazyre import lazy_compile
from kernlint.model import Rule
from kernlint.python.facts import node_span

_TRIGGER = b"sglang.kernels.ops"


def _may_be_kernel_test(path: str) -> bool:
    name = os.path.basename(path)
    return name.startswith(("test_", "bench_")) and may_be_collected_test(path)


RULE = Rule(
    code="PY020",
    name="jit-test-misplaced",
    language="python",
    summary="JIT kernel test/benchmark not under `test/registered/kernels/ops/<group>/` / "
    "`kernels/benchmark/<group>/` (the wrapper's group)",
    severity="warning",
    status="preview",
    triggers=(_TRIGGER,),
    prefilter=lazy_compile(rb"sglang\.kernels\.ops\b"),
    path_filter=_may_be_kernel_test,
    partial_lines=lazy_compile(rb"\bimport\b"),
    needs_tree=False,  # (parsed only when the bytes leave the question open)
)

# `sglang` modules a kernel test may import besides the kernels: test helpers and utilities.
_KERNEL_SIDE = ("sglang.kernels", "sglang.test", "sglang.utils", "sglang.srt.utils")
_OPS_PARTS = ("python", "sglang", "kernels", "ops")


# -- the checked repository ------------------------------------------------------------------
_OPS_ABOVE: dict[str, str | None] = {}


def ops_dir(abspath: str) -> str | None:
    """`<repo>/python/sglang/kernels/ops` for the nearest directory above the file that has
    one (memoized for every directory passed); None: none."""
    from kernlint.jitscope import nearest_above

    def probe(d):
        candidate = os.path.join(d, *_OPS_PARTS)
        return candidate if os.path.isdir(candidate) else None

    return nearest_above(os.path.dirname(os.path.abspath(abspath)), probe, _OPS_ABOVE)


def _module_files(ops: str, dotted: str) -> tuple[str, str]:
    """Where the module `sglang.kernels.ops.<dotted>` may live: `<x>.py`, `<x>/__init__.py`."""
    base = os.path.join(ops, *dotted.split("."))
    return base + ".py", os.path.join(base, "__init__.py")


def _module_file(ops: str, dotted: str) -> str | None:
    for path in _module_files(ops, dotted):
        if os.path.isfile(path):
            return path
    return None


_WRAPPERS: dict[str, tuple[int, int, bool]] = {}


def is_jit_wrapper(path: str) -> bool:
    """Does the module's source call `load_jit(` (by its bytes; memoized per size and
    modification time)?"""
    try:
        st = os.stat(path)
    except OSError:
        return False
    hit = _WRAPPERS.get(path)
    if hit is not None and hit[0] == st.st_size and hit[1] == st.st_mtime_ns:
        return hit[2]
    try:
        with open(path, "rb") as fh:
            answer = b"load_jit(" in fh.read()
    except OSError:
        answer = False
    _WRAPPERS[path] = (st.st_size, st.st_mtime_ns, answer)
    return answer


# -- the cache key ---------------------------------------------------------------------------
_MENTION = lazy_compile(rb"sglang\.kernels\.ops((?:\.\w+)*)")
_FROM = lazy_compile(
    rb"from[ \t]+sglang\.kernels\.ops((?:\.\w+)*)[ \t]+import[ \t]*(\([^)]*\)|(?:[^\n\\]|\\\n)*)"
)
_NAME = lazy_compile(rb"(\w+)(?:\s+as\s+\w+)?")
_NAMES_KEY = "jit-test-mentions:1"  # the cache's group of "no sglang.kernels.ops" answers


def candidate_modules(data: bytes) -> set[str]:
    """Every module (dotted, below `sglang.kernels.ops`) the file's imports may name: each
    mention, and for a `from ... import` each imported name appended (an over-approximation
    of what the rule resolves)."""
    out = {m.group(1).decode()[1:] for m in _MENTION.finditer(data)}
    for m in _FROM.finditer(data):
        module = m.group(1).decode()[1:]
        for n in _NAME.finditer(m.group(2)):
            name = n.group(1).decode()
            out.add(f"{module}.{name}" if module else name)
    out.discard("")
    return out


def fingerprint(abspath: str, settings, cache=None, stat=None) -> str:
    """What a test file's findings depend on beyond its bytes: its registered-tests root, the
    repository's `kernels/ops` folder, and the size and modification time of each module file
    its imports may name. Empty for files the rule never judges; a file without the trigger is
    read once (the answer is kept in the cache by its stat)."""
    if not _may_be_kernel_test(abspath) or not is_collected_test(abspath, settings):
        return ""
    if cache is not None and stat is not None:
        if cache.lookup_stat(abspath, _NAMES_KEY, stat) == "0":
            return ""
    try:
        with open(abspath, "rb") as fh:
            data = fh.read()
    except OSError:
        return ""
    if _TRIGGER not in data:
        if cache is not None and stat is not None:
            cache.store(abspath, _NAMES_KEY, stat, "", "0")
        return ""
    ops = ops_dir(abspath)
    parts = [f"|jit-test:{registered_root(abspath, settings)}:{ops}"]
    if ops is not None:
        for dotted in sorted(candidate_modules(data)):
            # (whether the import's first name is a group: a directory of `kernels/ops`)
            parts.append(f"group:{int(os.path.isdir(os.path.join(ops, dotted.split('.')[0])))}")
            for path in _module_files(ops, dotted):
                try:
                    st = os.stat(path)
                except OSError:
                    parts.append("-")
                    continue
                parts.append(f"{path}:{st.st_size}:{st.st_mtime_ns}:{st.st_mode}")
    return ":".join(parts)


# -- the check -------------------------------------------------------------------------------
def _imports(tree):
    """(statement, full module name, resolving name) per `sglang` module the file imports;
    for `from M import n` the name is `M.n` (a submodule, or a name defined in M)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "sglang" or alias.name.startswith("sglang."):
                    yield node, alias.name, None
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            module = node.module
            if module != "sglang" and not module.startswith("sglang."):
                continue
            for alias in node.names:
                if alias.name == "*":
                    yield node, module, None
                else:
                    yield node, module, alias.name


_FOLDER = lazy_compile(r"kernels/(ops|benchmark)/([^/]+)/")


def _kernel_side(module: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in _KERNEL_SIDE)


def check(ctx) -> None:
    path = ctx.source.abspath or ctx.source.path
    if not collected_test(ctx):
        return
    root = registered_root(path, ctx.settings)
    ops = ops_dir(path)
    if root is None or ops is None:
        return
    kind = "ops" if os.path.basename(path).startswith("test_") else "benchmark"
    rel = os.path.relpath(path, root).replace(os.sep, "/")
    # Read from the bytes first (most files are not parsed): a file in its group's folder
    # that imports from that group at the start of a line, or one none of whose possible
    # imports is a JIT wrapper, is in place.
    data = ctx.data
    here = _FOLDER.match(rel)
    if here and here.group(1) == kind:
        own = re.compile(
            rb"^[ \t]*(?:from|import)[ \t]+sglang\.kernels\.ops\.%s\b"
            % re.escape(here.group(2).encode()),
            re.M,
        )
        if own.search(data):
            return
    if not any(
        (f := _module_file(ops, dotted)) is not None and is_jit_wrapper(f)
        for dotted in candidate_modules(data)
    ):
        return
    if ctx.tree is None:
        return
    wrappers = []  # (statement, group, module) of each JIT wrapper imported
    groups: set[str] = set()  # the groups of every `sglang.kernels.ops` module imported
    for node, module, name in _imports(ctx.tree):
        full = f"{module}.{name}" if name else module
        if not full.startswith("sglang.kernels.ops."):
            if not _kernel_side(full):
                return  # (other sglang code: a model or feature test)
            continue
        dotted = full[len("sglang.kernels.ops.") :]
        group = dotted.split(".")[0]
        if not os.path.isdir(os.path.join(ops, group)):
            continue  # (a module directly in kernels/ops: no group)
        groups.add(group)
        tried = [(dotted, full)]
        if name is not None and module != "sglang.kernels.ops":
            tried.append((module[len("sglang.kernels.ops.") :], module))
        for candidate, shown in tried:
            file = _module_file(ops, candidate)
            if file is not None:
                if is_jit_wrapper(file):
                    wrappers.append((node, group, shown))
                break
    if not wrappers:
        return
    for group in groups:
        if rel.startswith(f"kernels/{kind}/{group}/"):
            return
    wrapper_groups = sorted({g for _, g, _ in wrappers})
    if len(groups) > 1 and rel.count("/") == 2 and rel.startswith(f"kernels/{kind}/"):
        return  # (several groups, at the top of the kind's folder: no single group)
    node, group, module = wrappers[0]
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(ops))))
    shown_root = os.path.relpath(root, repo) if root.startswith(repo + os.sep) else root
    shown_root = shown_root.replace(os.sep, "/")
    what = "test" if kind == "ops" else "benchmark"
    if len(wrapper_groups) > 1:
        where = ", ".join(f"`{shown_root}/kernels/{kind}/{g}/`" for g in wrapper_groups)
        where = f"one of {where}"
    else:
        where = f"`{shown_root}/kernels/{kind}/{group}/`"
    ctx.report(
        *node_span(ctx, node),
        f"JIT kernel {what} `{shown_root}/{rel}` imports the `{group}` wrapper `{module}` "
        f"but is not under {where}; move it to "
        f"`{shown_root}/kernels/{kind}/{group}/{os.path.basename(path)}`",
    )
