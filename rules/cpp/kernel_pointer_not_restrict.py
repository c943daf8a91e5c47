"""Reports pointer parameters of `__global__` kernels declared without `__restrict__`.

## What it does
Reports each pointer parameter of a `__global__` function definition (template kernels and
kernels declared through attribute macros such as `CUTLASS_GLOBAL` included) whose outermost
pointer is not qualified with `__restrict__` (or `__restrict`). Pointers to pointers are
reported on the parameter's own pointer; a pointer to an array (`T (*p)[4]`) is reported.

Not reported, by design:
- pointer members of a by-value parameter struct (CUDA documents `__restrict__` for
  parameters only);
- function pointers, references and array parameters (`T* p[4]`, `T p[]`);
- a pointer the file shows aliased with another parameter (a launch passing the same argument
  to both, a comment such as "aliases `in`" or "in place", a struct parameter holding pointers
  of the same type);
- a pointer to `volatile` data, and a scalar slot (one element the whole block shares, used
  once or twice);
- a pointer the kernel never uses or never dereferences (comparisons, asm operands, TMA
  descriptors, cache-hinted loads and stores such as `__ldg`), also through a local copy;
- the kernel's only pointer, when every other parameter is a scalar or a struct of scalars;
- kernels the parser could not understand.

Known false positives: aliasing the file cannot see (a struct from a header, in-place callers
in other files); a pointer touched once per thread; a pointer handed only to an opaque callee.

## Why is this bad?
Without `__restrict__` the compiler must assume that every pointer may alias every other, so
it cannot keep loaded values in registers across stores, cannot use the read-only data cache
(`ld.global.nc`) for inputs, and often re-loads values inside loops. SGLang's JIT kernel guide
asks for `const T* __restrict__` inputs and `T* __restrict__` outputs on every kernel.

## Example
```cpp
namespace sglang {
template <typename T>
__global__ void scale_kernel(T* out, const T* in, float s) {
  out[threadIdx.x] = in[threadIdx.x] * s;
}
}  // namespace sglang
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
The fix inserts `__restrict__` after the `*` and is unsafe: it is a promise that no other
pointer reaches the same memory during the kernel. A kernel that is deliberately called
in place (the same buffer as input and output) must not get it; suppress the finding there
with `// kernlint: ignore[kernel-pointer-not-restrict]` and a comment saying why.

No fix is offered where the body takes the parameter's address or binds it to a typed
reference.
"""

from __future__ import annotations

from kernlint.cpp.aliasing import (
    Aliasing,
    never_dereferenced,
    scalar_slot,
    unused,
    volatile_pointee,
)
from kernlint.cpp.fix_safety import FixSafety, Shape, display_name
from kernlint.model import Edit, Fix, Rule

RULE = Rule(
    code="CU003",
    name="kernel-pointer-not-restrict",
    language="cpp",
    summary="kernel pointer parameter without `__restrict__`",
    severity="warning",
    fix="unsafe",
    triggers=(b"__global__", b"CUTLASS_GLOBAL"),
)


def check(ctx) -> None:
    safety = None
    evidence = None
    for kernel in ctx.facts.kernels:
        params = ctx.facts.params_of(kernel.node)
        candidates = []
        for param in params:
            if param.pointer_depth == 0 or param.is_reference or param.restrict:
                continue
            if param.is_array and Shape(param.node).array_of_pointers:
                continue  # `T* p[4]`: an array parameter (its `*` is the elements')
            star = _top_star(param.own_pointer)
            if star is not None:
                candidates.append((param, star))
        if not candidates:
            continue
        if evidence is None:
            evidence = Aliasing(ctx)
        aliased = evidence.aliased(kernel, params)
        body = kernel.node.child_by_field_name("body")
        for param, star in candidates:
            if volatile_pointee(param):
                continue  # every access is volatile already: `__restrict__` changes nothing
            if param.index in aliased:
                continue  # the file shows it aliased: `__restrict__` would be a false promise
            if evidence.sole_pointer(params, param):
                continue  # nothing for it to alias
            if scalar_slot(body, params, param):
                continue  # one load or one store of a scalar the block shares
            if unused(body, param.name):
                continue  # (no use: nothing `__restrict__` could change)
            if never_dereferenced(body, param.name):
                continue  # the compiler never accesses memory through it: nothing to gain
            name = f"`{param.name}`" if param.name else f"#{param.index + 1}"
            if safety is None:
                safety = FixSafety(ctx)
            fix = None
            if safety.restrict_ok(kernel.node, param.name):
                after = ctx.data[star.end_byte : star.end_byte + 1]
                text = " __restrict__" if after in (b" ", b"\t", b"\n", b"\r") else " __restrict__ "
                fix = Fix(
                    (Edit(star.end_byte, star.end_byte, text),), "unsafe", "Add `__restrict__`"
                )
            ctx.report_node(
                param.node,
                f"pointer parameter {name} of kernel `{display_name(kernel)}` is not "
                f"`__restrict__`: {_advice(ctx.data, param.node, star)}",
                fix,
            )


def _advice(data: bytes, param, star) -> str:
    """`declare it `const T* __restrict__`` (the parameter's type as spelled, `__restrict__`
    after its own `*`), or where that spelling is long, where to add it."""
    spelled = data[param.start_byte : star.end_byte].decode("utf-8", "replace")
    spelled = " ".join(spelled.split())
    if len(spelled) > 60 or any(c in spelled for c in "`/()"):
        return "add `__restrict__` after its `*` (when it aliases no other pointer)"
    return f"declare it `{spelled} __restrict__` (when it aliases no other pointer)"


def _top_star(declarator):
    if declarator is None or declarator.type != "pointer_declarator":
        return None
    for child in declarator.children:
        if child.type == "*":
            return child
    return None
