"""Reports pointer parameters of `__global__` kernels declared without `__restrict__`.

## What it does
Reports each pointer parameter of a `__global__` function definition (template kernels and
kernels declared through attribute macros such as `CUTLASS_GLOBAL` or a file-local
`#define MY_KERNEL __global__ ...` included) whose outermost pointer is not qualified with
`__restrict__` (or `__restrict`). The finding sits on the parameter itself, also in multi-line
signatures.

Out of scope, by decision: pointer members of a by-value parameter struct (SGLang passes
`const Params __grid_constant__ params`). The CUDA Programming Guide documents `__restrict__`
for function parameters; what the compiler does with a qualifier on a struct member is not
documented, so a finding there could not promise the benefit the rule's rationale claims.
On the SGLang 0.5.23 JIT tree the 149 params structs passed to kernels have 890 pointer
members, 680 of them already `__restrict__` and 210 not (32 files): reporting them would more
than double the rule's findings with advice of unproven value. Pointers to
pointers are reported on the parameter's own pointer (`T** __restrict__ p`); function pointers,
references and array parameters (`T* p[4]`, `T p[]`) are not reported; a pointer to an array
(`T (*p)[4]`) is. Kernels inside regions the parser could not understand are skipped.

Not reported either, where `__restrict__` would be a false promise or could change nothing:

* a pointer the file shows **aliased** with another parameter: a launch in the file passes the
  same argument to both (`k<<<g, b>>>(state, slots, state)`, also `hipLaunchKernelGGL`,
  `LaunchKernel(...)(k, ...)` and `cudaLaunchKernelEx`); a comment in the parameter list says so
  ("may be `out` itself", "aliases `in`", "in place" naming another parameter); or another
  by-value parameter is a struct of the file holding pointers to the same struct type
  (`Signal* self_sg` next to `RankSignals sg` with `Signal* signals[8]`), or a struct from
  another header whose name holds the pointee type's name (`aiter::Signal* local_signals`
  next to `aiter::RankSignals signals`: a collection of such pointers the file cannot see);
* a pointer to **`volatile`** data (`volatile int* flag`, a cross-GPU or host-polled flag):
  every access through it is a volatile access the compiler may not cache, merge or reorder,
  with `__restrict__` or without (a volatile pointer variable, `int* volatile p`, is reported);
* a **scalar slot**: a pointer whose every use is a null test or an access to one element
  the whole block shares (`*p`, `p[0]`, `p[blockIdx.x]`), at most two accesses, either in a
  kernel that also takes a pointer to `volatile` data (the target a spin-wait kernel waits
  for, a timeout flag, a sequence counter) or, for a pointer to non-const data, written once
  and read at most once (`if (tid == 0) *scale_out = s;`, a per-block counter loaded at entry
  and stored at exit): one load or one store of a scalar is all there is, and `__restrict__`
  cannot change it (a `const` slot read once is reported: `const T* __restrict__` lets that
  load take the read-only path);
* a pointer the kernel does not use at all;
* the kernel's **only pointer**, when every other parameter is a scalar (a builtin or
  fixed-width type, the pointee type, a struct or struct template of the file whose members
  are scalars or arrays of them, such as `InputArray<N>` holding `int values[N]`): nothing for
  it to alias (`fill_kernel(float* out, float value, size_t n)`);
* a pointer **never dereferenced** by C++ code in the kernel: its uses are only comparisons,
  inline asm operands (a TMA descriptor), pointer arithmetic stored into memory as a value
  (`offsets[i] = base + k`, an argument-setup kernel), casts to an integer or to a `volatile`
  pointer, the global-address argument of a TMA-descriptor setter that stores the address as
  an integer (`cudaSetTmaTileDescriptor`, `cudaSetTmaIm2ColDescriptor`,
  `cuTensorMapEncodeTiled`, `cuTensorMapEncodeIm2col`, `cuTensorMapEncodeIm2colWide`,
  `cuTensorMapReplaceAddress`; the descriptor argument is written, so it counts as a
  dereference), arguments of memory-ordering accessors (a callee named `*volatile*`,
  `*acquire*` or `*release*`: cross-GPU flags) and the address (`p`, `p + i`, `&p[i]`) of a
  cache-hinted load or store (`__ldg`, `__ldca`, `__ldcg`, `__ldcs`, `__ldlu`, `__ldcv`,
  `__stcg`, `__stcs`, `__stwb`, `__stwt`: inline asm in CUDA's headers), accesses the compiler
  may not optimize anyway.
  A local pointer initialized from the parameter (`T* q = (T*)p + off;`) carries it on: its
  uses are judged the same way.

## Known limitations
Findings the file alone cannot tell are false, accepted as known false positives:

* a pointer aliased through a struct defined in an **included header** whose name does not
  give it away (a by-value `Params` whose pointer members reach the same buffers as a pointer
  parameter: the file shows neither the members nor the aliasing);
* a kernel called **in place** only by callers outside the file (a Python binding passing the
  same tensor as input and output), with no launch or comment in the file saying so;
* a pointer **touched once** at an element each thread picks (`p[tid] = v;` in a
  single-thread launch, or a read after which nothing is stored): `__restrict__` could change
  nothing there, but that cannot be told apart from the ordinary one-element-per-thread
  kernel, where it does matter;
* a pointer only handed to a callee the file cannot see into (a template parameter's
  `Kernel::run(a, b, ...)`) that uses it only as an address (an AMD buffer resource).

Misses accepted the other way: in a kernel with a `volatile` flag, a pointer read once as
`*p` in every thread (`auto dp = *rank_data;`) is taken for a scalar slot and not reported.

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

`__restrict__` qualifies the parameter itself (a top-level qualifier), so forward declarations,
explicit instantiations and function-pointer types need not change with it (nvcc accepts the
mismatch). It does change what binds to the parameter: the finding is reported without a fix
where the body takes its address (`&p` is a `float* __restrict__*`, which a `float**` parameter
does not accept), binds it to an explicitly typed reference (`float*& r = p;`, `float* const&`),
or passes it to a function of this file whose parameter there is a reference (`float*& p`).
A callee declared in another header is taken to receive the pointer by value.
kernlint's own tests apply every fix to a set of kernels and compile them with nvcc.
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
