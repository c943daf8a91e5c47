"""Reports pointer parameters of `__global__` kernels declared without `__restrict__`.

## What it does
Reports each pointer parameter of a `__global__` function definition whose outermost pointer
is not `__restrict__` (or `__restrict`).

Not reported, by design:
- pointer members of a parameter struct; function pointers, references, array parameters;
- a pointer the file shows aliased with another parameter (the same argument passed to both,
  a comment saying "aliases `in`" or "in place", a struct parameter holding same-typed
  pointers);
- pointers to `volatile` data, scalar slots the whole block shares, pointers never
  dereferenced, also through a local copy (comparisons, asm operands, TMA descriptors, `__ldg`
  and other hinted accesses);
- a kernel's only pointer, beside scalar (or scalar-struct) parameters;
- kernels the parser could not understand.

Known false positives: aliasing the file cannot see (in-place callers elsewhere, a struct from
a header); pointers used once per thread or only passed to an opaque callee.

## Why is this bad?
Without `__restrict__` the compiler must assume any two pointers may alias: it cannot
keep loaded values in registers across stores, nor use the read-only data cache
(`ld.global.nc`) for inputs. SGLang's JIT kernel guide asks for `const T* __restrict__` inputs
and `T* __restrict__` outputs.

## Example
```cpp
namespace sglang {
__global__ void copy_kernel(float* out, const float* in) {
  out[threadIdx.x] = in[threadIdx.x];
}
}  // namespace sglang
```

## Use instead
```cpp
namespace sglang {
__global__ void copy_kernel(float* __restrict__ out, const float* __restrict__ in) {
  out[threadIdx.x] = in[threadIdx.x];
}
}  // namespace sglang
```

## Fix safety
The fix adds `__restrict__` and is unsafe: it promises no other pointer reaches the same
memory. On a kernel called in place, suppress the finding instead with
`// kernlint: ignore[kernel-pointer-not-restrict]`, saying why. No fix is offered where the
body takes the parameter's address or binds it to a typed reference.
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
