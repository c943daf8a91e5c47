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

A pointer parameter the body never uses is reported too: nothing writes through it. When it
is a reserved output slot (an argument kept for a later version of the kernel), suppress the
finding with a comment saying so.

Reads through the abstractions' loads (`.load(p, ...)`, `load_as<...>(p, ...)`, `__ldg`) are
reads, and so is passing `p` to a function defined in the same file whose matching parameter
is `const T*`. Simple local aliases (`auto row = p + offset;`, `T* q = p;`) are followed.

When unsure, the rule stays silent: an unknown callee (a function from another header, a macro),
an alias stored into another variable, a reference bound to an element, a method call on an
element, a `return` of the pointer, a name shadowed in the body, or a body with parse errors
all count as "maybe written". Pointers to pointers and void pointers used only through unknown
callees are therefore rarely reported. With `--semantic`, libclang resolves callees declared in
any included header: passing `p` to a parameter declared `const T*` is a read, to `T*` a write
(a callee that is a template of the pointee type stays unknown, and so does one whose declaration
libclang could not resolve, e.g. behind a header that was not found).

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
The fix adds `const` to the pointee type and is unsafe: it changes the kernel's type, and a
write the analysis could not see (through a macro, or in another file that declares the kernel)
would stop compiling. It is offered only where the file is shown to keep compiling, and then it
carries every edit that needs:

* `const` in the target type of a `static_cast` or `reinterpret_cast` of the pointer to a
  non-const pointer type (`reinterpret_cast<float4*>(p)` -> `reinterpret_cast<const float4*>(p)`,
  which would otherwise cast const away), and in the type of a local pointer variable it
  initializes (`float* row = p + k;` -> `const float* row = p + k;`), followed through their uses;
* the same `const` on every other definition (preprocessor variants, each of which must be
  read-only too), forward declaration and explicit instantiation of the kernel in the file
  (`template __global__ void k<float>(float*, int);`).

C-style casts and `const_cast` compile from a const operand and are left alone; `auto`
variables deduce the new type. The finding is reported without a fix where that cannot be
shown: the parameter's type is spelled through `decltype`, the pointer goes to a callee whose
parameter is not `const T*` in this file, the kernel's name is used other than in calls,
launches, arguments, casts and `auto` variables (an explicitly typed function pointer, a
template argument, a macro that declares or instantiates it), an explicit specialization of
the kernel writes through its parameter, or a method is called on an element. Operators
applied to an element (`p[i] + x`) are taken to be built-in or const-correct. Arrays of
pointers (`float* p[4]`, a `float**`) are not reported: `const float* p[4]` would not accept
a `float**` argument. kernlint's own tests apply every fix to a set of kernels and compile
them with nvcc.
"""

from __future__ import annotations

from kernlint.cpp.fix_safety import FixSafety, Shape, display_name
from kernlint.cpp.writes import READ, Analyzer
from kernlint.model import Fix, Rule

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
    by_definition: dict[tuple[int, int], str] = {}  # (definition id, index) -> verdict
    candidates = []
    sem = ctx.semantic if facts.kernels else None
    callee_const = sem.callee_param_const if sem is not None else None
    for kernel in facts.kernels:
        analyzer = Analyzer(
            kernel.node.child_by_field_name("body"), facts.functions_by_name, 0, callee_const
        )
        for param in facts.params_of(kernel.node):
            key = (display_name(kernel), param.name)
            if not _candidate(param):
                verdicts.setdefault(key, set()).add("not a candidate")
                continue
            verdict = analyzer.param_access(param.name)
            verdicts.setdefault(key, set()).add(verdict)
            by_definition[(kernel.node.id, param.index)] = verdict
            candidates.append((kernel, param, key))
    if sem is not None and sem.unresolved_calls:
        # Callees libclang could not resolve without guessing a type: unknown, as without
        # `--semantic`; the run's note counts them.
        from kernlint.semantic import note_unjudged

        for offset in sorted(sem.unresolved_calls):
            note_unjudged(ctx, "callee", offset)
    safety = None
    for kernel, param, key in candidates:
        if verdicts[key] != {READ}:
            continue
        head = ctx.data[param.node.start_byte : param.declarator.start_byte]
        spelled = " ".join(head.decode("utf-8", "replace").split())
        if safety is None:
            safety = FixSafety(ctx)
        edits = safety.const_param_edits(
            kernel.node, param.index, lambda d, i: by_definition.get((d.id, i)) == READ
        )
        fix = None
        if edits is not None:
            fix = Fix(tuple(edits), "unsafe", "Add `const` to the pointee type")
        ctx.report_node(
            param.node,
            f"kernel `{display_name(kernel)}` never writes through `{param.name}`: "
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
        # `T* p[4]` is a pointer to pointers: `const T* p[4]` would not accept a `T**`.
        and not Shape(param.node).array_of_pointers
    )
