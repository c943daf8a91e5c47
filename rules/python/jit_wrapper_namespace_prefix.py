"""Reports `load_jit` wrapper symbols spelled with a leading `sglang::`.

## What it does
In a call of SGLang's JIT loader `load_jit(...)` (however imported; or `jit-loaders`,
docs/presets.md), reports a
`cuda_wrappers` / `cpp_wrappers` symbol that starts with `sglang::` or `::sglang::` (after
an optional `&`), as a string literal or an f-string, and offers to remove the prefix.

Reported only where the checked tree's loader (read from its source) writes the wrappers
inside `namespace sglang`. The older loader of `sglang/jit_kernel` (SGLang 0.5.15 and
before) writes them at global scope, where the prefix is needed: not reported.
Not reported either when the JIT root cannot be found (see `jit-source-not-found`).

## Why is this bad?
SGLang's JIT kernel guide (Conventions): the loader already emits the wrapper inside
`namespace sglang`, so the prefix is noise, and it hides the one spelling the guide's
examples use.

## Example
```python
# ops/scale.py
from sglang.kernels.jit.utils import cache_once, load_jit


@cache_once
def _jit_scale_module():
    return load_jit(
        "scale",
        cuda_files=["elementwise/scale.cuh"],
        cuda_wrappers=[("scale", "&sglang::ScaleKernel::run")],
    )
```

```cuda
// csrc/elementwise/scale.cuh
namespace sglang {
struct ScaleKernel {
  static void run();
};
}
```

## Use instead
```python
# ops/scale.py
from sglang.kernels.jit.utils import cache_once, load_jit


@cache_once
def _jit_scale_module():
    return load_jit(
        "scale",
        cuda_files=["elementwise/scale.cuh"],
        cuda_wrappers=[("scale", "&ScaleKernel::run")],
    )
```

```cuda
// csrc/elementwise/scale.cuh
namespace sglang {
struct ScaleKernel {
  static void run();
};
}
```

## Fix safety
The fix deletes the prefix. It is safe when kernlint confirms that `X` and `sglang::X` name
the same entity: the loader writes the wrappers inside `namespace sglang`; the named files
or their JIT headers declare the first component directly in `namespace sglang`; no
anonymous or inline namespace inside it, and no namespace a `using namespace` nominates,
declares the same name; no `namespace sglang` is nested in itself. Otherwise (a macro, an
unparsed region, an unreadable file, no loader found) it is unsafe.
"""

from __future__ import annotations

import os

from kernlint.lazyre import lazy_compile
from kernlint.model import Edit, Fix, Rule
from kernlint.python.facts import node_span
from kernlint.python.jit import when_loaders_configured, wiring_partial_lines

RULE = Rule(
    code="PY010",
    name="jit-wrapper-namespace-prefix",
    language="python",
    summary="`load_jit` wrapper symbol with a leading `sglang::` (emitted inside it already)",
    fix="sometimes",
    triggers=(b"load_jit",),
    untriggered_when=when_loaders_configured,  # (`jit-loaders`: other names)
    prefilter=lazy_compile(rb"sglang[ \t]*::"),
    partial_lines=wiring_partial_lines,
)


def check(ctx) -> None:
    from kernlint.jit_wiring import find_root, jit_calls, namespace_prefix, shown, wrapper_scope

    abspath = ctx.source.abspath or os.path.abspath(ctx.source.path)
    for call in jit_calls(ctx):
        root = None
        for kind in ("cuda", "cpp"):
            for node, text in call.wrappers.get(kind) or ():
                if text is None:
                    continue
                start, end = node_span(ctx, node)
                raw = ctx.data[start:end].decode("utf-8", "surrogateescape")
                span = namespace_prefix(raw)
                if span is None:
                    continue
                if root is None:
                    root = find_root(abspath, call.layout, ctx.settings) or ""
                if not root:
                    break
                scope = wrapper_scope(root)
                if scope is False:
                    break  # (an older loader: the wrapper is at global scope)
                safe = scope is True and _provably_safe(call, kind, root, text)
                prefix = raw[span[0] : span[1]].strip()
                fix = Fix(
                    edits=(Edit(start + span[0], start + span[1], ""),),
                    applicability="safe" if safe else "unsafe",
                    title=f"Remove `{prefix}`",
                )
                ctx.report(
                    start + span[0],
                    start + span[1],
                    f"wrapper `{shown(node, text)}`: the loader emits the wrapper inside "
                    f"`namespace sglang` already: drop `{prefix}`",
                    fix,
                )


def _provably_safe(call, kind, root, text) -> bool:
    from kernlint.jit_wiring import (
        FOUND,
        closure,
        fix_is_safe,
        lookup,
        resolve_source,
        symbol_parts,
    )

    parts = symbol_parts(text)
    entries = call.files.get(kind)
    if parts is None or not entries or call.opaque or not call.header_only:
        return False
    paths = []
    for _, name in entries:
        path = resolve_source(root, name) if name is not None else None
        if path is None or not os.path.isfile(path):
            return False
        paths.append(path)
    every = closure(root, paths)  # (what could hide or join the name: in any of them)
    if every is None or lookup(parts, every[0], every[1])[0] != FOUND:
        return False
    return fix_is_safe(parts, every[0])
