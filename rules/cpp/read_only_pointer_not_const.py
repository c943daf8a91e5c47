"""Reports kernel pointer parameters that are only read but do not point to `const`.

## What it does
Reports a `__global__` kernel's pointer parameter whose pointee is not `const` when nothing in
the kernel can write through it, or when the kernel never uses it (a reserved output slot:
suppress the finding, saying so). Writes include stores through `p[i]`, `*p` or `p->f`, atomics,
store helpers (`AlignedVector::store`, `__stcs`), asm operands and non-`const` pointer
arguments, also through a local alias.

Not reported, by design: pointers passed to a callee the file does not define, stored, bound to
a reference, returned, or used in a method call on an element; shadowed names; bodies with parse
errors; arrays of pointers (`float**`). `--semantic` resolves callees in included headers.

## Why is this bad?
`const` on a read-only pointer documents the contract, lets the compiler use the read-only data
path (`ld.global.nc`) with `__restrict__`, and turns an accidental store into a compile error.
SGLang's JIT kernel guide asks for `const T* __restrict__` inputs.

## Example
```cpp
namespace sglang {
__global__ void add_kernel(float* __restrict__ out, float* __restrict__ a) {
  out[threadIdx.x] += a[threadIdx.x];
}
}  // namespace sglang
```

## Use instead
```cpp
namespace sglang {
__global__ void add_kernel(float* __restrict__ out, const float* __restrict__ a) {
  out[threadIdx.x] += a[threadIdx.x];
}
}  // namespace sglang
```

## Fix safety
The fix adds `const` to the pointee and is unsafe: a write kernlint could not see (in a macro or
another file) would stop compiling. Offered only where the file is shown to keep compiling, it
also updates the casts, local pointers and other declarations that must follow. None is offered
where the type is spelled through `decltype`, the kernel's name is used other than in calls,
launches, arguments, casts and `auto` variables, or an explicit specialization writes through
the parameter.
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
