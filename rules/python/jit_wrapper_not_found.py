"""Reports `load_jit` wrapper symbols that the named C++ files do not declare.

## What it does
In a call of SGLang's JIT loader `load_jit(...)` (however imported), reads the C++ files of
`cuda_files` / `cpp_files` -- resolved as the loader resolves them, under the JIT root's
`csrc/` (see `jit-source-not-found`) -- and the headers they include from the JIT tree
(`#include "..."` relative to the including file or to the JIT `include/` directory,
`#include <...>` in `include/`), and reports each `cuda_wrappers` / `cpp_wrappers` symbol
none of them declares. The symbol is read as the loader writes it into the generated unit,
inside `namespace sglang`: `&` and parentheses, template arguments (`Kernel<{args}>::run`:
f-string holes inside them included) and a leading `sglang::` or `::` are stripped, and the
forms `fn`, `ns::fn`, `Class::method` and `Class<...>::method` are looked up. A symbol
each of whose parts occurs as a word in those files is taken as declared (even where the
word stands in another scope); the others are looked up in the parsed files, where any
declaration of the name counts: a function or function template, a member function
declared in the class or defined out of line, a static member (`static constexpr auto run =
...`), a variable, a `using` alias, in a scope whose name ends with the qualifiers.

Precision comes first; nothing is reported when:

* a named file is missing (that is `jit-source-not-found`'s finding) or unreadable, or a
  name is not a plain literal, or the call passes `**kwargs` or `header_only=` anything but
  `True` (no wrapper is generated then);
* the symbol is not a plain name once stripped (an f-string hole outside template
  arguments, such as `f"{kernel}::run"`, is not statically known);
* a part of the symbol occurs in a `#define` (a macro could produce the declaration) or in a
  region kernlint could not parse or left out (a preprocessor branch, a syntax error);
* a qualifier is a type alias, a template parameter or a using-declaration, or names a class
  with base classes (the member may be inherited), or a class with no body in these files;
* the first qualifier is declared in none of the files but used as `name::` in them, or an
  included file was not found (it may come from a header outside the JIT tree), or a
  `using namespace` names a namespace these files do not declare;
* the JIT root cannot be found (see `jit-source-not-found`).

A symbol that the other list's files declare (a `cpp_wrappers` symbol in the `cuda_files`)
is not reported either.

## Why is this bad?
The loader emits `TVM_FFI_DLL_EXPORT_TYPED_FUNC(export, (symbol));` after including the
named files; a misspelled or renamed class or function fails to compile, which is found only
when a GPU test first builds the module.

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
}  // namespace sglang
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
}  // namespace sglang
```

## Fix safety
No automatic fix: which declaration was meant is the author's to say.
"""

from __future__ import annotations

import os
import re

from kernlint.model import Rule
from kernlint.python.facts import node_span

RULE = Rule(
    code="PY009",
    name="jit-wrapper-not-found",
    language="python",
    summary="`load_jit` wrapper symbol that the named C++ files do not declare",
    triggers=(b"load_jit",),
    prefilter=re.compile(rb"(?:cuda|cpp)_wrappers"),
    partial_lines=(re.compile(rb"load_jit"),),
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
                    + ("it includes" if len(own[2]) == 1 else "they include"),
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
