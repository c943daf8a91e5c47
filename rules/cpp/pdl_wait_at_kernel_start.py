"""Reports a PDL wait that is the first thing a `__global__` kernel does.

## What it does
In a `__global__` kernel, reports the PDL wait (`device::PDLWaitPrimary<...>()`,
`cudaGridDependencySynchronize()`, `cutlass::arch::wait_on_dependent_grids()`, or
`griddepcontrol.wait` asm) when it is the kernel's first statement that does work at run time.
`using`, `typedef`, `static_assert`, `constexpr` variables, `__shared__` arrays, local types and
empty statements do no work. A wait inside a compile-time branch opening the kernel
(`if constexpr (kUsePDL)`, `#if`) or a nested block still counts as first.

Not reported, by design:
- a wait after any run-time work, however small (an index from `threadIdx.x`, a parameter copy,
  an early `return`);
- a wait under a run-time condition (`if (use_pdl)`), and `PDLWaitPrimary<false>()`;
- a wait after a declaration without initializer of a non-`__shared__` variable (a constructor
  may run);
- waits in `__device__` functions, and kernels the parser could not understand.

## Why is this bad?
With PDL a kernel starts while the preceding one is still finishing; the wait blocks until its
writes are visible. Only work done *before* the wait overlaps with the primary's tail: loading
parameters, computing indices, prefetching buffers the primary never writes. SGLang's JIT kernel
guide: "a kernel that waits on its first line gains nothing".

## Example
```cuda
namespace sglang {
template <bool kUsePDL>
__global__ void scale_kernel(float* __restrict__ dst, const float* __restrict__ src) {
  device::PDLWaitPrimary<kUsePDL>();
  const uint32_t i = threadIdx.x;
  dst[i] = src[i] * 2.0f;
}
}  // namespace sglang
```

## Use instead
```cuda
namespace sglang {
template <bool kUsePDL>
__global__ void scale_kernel(float* __restrict__ dst, const float* __restrict__ src) {
  const uint32_t i = threadIdx.x;
  device::PDLWaitPrimary<kUsePDL>();  // just before reading upstream data
  dst[i] = src[i] * 2.0f;
}
}  // namespace sglang
```

## Fix safety
No automatic fix: what may move above the wait depends on what the preceding kernel writes.
"""

from __future__ import annotations

from kernlint.cpp.facts import name_node, simple_name
from kernlint.lazyre import lazy_compile
from kernlint.model import Rule

RULE = Rule(
    code="CU009",
    name="pdl-wait-at-kernel-start",
    language="cpp",
    summary="PDL wait as a kernel's first statement: nothing overlaps with the primary",
    severity="warning",
    scope="jit",
    triggers=(
        b"PDLWaitPrimary",
        b"cudaGridDependencySynchronize",
        b"griddepcontrol.wait",
        b"wait_on_dependent_grids",
    ),
)

# Callee simple names of a PDL wait.
WAIT_CALLS = frozenset(
    {"PDLWaitPrimary", "cudaGridDependencySynchronize", "wait_on_dependent_grids"}
)
_ASM_WAIT = lazy_compile(rb"griddepcontrol\.wait\b")
# Statements that do nothing at run time.
_NO_WORK = frozenset(
    {
        "comment",
        "using_declaration",
        "alias_declaration",
        "type_definition",
        "namespace_alias_definition",
        "static_assert_declaration",
        "struct_specifier",
        "class_specifier",
        "union_specifier",
        "enum_specifier",
        "template_declaration",
    }
)
_PREPROC_IF = frozenset({"preproc_if", "preproc_ifdef"})
_PREPROC_ALTERNATIVES = frozenset({"preproc_else", "preproc_elif", "preproc_elifdef"})
# (nested compile-time branches and blocks: a bound on the descent)
_MAX_DEPTH = 8


def check(ctx) -> None:
    facts = ctx.facts
    for kernel in facts.kernels:
        body = kernel.node.child_by_field_name("body")
        if body is None or body.type != "compound_statement":
            continue
        wait = _first_work(body.named_children, 0)
        if wait is None or wait is False:
            continue
        call = _wait_name(wait)
        ctx.report_node(
            wait,
            f"`{call}` is the first thing kernel `{kernel.name}` does: nothing overlaps with the "
            "preceding kernel's tail; compute indices and load what the preceding kernel does "
            "not write before the wait",
        )


def _first_work(statements, depth: int):
    """The wait statement when the first statement of `statements` that does work is a wait
    (None: the statements do no work at all; False: the first work is something else)."""
    for stmt in statements:
        if _does_no_work(stmt):
            continue
        if _is_wait(stmt):
            return stmt
        if depth >= _MAX_DEPTH:
            return False
        t = stmt.type
        if t == "compound_statement":
            found = _first_work(stmt.named_children, depth + 1)
        elif t == "if_statement" and _is_constexpr_if(stmt):
            if stmt.child_by_field_name("alternative") is not None:
                return False
            consequence = stmt.child_by_field_name("consequence")
            if consequence is None:
                return False
            inner = (
                consequence.named_children
                if consequence.type == "compound_statement"
                else [consequence]
            )
            found = _first_work(inner, depth + 1)
        elif t in _PREPROC_IF:
            # (the statements of the first branch: those up to an `#else` / `#elif`)
            inner = []
            for child in stmt.named_children:
                if child.type in _PREPROC_ALTERNATIVES:
                    break
                if child.id == _condition_id(stmt):
                    continue
                inner.append(child)
            found = _first_work(inner, depth + 1)
        else:
            return False
        if found is None:
            continue  # (a block or branch with nothing in it that works)
        return found
    return None


def _condition_id(node):
    cond = node.child_by_field_name("condition") or node.child_by_field_name("name")
    return cond.id if cond is not None else None


def _is_constexpr_if(node) -> bool:
    return any(c.type == "constexpr" for c in node.children)


def _does_no_work(stmt) -> bool:
    t = stmt.type
    if t in _NO_WORK:
        return True
    if t == "expression_statement":
        return stmt.named_child_count == 0  # (`;`)
    if t != "declaration":
        return False
    qualifiers = {c.text for c in stmt.children if c.type == "type_qualifier"}
    if b"constexpr" in qualifiers:
        return True
    if b"__shared__" in qualifiers:
        # (a `__shared__` variable takes no initializer: nothing runs)
        return not any(c.type == "init_declarator" for c in stmt.named_children)
    return False


def _is_wait(stmt) -> bool:
    if stmt.type != "expression_statement" or stmt.named_child_count != 1:
        return False
    expr = stmt.named_children[0]
    if expr.type == "gnu_asm_expression":
        code = expr.child_by_field_name("assembly_code")
        return code is not None and bool(_ASM_WAIT.search(code.text))
    if expr.type != "call_expression":
        return False
    fn = expr.child_by_field_name("function")
    if simple_name(fn) not in WAIT_CALLS:
        return False
    # `PDLWaitPrimary<false>()` waits for nothing.
    node = fn
    while node is not None and node.type == "qualified_identifier":
        node = node.child_by_field_name("name")
    if node is not None and node.type == "template_function":
        args = node.child_by_field_name("arguments")
        if args is not None and args.text.replace(b" ", b"") == b"<false>":
            return False
    return True


def _wait_name(stmt) -> str:
    expr = stmt.named_children[0]
    if expr.type == "gnu_asm_expression":
        return "griddepcontrol.wait"
    node = name_node(expr.child_by_field_name("function"))
    return node.text.decode("utf-8", "replace") if node is not None else "the PDL wait"


# (shared with read-before-pdl-wait)
is_wait_statement = _is_wait
wait_statement_name = _wait_name
