"""Reports a `__global__` kernel's load of upstream data before its PDL wait.

## What it does
In a kernel that calls the PDL wait (`device::PDLWaitPrimary<...>()`,
`cudaGridDependencySynchronize()`, `cutlass::arch::wait_on_dependent_grids()`,
`griddepcontrol.wait` asm), reports a pointer parameter's first load before the first wait
(`p[i]`, `*p`, `p->f`, `__ldg`, `.load`, `load_as`) when the preceding kernel likely produced
the buffer:
- another kernel of the file writes through a same-named pointer parameter, or
- the parameter is named like an output (`out`, `output`, `dst`, or ending in `_out`, `_output`,
  `_dst`), unless the name also says weight, scale, bias, table, `cos`, `sin` or `freq`.

Not reported, by design:
- loads through other pointer parameters (weights, scales, tables: loading those early is the
  point), and parameters the kernel writes or may write;
- loads through local aliases, in `__device__` helpers, lambdas or `sizeof`/`decltype`, or in
  another branch than the wait's;
- pointers inside a parameter struct (`params.input[i]`);
- kernels redeclaring the parameter name or that the parser could not understand, and
  `PDLWaitPrimary<false>()`.

## Why is this bad?
With PDL a kernel starts while the preceding one still runs; only the wait makes its writes
visible. An earlier load may see stale data: a race that shows only under load, with PDL on.
SGLang's JIT kernel guide: "every read of data the preceding kernel produced must come after
`PDLWaitPrimary()`".

## Example
```cuda
namespace sglang {
template <bool kUsePDL>
__global__ void apply_kernel(float* __restrict__ y, const float* __restrict__ prev_out) {
  const float s = prev_out[threadIdx.x];
  device::PDLWaitPrimary<kUsePDL>();
  y[threadIdx.x] = s;
}
}  // namespace sglang
```

## Use instead
```cuda
namespace sglang {
template <bool kUsePDL>
__global__ void apply_kernel(float* __restrict__ y, const float* __restrict__ prev_out) {
  device::PDLWaitPrimary<kUsePDL>();
  y[threadIdx.x] = prev_out[threadIdx.x];
}
}  // namespace sglang
```

## Fix safety
No automatic fix: the code using the loaded value may have to move too.
"""

from __future__ import annotations

import re
from bisect import bisect_left

from kernlint.cpp.parser import STATEMENT_BLOCKS
from kernlint.cpp.writes import DECLARATOR_PARENTS, READ, WRITE, Analyzer
from kernlint.lazyre import lazy_compile
from kernlint.model import Rule

from .pdl_wait_at_kernel_start import is_wait_statement, wait_statement_name

RULE = Rule(
    code="CU012",
    name="read-before-pdl-wait",
    language="cpp",
    summary="load of a buffer the preceding kernel may write, before the PDL wait",
    severity="warning",
    status="preview",
    scope="jit",
    triggers=(
        b"PDLWaitPrimary",
        b"cudaGridDependencySynchronize",
        b"griddepcontrol.wait",
        b"wait_on_dependent_grids",
    ),
)

_WAIT_NAMES = (b"PDLWaitPrimary", b"cudaGridDependencySynchronize", b"wait_on_dependent_grids")
# (b): names of outputs, and words that say a buffer is not produced per step.
_OUTPUT_NAME = lazy_compile(r"(?:^|_)(?:out|output|dst)$", re.IGNORECASE)
_NOT_PRODUCED = lazy_compile(r"weight|scale|bias|table|cos|sin|freq", re.IGNORECASE)
# Callees that load through their pointer argument.
_LOADERS = frozenset({"load", "load_as", "__ldg", "__ldca", "__ldcg", "__ldcs", "__ldlu", "__ldcv"})
_CASTS = frozenset({"static_cast", "reinterpret_cast", "const_cast"})
# Functions of values: passing an element to them loads it.
_VALUE_FUNCTIONS = frozenset(
    {
        "__half2float",
        "__bfloat162float",
        "__half22float2",
        "__bfloat1622float2",
        "__low2float",
        "__high2float",
        "float",
        "int",
        "max",
        "min",
        "fmaxf",
        "fminf",
        "fabsf",
        "abs",
        "expf",
        "__expf",
        "sqrtf",
        "rsqrtf",
        "cast",
    }
)
_UNEVALUATED = frozenset(
    {"sizeof_expression", "alignof_expression", "decltype", "static_assert_declaration"}
)
_STOP = frozenset({"lambda_expression", "function_definition"})
_BLOCKS = STATEMENT_BLOCKS
_PREPROC_ALTERNATIVES = frozenset({"preproc_else", "preproc_elif", "preproc_elifdef"})


def check(ctx) -> None:
    facts = ctx.facts
    kernels = facts.kernels
    if not kernels:
        return
    written: dict[str, list] | None = None  # param name -> kernels that write through it
    waits = None
    for kernel in kernels:
        body = kernel.node.child_by_field_name("body")
        if body is None or body.type != "compound_statement":
            continue
        if waits is None:
            waits = _waits(facts)
        wait = _first_wait(facts, body, waits)
        if wait is None:
            continue
        regions = _before(facts, wait, body)
        if not regions:
            continue
        analyzer = None
        for param in facts.params_of(kernel.node):
            if param.pointer_depth != 1 or param.is_reference or not param.name:
                continue
            loads = _loads_before(facts, body, param.name, regions)
            if not loads:
                continue
            if analyzer is None:
                analyzer = Analyzer(body, facts.functions_by_name)
            verdict = analyzer.param_access(param.name)
            if verdict != READ and not (param.pointee_const and verdict != WRITE):
                continue
            reason = None
            if written is None:
                written = _written_params(facts)
            writer = _producer(written.get(param.name, ()), kernel)
            if writer is not None:
                reason = f"kernel `{writer}` in this file writes through `{param.name}`"
            elif _OUTPUT_NAME.search(param.name) and not _NOT_PRODUCED.search(param.name):
                reason = f"`{param.name}` is named like the output of an earlier kernel"
            if reason is None:
                continue
            ctx.report_node(
                loads[0],
                f"kernel `{kernel.name}` loads `{param.name}` before "
                f"`{wait_statement_name(wait)}`: {reason}, and the preceding kernel may still "
                "be running; load it after the wait",
            )


def _waits(facts) -> tuple[list, list[int]]:
    """The file's wait statements in document order, and their start offsets."""
    found = {}
    for name in _WAIT_NAMES:
        for call in facts.calls_named(name):
            stmt = facts.parent(call)
            if stmt is not None and is_wait_statement(stmt):
                found[stmt.id] = stmt
    if b"griddepcontrol" in facts.data:
        for asm in facts.nodes("gnu_asm_expression"):
            stmt = facts.parent(asm)
            if stmt is not None and is_wait_statement(stmt):
                found[stmt.id] = stmt
    waits = sorted(found.values(), key=lambda n: n.start_byte)
    return waits, [n.start_byte for n in waits]


def _first_wait(facts, body, waits):
    """The first wait statement of `body` in document order (None: none, or in a lambda)."""
    stmts, starts = waits
    i = bisect_left(starts, body.start_byte)
    if i == len(stmts) or stmts[i].start_byte >= body.end_byte:
        return None
    best = stmts[i]
    node = facts.parent(best)
    while node is not None and node.id != body.id:
        if node.type in _STOP:
            return None
        node = facts.parent(node)
    return best


def _before(facts, wait, body) -> list:
    """The nodes that run before `wait`: the preceding statements of every enclosing block,
    and the conditions of the enclosing `if`s and loops."""
    out = []
    node = wait
    while node.id != body.id:
        parent = facts.parent(node)
        if parent is None:
            return []
        t = parent.type
        if t in _BLOCKS:
            if node.type not in _PREPROC_ALTERNATIVES:
                for sibling in parent.named_children:
                    if sibling.start_byte >= node.start_byte:
                        break
                    if sibling.type not in _PREPROC_ALTERNATIVES:
                        out.append(sibling)
        elif t in ("if_statement", "while_statement", "switch_statement"):
            cond = parent.child_by_field_name("condition")
            if cond is not None and cond.id != node.id:
                out.append(cond)
        elif t == "for_statement":
            for field in ("initializer", "condition"):
                part = parent.child_by_field_name(field)
                if part is not None and part.id != node.id:
                    out.append(part)
        node = parent
    return out


def _loads_before(facts, body, name: str, regions: list) -> list:
    """The load expressions through parameter `name` inside `regions` (empty when the name is
    redeclared in the body)."""
    from kernlint.cpp.parser import identifier_nodes

    idents = identifier_nodes(body, name.encode(), seeker=facts.seeker)
    out = []
    spans = [(r.start_byte, r.end_byte) for r in regions]
    for ident in idents:
        parent = facts.parent(ident)
        if parent is not None and parent.type in DECLARATOR_PARENTS:
            declarator = parent.child_by_field_name("declarator")
            if parent.type == "structured_binding_declarator" or (
                declarator is not None and declarator.id == ident.id
            ):
                return []  # (shadowed: the uses may not be the parameter)
        if not any(s <= ident.start_byte and ident.end_byte <= e for s, e in spans):
            continue
        load = _load_of(facts, ident, body)
        if load is not None:
            out.append(load)
    return out


def _load_of(facts, ident, body):
    """The expression that loads through the pointer `ident` (None: not a load, or unsure)."""
    node = ident
    element = False
    while True:
        parent = facts.parent(node)
        if parent is None or parent.id == body.id:
            return None
        t = parent.type
        if not element:
            if t == "parenthesized_expression":
                pass
            elif t == "binary_expression":
                op = parent.child_by_field_name("operator")
                if op is None or op.type not in ("+", "-"):
                    return None
                if op.type == "-" and _field_id(parent, "left") != node.id:
                    return None
            elif t == "cast_expression":
                type_node = parent.child_by_field_name("type")
                if type_node is None or b"*" not in type_node.text:
                    return None
            elif t == "subscript_expression" and _field_id(parent, "argument") == node.id:
                element = True
            elif t == "pointer_expression":
                op = parent.child_by_field_name("operator")
                if op is None or op.type != "*":
                    return None
                element = True
            elif t == "field_expression" and _field_id(parent, "argument") == node.id:
                op = parent.child_by_field_name("operator")
                if op is None or op.type != "->":
                    return None
                element = True
            elif t == "argument_list":
                call = facts.parent(parent)
                if call is None or call.type != "call_expression":
                    return None
                callee, targs = _callee(call)
                if callee in _CASTS and targs is not None and b"*" in targs.text:
                    node = call
                    continue
                if callee in _LOADERS:
                    return call if _evaluated(facts, call, body) else None
                return None
            else:
                return None
            node = parent
            continue
        # `node` is an element reached through the pointer: is its value used?
        if t in ("parenthesized_expression",):
            node = parent
            continue
        if t == "field_expression" and _field_id(parent, "argument") == node.id:
            grand = facts.parent(parent)
            if grand is not None and grand.type == "call_expression":
                return None  # (a method call on the element)
            node = parent
            continue
        if t == "subscript_expression" and _field_id(parent, "argument") == node.id:
            node = parent
            continue
        if t == "pointer_expression":
            op = parent.child_by_field_name("operator")
            if op is not None and op.type == "&":
                node = parent
                element = False  # `&p[i]`: the pointer again
                continue
            return None
        if t == "assignment_expression":
            if _field_id(parent, "right") != node.id:
                return None
        elif t == "init_declarator":
            declarator = parent.child_by_field_name("declarator")
            if declarator is None or declarator.type not in ("identifier", "array_declarator"):
                return None  # (a reference binds the element: nothing loaded yet)
        elif t == "argument_list":
            call = facts.parent(parent)
            if call is None or call.type != "call_expression":
                return None
            callee, targs = _callee(call)
            fn = call.child_by_field_name("function")
            if not (
                callee in _VALUE_FUNCTIONS
                or (callee in _CASTS and targs is not None and b"&" not in targs.text)
                or (fn is not None and fn.type in ("primitive_type", "type_identifier"))
            ):
                return None
        elif t not in (
            "binary_expression",
            "unary_expression",
            "conditional_expression",
            "cast_expression",
            "initializer_list",
            "return_statement",
            "condition_clause",
            "subscript_argument_list",
        ):
            return None
        if t == "cast_expression":
            type_node = parent.child_by_field_name("type")
            if type_node is None or b"&" in type_node.text:
                return None
        return node if _evaluated(facts, node, body) else None


def _evaluated(facts, node, body) -> bool:
    up = facts.parent(node)
    while up is not None and up.id != body.id:
        if up.type in _UNEVALUATED or up.type in _STOP:
            return False
        up = facts.parent(up)
    return True


def _callee(call):
    fn = call.child_by_field_name("function")
    node = fn
    targs = None
    if node is not None and node.type == "field_expression":
        node = node.child_by_field_name("field")
    while node is not None and node.type in ("qualified_identifier", "template_function"):
        if node.type == "template_function":
            targs = node.child_by_field_name("arguments")
        node = node.child_by_field_name("name")
    if node is not None and node.type == "template_method":
        targs = node.child_by_field_name("arguments")
        node = node.child_by_field_name("name")
    return (node.text.decode("utf-8", "replace") if node is not None else ""), targs


def _field_id(node, field: str):
    child = node.child_by_field_name(field)
    return child.id if child is not None else None


def _written_params(facts) -> dict[str, list]:
    """Pointer parameter name -> the kernels of the file that write through it, in order."""
    out: dict[str, list] = {}
    for kernel in facts.kernels:
        analyzer = None
        for param in facts.params_of(kernel.node):
            if param.pointer_depth != 1 or param.is_reference or not param.name:
                continue
            if param.pointee_const:
                continue
            if analyzer is None:
                body = kernel.node.child_by_field_name("body")
                analyzer = Analyzer(body, facts.functions_by_name)
            if analyzer.param_access(param.name) == WRITE:
                out.setdefault(param.name, []).append(kernel)
    return out


def _producer(writers, kernel) -> str | None:
    """The name of the writer to show: the last one defined before `kernel`, else the first
    (another kernel than `kernel` itself: not one of its variants)."""
    others = [w for w in writers if w.name != kernel.name]
    if not others:
        return None
    before = [w for w in others if w.node.start_byte < kernel.node.start_byte]
    return (before[-1] if before else others[0]).name
