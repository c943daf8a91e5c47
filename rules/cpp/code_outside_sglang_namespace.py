"""Reports JIT code that is not inside `namespace sglang`.

## What it does
In JIT sources (files under `jit-roots`), reports each namespace-scope item of code -- a
function or kernel definition, a template, a struct/class/union/enum, a variable, a type
alias or typedef -- that is not enclosed, at any depth, in `namespace sglang`
(`namespace sglang::x {` counts; anonymous and named namespaces inside it are fine). One
finding per offending item, on its first line.

Never reported: preprocessor lines, includes, comments, `using` declarations and directives,
`static_assert`, macro invocations at namespace scope (FFI export macros such as
`TVM_FFI_DLL_EXPORT_TYPED_FUNC(name, fn)` must stay global), and items inside a top-level
namespace of a third-party library that the code specializes or extends (`std`, `cute`,
`cutlass`, `cub`, `thrust`, `tvm`, `at`, `c10`, `torch`): template specializations must live in
the namespace of their primary template. Global CUDA API compatibility shims are not reported
either: an item named like the CUDA runtime or driver API (`cuda*`, `CUDA*`, `cu[A-Z]*`,
`CU[A-Z_]*`), e.g. `using cudaStream_t = hipStream_t;` in a ROCm shim, must be global to stand in
for the real API.

When the parser could not understand part of a namespace body (an ERROR node among its
children), the items of that body are not reported: the namespace may have been cut open.

## Why is this bad?
SGLang's JIT kernel guide puts all JIT device and host code inside `namespace sglang`. JIT
modules are compiled into one process next to PyTorch, CUTLASS, FlashInfer and other kernel
libraries; a global `rms_norm` kernel or `Params` struct collides with theirs (ODR violations,
wrong symbol picked at load time) and pollutes every translation unit that includes the header.

## Example
```cpp
template <typename T>
__global__ void scale_kernel(T* __restrict__ out, const T* __restrict__ in, float s) {
  out[threadIdx.x] = in[threadIdx.x] * s;
}
```

## Use instead
```cpp
namespace sglang {
template <typename T>
__global__ void scale_kernel(T* __restrict__ out, const T* __restrict__ in, float s) {
  out[threadIdx.x] = in[threadIdx.x] * s;
}
}  // namespace sglang
```

## Fix safety
No automatic fix: wrapping code in a namespace changes its qualified name, which callers and
FFI exports may depend on.
"""

from __future__ import annotations

import re

from kernlint.model import Rule

RULE = Rule(
    code="CU002",
    name="code-outside-sglang-namespace",
    language="cpp",
    summary="JIT code not enclosed in `namespace sglang`",
    scope="jit",
)

# Top-level namespaces of libraries whose templates JIT code may specialize or extend.
THIRD_PARTY_NAMESPACES = frozenset(
    {"std", "cute", "cutlass", "cub", "thrust", "tvm", "at", "c10", "torch"}
)


# Names of the CUDA runtime/driver API: global shims for them (HIP builds) must stay global.
_CUDA_API_NAME = re.compile(r"^(cuda|CUDA|cu[A-Z]|CU[A-Z_])")


def check(ctx) -> None:
    for item in ctx.facts.items:
        if not item.namespace and _CUDA_API_NAME.match(item.name.split("::")[-1].lstrip("*&( ")):
            continue
        ns = [part for part in item.namespace if part]
        if ns and ns[0] == "sglang":
            continue
        if ns and ns[0] in THIRD_PARTY_NAMESPACES:
            continue
        node = item.node
        what = f"{item.kind} `{item.name}`" if item.name else item.kind
        where = (
            f"namespace `{'::'.join(item.namespace)}`" if item.namespace else "the global namespace"
        )
        if item.namespace and "" in item.namespace:
            where = f"namespace `{'::'.join(p or '(anonymous)' for p in item.namespace)}`"
        # Report on the item's first line only.
        line_end = ctx.data.find(b"\n", node.start_byte)
        end = node.end_byte if line_end < 0 else min(node.end_byte, line_end)
        if end > node.start_byte and ctx.data[end - 1 : end] == b"\r":
            end -= 1
        ctx.report(node.start_byte, end, f"{what} is in {where}, not inside `namespace sglang`")
