"""Reports `load_jit` source files that do not exist under the JIT sources.

## What it does
In a call of SGLang's JIT loader `load_jit(...)` (`sglang.kernels.jit.utils`, or
`sglang.jit_kernel.utils` in older releases, however imported), reports each literal string
of `cuda_files=[...]` or `cpp_files=[...]` that names no file where the loader looks for it:
`<JIT root>/csrc/<name>`. The JIT root, holding both `csrc/` and `include/`, is the nearest
directory above the checked file that is, or holds, `kernels/jit` or `sglang/kernels/jit`
(`jit_kernel`, `sglang/jit_kernel` for the older loader). A project whose JIT tree lives
elsewhere sets `jit-source-root` in its config (relative to the config file). Configure:
`jit-loaders` (docs/presets.md; one outside SGLang's modules needs `jit-source-root`). When a file of that name exists elsewhere under `csrc/`, the
message names it.

Not reported: absolute paths (passed through as written), entries that are not plain
string literals (f-strings, variables, `str(path)`), and every call of a file whose JIT root
cannot be found: kernlint does not guess where the sources are.

## Why is this bad?
The loader joins the name to `csrc/` and hands it to the compiler as an `#include`; a
misspelled or moved file is found only when a GPU test first compiles the module.

## Example
```python
# ops/scale.py
from sglang.kernels.jit.utils import cache_once, load_jit


@cache_once
def _jit_scale_module():
    return load_jit(
        "scale",
        cuda_files=["elementwise/scael.cuh"],
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
No automatic fix: which file was meant is the author's to say.
"""

from __future__ import annotations

import os

from kernlint.lazyre import lazy_compile
from kernlint.model import Rule
from kernlint.python.facts import node_span
from kernlint.python.jit import when_loaders_configured, wiring_partial_lines

RULE = Rule(
    code="PY008",
    name="jit-source-not-found",
    language="python",
    summary="`load_jit` `cuda_files`/`cpp_files` entry that names no file under the JIT `csrc/`",
    triggers=(b"load_jit",),
    untriggered_when=when_loaders_configured,  # (`jit-loaders`: other names)
    prefilter=lazy_compile(rb"(?:cuda|cpp)_files"),
    partial_lines=wiring_partial_lines,
)


def check(ctx) -> None:
    from kernlint.engine import relpath_for_display
    from kernlint.jit_wiring import find_root, jit_calls, resolve_source, similar_sources

    abspath = ctx.source.abspath or os.path.abspath(ctx.source.path)
    for call in jit_calls(ctx):
        root = find_root(abspath, call.layout, ctx.settings)
        if root is None:
            continue
        for kind in ("cuda", "cpp"):
            for elt, name in call.files.get(kind) or ():
                if name is None:
                    continue
                path = resolve_source(root, name)
                if path is None or os.path.isfile(path):
                    continue
                where = relpath_for_display(os.path.join(root, "csrc"))
                message = f"`{name}` names no file under the JIT sources (`{where}`)"
                others = [s for s in similar_sources(root, name) if s != name]
                if others:
                    message += ": did you mean " + " or ".join(f"`{s}`" for s in others) + "?"
                else:
                    message += ": correct the path (relative to that folder) or add the file"
                ctx.report(*node_span(ctx, elt), message)
