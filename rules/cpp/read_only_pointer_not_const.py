"""Reports kernel pointer parameters that are only read but do not point to `const`.

## What it does
For each pointer parameter of a `__global__` function definition whose pointee is not `const`
(`T* p`, `T* __restrict__ p`), reads the kernel body and reports the parameter when nothing in
the body can write through it. "Written" includes:

* assignment and compound assignment through `p[i]`, `*p`, `*(p + i)`, `p->f` (and fields or
  sub-elements of those), `++`/`--` on them;
* atomics (`atomicAdd`, `atomicMax`, `atomicCAS`, ..., `device::atomic::*`) on `p` or `&p[i]`;
* the project's stores: `AlignedVector::store(p, ...)`, `tile::Memory::store(p, ...)`,
  `device::store_as(p, ...)`, and `__stcs`/`__stcg`/`memcpy`-style writers;
* passing `p` (or `p + k`, or a cast of it to a non-const pointer) to a callee whose matching
  parameter is a non-const pointer;
* inline asm that takes it as an operand.

Reads through the abstractions' loads (`.load(p, ...)`, `load_as<...>(p, ...)`, `__ldg`) are
reads, and so is passing `p` to a function defined in the same file whose matching parameter
is `const T*`. Simple local aliases (`auto row = p + offset;`, `T* q = p;`) are followed.

When unsure, the rule stays silent: an unknown callee (a function from another header, a macro),
an alias stored into another variable, a reference bound to an element, a method call on an
element, a `return` of the pointer, a name shadowed in the body, or a body with parse errors
all count as "maybe written". Pointers to pointers and void pointers used only through unknown
callees are therefore rarely reported. With `--semantic`, libclang resolves callees declared in
any included header: passing `p` to a parameter declared `const T*` is a read, to `T*` a write
(a callee that is a template of the pointee type stays unknown).

## Why is this bad?
A `const T*` input documents the kernel's contract at the call site, lets the compiler use the
read-only data path (`ld.global.nc`) together with `__restrict__`, and turns an accidental
store into a compile error. SGLang's JIT kernel guide asks for `const T* __restrict__` on every
read-only kernel pointer.

## Example
```cpp
namespace sglang {
__global__ void add_kernel(float* __restrict__ out, float* __restrict__ a, int32_t n) {
  const int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] += a[i];
}
}  // namespace sglang
```

## Use instead
```cpp
namespace sglang {
__global__ void add_kernel(float* __restrict__ out, const float* __restrict__ a, int32_t n) {
  const int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] += a[i];
}
}  // namespace sglang
```

## Fix safety
The fix adds `const` to the pointee type and is unsafe: host code that takes the kernel's
address with an explicit function-pointer type, or a matching declaration elsewhere, must be
changed with it, and a write the analysis could not see (through a macro) would stop compiling.
"""

from __future__ import annotations

from kernlint.cpp.writes import READ, Analyzer
from kernlint.model import Edit, Fix, Rule

RULE = Rule(
    code="CU004",
    name="read-only-pointer-not-const",
    language="cpp",
    summary="read-only kernel pointer parameter without `const`",
    severity="warning",
    fix="unsafe",
    triggers=(b"__global__", b"CUTLASS_GLOBAL"),
)


def check(ctx) -> None:
    facts = ctx.facts
    # A kernel defined more than once (preprocessor variants, e.g. a stub for old architectures)
    # is judged by all its definitions: a parameter is read-only only if it is in every one.
    verdicts: dict[tuple[str, str], set[str]] = {}
    candidates = []
    sem = ctx.semantic if facts.kernels else None
    callee_const = sem.callee_param_const if sem is not None else None
    for kernel in facts.kernels:
        analyzer = Analyzer(
            kernel.node.child_by_field_name("body"), facts.functions_by_name, 0, callee_const
        )
        for param in facts.params_of(kernel.node):
            key = (kernel.name, param.name)
            if not _candidate(param):
                verdicts.setdefault(key, set()).add("not a candidate")
                continue
            verdicts.setdefault(key, set()).add(analyzer.param_access(param.name))
            candidates.append((kernel, param, key))
    for kernel, param, key in candidates:
        if verdicts[key] != {READ}:
            continue
        head = ctx.data[param.node.start_byte : param.declarator.start_byte]
        spelled = " ".join(head.decode("utf-8", "replace").split())
        fix = Fix(
            (Edit(param.node.start_byte, param.node.start_byte, "const "),),
            "unsafe",
            "Add `const` to the pointee type",
        )
        ctx.report_node(
            param.node,
            f"kernel `{kernel.name}` never writes through `{param.name}`: "
            f"declare it `const {spelled}*`",
            fix,
        )


def _candidate(param) -> bool:
    return (
        param.pointer_depth == 1
        and not param.is_reference
        and not param.pointee_const
        and bool(param.name)
        and param.type_node is not None
        and param.declarator is not None
    )
