"""Reports `load_jit` wrapper symbols that the named C++ files do not declare.

## What it does
In a call of SGLang's JIT loader `load_jit(...)` (or `jit-loaders`, docs/presets.md), reports each `cuda_wrappers` /
`cpp_wrappers` symbol that neither the `cuda_files` / `cpp_files` (under the JIT root's
`csrc/`) nor the JIT headers they include declare. The symbol is read as the loader writes
it inside `namespace sglang` (`&`, parentheses, template arguments and a leading `sglang::`
or `::` stripped): `fn`, `ns::fn`, `Class::method`, `Class<...>::method`. Any declaration
counts (function, template, member, variable, `using` alias).

Not reported:
- a missing (`jit-source-not-found`) or unreadable file, a non-literal name,
  `**kwargs`, `header_only=` other than `True`;
- a symbol that is not a plain name once stripped (`f"{kernel}::run"`);
- a symbol part in a `#define` or unparsed region (preprocessor branch, syntax error);
- a qualifier that is an alias, template parameter or using-declaration; a class with bases
  or no body in these files;
- an undeclared first qualifier used as `name::`, an include not found, `using namespace`
  of an unknown namespace, no JIT root;
- a symbol the other list's files declare.

## Why is this bad?
The loader emits `TVM_FFI_DLL_EXPORT_TYPED_FUNC(export, (symbol));` after including the
named files: a misspelled or renamed symbol fails to compile, found only when a GPU test
builds the module.

## Example
```python
# ops/scale.py
from sglang.kernels.jit.utils import cache_once, load_jit


@cache_once
def _jit_scale_module():
    return load_jit(
        "scale",
        cuda_files=["elementwise/scale.cuh"],
        cuda_wrappers=[("scale", "ScaleKernel::launch")],
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
        cuda_wrappers=[("scale", "ScaleKernel::run")],
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
No automatic fix: which declaration was meant is the author's to say.
"""

from __future__ import annotations

import os

from kernlint.lazyre import lazy_compile
from kernlint.model import Rule
from kernlint.python.facts import node_span
from kernlint.python.jit import when_loaders_configured, wiring_partial_lines

RULE = Rule(
    code="PY009",
    name="jit-wrapper-not-found",
    language="python",
    summary="`load_jit` wrapper symbol that the named C++ files do not declare",
    triggers=(b"load_jit",),
    untriggered_when=when_loaders_configured,  # (`jit-loaders`: other names)
    prefilter=lazy_compile(rb"(?:cuda|cpp)_wrappers"),
    partial_lines=wiring_partial_lines,
)


def check(ctx) -> None:
    from kernlint.jit_wiring import find_root, jit_calls, shown

    abspath = ctx.source.abspath or os.path.abspath(ctx.source.path)
    for call in jit_calls(ctx):
        if call.opaque or not call.header_only:
            continue
        root = find_root(abspath, call.layout, ctx.settings)
        if root is None:
            continue
        for kind in ("cuda", "cpp"):
            wrappers = call.wrappers.get(kind)
            if not wrappers:
                continue
            own = _files(root, call.files.get(kind))
            if not own:
                continue
            other = _files(root, call.files.get("cpp" if kind == "cuda" else "cuda"))
            for node, text in wrappers:
                if text is None:
                    continue
                verdict = _missing(text, own, other)
                if verdict is None:
                    continue
                parts, missing = verdict
                names = ", ".join(f"`{n}`" for n in own[2])
                what = (
                    f"no declaration of `{missing}`"
                    if missing != "::".join(parts)
                    else f"no declaration of `{parts[-1]}`"
                    + (f" in `{'::'.join(parts[:-1])}`" if len(parts) > 1 else "")
                )
                ctx.report(
                    *node_span(ctx, node),
                    f"wrapper `{shown(node, text)}`: {what} in {names} or the JIT headers "
                    + ("it includes" if len(own[2]) == 1 else "they include")
                    + f": fix the symbol, or add the file that declares it to `{kind}_files`",
                )


def _files(root, entries):
    """(root, paths, names) of a literal source list, or None when it is not a literal list,
    is empty, or names an absolute or missing file."""
    from kernlint.jit_wiring import resolve_source

    if not entries or any(name is None for _, name in entries):
        return None
    paths = []
    for _, name in entries:
        path = resolve_source(root, name)
        if path is None or not os.path.isfile(path):
            return None
        paths.append(path)
    return root, paths, [name for _, name in entries]


def _missing(text, own, other):
    from kernlint.jit_wiring import MISSING, resolve, symbol_parts

    parts = symbol_parts(text)
    if parts is None:
        return None
    found = resolve(own[0], own[1], parts)
    if found is None or found[0] != MISSING:
        return None
    if other is not None:
        again = resolve(other[0], other[1], parts)
        if again is None or again[0] != MISSING:
            return None
    return parts, found[1]
