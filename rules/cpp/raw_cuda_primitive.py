"""Reports raw CUDA where SGLang's JIT headers have an abstraction for it.

## What it does
In JIT sources, reports the raw CUDA spellings listed in the rule's table `TABLE` (one entry per
pattern: what is matched, the abstraction to use, the message). The entries, each measured on
the SGLang 0.5.23 JIT tree (docs/real-world.md):

| entry | matches | use instead |
|---|---|---|
| `forceinline` | `__device__ __forceinline__` (either order) on a function | `SGL_DEVICE` (`SGL_DEVICE_HOST` with `__host__`) |
| `shfl-reduction` | `v += __shfl_xor_sync(m, v, k)`, `v = max(v, __shfl_down_sync(m, v, k))`, `v = v + __shfl_...` | `device::warp::reduce_sum/max/min` |
| `pdl` | `cudaGridDependencySynchronize()`, `cudaTriggerProgrammaticLaunchCompletion()`, `griddepcontrol` inline asm | `PDLWaitPrimary<kUsePDL>()` / `PDLTriggerSecondary<kUsePDL>()` |
| `vector-cast` | `reinterpret_cast<float4*>(p + i)`, `int4`, `uint4` (const or not) of a pointer | `AlignedVector<T, N>` loads/stores |
| `get-last-error` | `cudaGetLastError()` / `cudaPeekAtLastError()` after a launch in the same function | nothing: `host::LaunchKernel` checks the launch |
| `host-assert` | bare `assert(...)` and `TORCH_CHECK(...)` in host functions | `RuntimeCheck(cond, "message", ...)` or `CHECK_HOST(cond) << "message"` |

Only shuffles that combine a variable with its own shuffled value are reported: a butterfly that
carries an index along with a value (an arg-max) or shuffles a different variable is not a plain
reduction and stays silent. A vector cast of an address (`reinterpret_cast<int4*>(&frag)`) or
of a local array (`reinterpret_cast<const uint4*>(regs)` with `T regs[4]` declared in the
function) is type punning of registers, not a memory access, and is not reported; nor is a cast
in host code (setting up a pointer for a kernel's params is not a vector access).
`assert` in `__device__`/`__global__` code is fine (it is the device
assert) and so is `static_assert`. Comments and string literals never match.

Never fires inside the abstractions' own implementation (`include/sgl_kernel/**`), which is
where these raw primitives belong.

## Why is this bad?
The project abstractions encode decisions reviewers otherwise re-check by hand: `SGL_DEVICE` is
the one spelling of "inlined device function" (and switches correctly for ROCm);
`warp::reduce_*` has the right masks and widths; `PDLWaitPrimary` compiles to nothing when PDL
is off and on architectures without it; `AlignedVector` keeps 128-bit accesses aligned and typed;
`LaunchKernel` already checks launch errors with the caller's location; `RuntimeCheck` raises a
Python exception with a message instead of aborting the serving process.

## Example
```cpp
namespace sglang {
__device__ __forceinline__ float warp_sum(float v) {
  for (int32_t k = 16; k > 0; k >>= 1) v += __shfl_xor_sync(0xffffffff, v, k);
  return v;
}
}  // namespace sglang
```

## Use instead
```cpp
namespace sglang {
SGL_DEVICE float warp_sum(float v) {
  return device::warp::reduce_sum(v);
}
}  // namespace sglang
```

## Fix safety
No automatic fix: each replacement needs the project header and, for reductions and vector
loads, a restructured loop.
"""

from __future__ import annotations

import re

from kernlint.cpp.facts import in_abstractions, in_document_order, simple_name
from kernlint.model import Rule
from kernlint.record import record

RULE = Rule(
    code="CU007",
    name="raw-cuda-primitive",
    language="cpp",
    summary="raw CUDA primitive where the project has an abstraction",
    severity="warning",
    scope="jit",
    triggers=(
        b"__forceinline__",
        b"__shfl_",
        b"cudaGridDependencySynchronize",
        b"cudaTriggerProgrammaticLaunchCompletion",
        b"griddepcontrol",
        b"reinterpret_cast",
        b"LastError",
        b"assert",
        b"TORCH_CHECK",
    ),
)


@record(frozen=True)
class Entry:
    key: str
    pattern: str
    abstraction: str
    message: str


TABLE = (
    Entry(
        "forceinline",
        "`__device__ __forceinline__` on a function",
        "SGL_DEVICE",
        "`{text}`: use `{abstraction}`",
    ),
    Entry(
        "shfl-reduction",
        "a variable combined with its own `__shfl_xor_sync`/`__shfl_down_sync`",
        "device::warp::reduce_{op}",
        "hand-written warp reduction with `{text}`: use `{abstraction}`",
    ),
    Entry(
        "pdl",
        "`cudaGridDependencySynchronize`, `cudaTriggerProgrammaticLaunchCompletion`, "
        "`griddepcontrol` asm",
        "{pdl}",
        "`{text}`: use `{abstraction}`",
    ),
    Entry(
        "vector-cast",
        "`reinterpret_cast` to `float4*`/`int4*`/`uint4*`",
        "AlignedVector<T, N>",
        "vector access through `{text}`: use `{abstraction}` loads and stores",
    ),
    Entry(
        "get-last-error",
        "`cudaGetLastError()`/`cudaPeekAtLastError()` after a launch",
        "host::LaunchKernel",
        "`{text}` after a launch: `{abstraction}` already checks launch errors",
    ),
    Entry(
        "host-assert",
        "`assert(...)` / `TORCH_CHECK(...)` in host code",
        "RuntimeCheck(cond, message...)` or `CHECK_HOST(cond) << message",
        "`{text}` in host code: use `{abstraction}`",
    ),
)
ENTRIES = {e.key: e for e in TABLE}

_FORCEINLINE = re.compile(
    rb"\b(?:__device__\s+__forceinline__|__forceinline__\s+__device__)\b"
    rb"(?P<host>\s+__host__\b)?"
)
_HOST_BEFORE = re.compile(rb"__host__\s+$")
_SHUFFLES = frozenset({"__shfl_xor_sync", "__shfl_down_sync"})
_MAX_FUNCS = {
    "max": "max",
    "fmaxf": "max",
    "fmax": "max",
    "min": "min",
    "fminf": "min",
    "fmin": "min",
}
_COMPOUND_OPS = {"+=": "sum", "*=": "prod", "|=": "or", "&=": "and", "^=": "xor"}
_VECTOR_CAST = re.compile(r"^<\s*(?:const\s+)?(float4|int4|uint4)\s*(?:const\s*)?\*\s*>$")
_PDL_CALLS = frozenset({"cudaGridDependencySynchronize", "cudaTriggerProgrammaticLaunchCompletion"})
_PDL_ABSTRACTION = {True: "PDLWaitPrimary<kUsePDL>()", False: "PDLTriggerSecondary<kUsePDL>()"}
_ERROR_CALLS = frozenset({"cudaGetLastError", "cudaPeekAtLastError"})
_HOST_CHECKS = frozenset({"assert", "TORCH_CHECK"})


def _report(ctx, start, end, key, text, **fmt) -> None:
    entry = ENTRIES[key]
    abstraction = entry.abstraction.format(**fmt)
    ctx.report(start, end, entry.message.format(text=text, abstraction=abstraction))


def check(ctx) -> None:
    if in_abstractions(ctx.source.abspath or ctx.source.path):
        return
    data = ctx.data
    if b"__forceinline__" in data:
        _forceinline(ctx)

    facts = ctx.facts
    kinds = {f.node.id: f for f in facts.functions}
    if any(name.encode() in data for name in _ERROR_CALLS):
        # Launch sites decide the error-check entries: every call, in document order.
        nodes = facts.nodes("call_expression", "gnu_asm_expression")
    else:
        nodes = in_document_order(_named_calls(ctx) + facts.nodes("gnu_asm_expression"))
    launches: dict[int, int] = {}  # function node id -> first launch offset
    local_arrays: dict[tuple[int, bytes], bool] = {}  # (function id, name) -> declared array
    for node in nodes:
        if facts.error_ranges and facts.inside_error(node.start_byte, node.end_byte):
            continue
        if node.type == "gnu_asm_expression":
            code = node.child_by_field_name("assembly_code")
            if code is not None and b"griddepcontrol" in code.text:
                wait = b"griddepcontrol.wait" in code.text
                _report(
                    ctx,
                    node.start_byte,
                    node.end_byte,
                    "pdl",
                    "griddepcontrol.wait" if wait else "griddepcontrol.launch_dependents",
                    pdl=_PDL_ABSTRACTION[wait],
                )
            continue
        fn = node.child_by_field_name("function")
        if fn is None:
            continue
        name = simple_name(fn)
        # A `<<<...>>>` launch is a call with a third child (function, kernel_call_syntax, args).
        if (
            node.child_count > 2 and any(c.type == "kernel_call_syntax" for c in node.children)
        ) or _is_launch(fn, name):
            owner = facts.enclosing_function(node)
            if owner is not None:
                launches.setdefault(owner.id, node.end_byte)
        if name in _SHUFFLES:
            op = _reduction_op(node, facts.parent)
            if op is not None:
                _report(ctx, node.start_byte, node.end_byte, "shfl-reduction", name, op=op)
        elif name in _PDL_CALLS:
            wait = name == "cudaGridDependencySynchronize"
            _report(
                ctx, node.start_byte, node.end_byte, "pdl", name + "()", pdl=_PDL_ABSTRACTION[wait]
            )
        elif name == "reinterpret_cast" and fn.type == "template_function":
            targs = fn.child_by_field_name("arguments")
            if (
                targs is not None
                and _VECTOR_CAST.match(" ".join(ctx.text(targs).split()))
                and not _casts_an_address(node)
                and not _casts_a_local_array(node, facts, local_arrays)
                and _in_device_code(node, kinds, facts)
            ):
                text = "reinterpret_cast" + " ".join(ctx.text(targs).split())
                _report(ctx, node.start_byte, node.end_byte, "vector-cast", text)
        elif name in _ERROR_CALLS:
            owner = facts.enclosing_function(node)
            if owner is not None and launches.get(owner.id, 1 << 62) <= node.start_byte:
                _report(ctx, node.start_byte, node.end_byte, "get-last-error", name + "()")
        elif name in _HOST_CHECKS and fn.type == "identifier":
            owner = facts.enclosing_function(node)
            func = kinds.get(owner.id) if owner is not None else None
            if func is not None and _is_host_only(func):
                _report(ctx, fn.start_byte, fn.end_byte, "host-assert", name)


# The callee names the loop in `check` acts on, other than the error checks (with those, every
# call is visited: launch sites matter before them).
_NAMED = tuple(sorted(n.encode() for n in _SHUFFLES | _PDL_CALLS | _HOST_CHECKS)) + (
    b"reinterpret_cast",
)


def _named_calls(ctx) -> list:
    """The calls whose callee's simple name (`simple_name`) is one of `_NAMED`, found by
    looking up each occurrence of a name in the tree instead of visiting every call. (A call
    has one callee name at one offset: no call is found twice.)"""
    from kernlint.cpp.facts import calls_named

    text = ctx.normalized.data  # the bytes the tree was parsed from
    root = ctx.tree.root_node
    return [call for name in _NAMED for call in calls_named(root, text, name)]


def _forceinline(ctx) -> None:
    data = ctx.data
    from kernlint.cpp.lexer import span_at

    matches = list(_FORCEINLINE.finditer(data))
    if not matches:
        return
    # (the file is lexed only up to the last match: the spans before it are all that count)
    spans = ctx.literal_spans_before(matches[-1].start() + 1)
    for m in matches:
        if span_at(spans, m.start()) is not None:
            continue
        host = m.group("host") is not None or _HOST_BEFORE.search(
            data, max(0, m.start() - 40), m.start()
        )
        end = m.end("host") if m.group("host") else m.end()
        start = m.start()
        if not m.group("host") and host:
            start = _HOST_BEFORE.search(data, max(0, m.start() - 40), m.start()).start()
        text = " ".join(data[start:end].decode().split())
        abstraction = "SGL_DEVICE_HOST" if host else "SGL_DEVICE"
        ctx.report(
            start, end, ENTRIES["forceinline"].message.format(text=text, abstraction=abstraction)
        )


def _is_launch(fn, name: str) -> bool:
    if name.startswith("cudaLaunch"):
        return True
    # host::LaunchKernel(grid, block, device)(kernel, args...): the callee is itself a call.
    if fn.type == "call_expression":
        inner = fn.child_by_field_name("function")
        return inner is not None and simple_name(inner) == "LaunchKernel"
    if fn.type == "field_expression":  # LaunchKernel(...).enable_pdl(...)(kernel, ...)
        return b"LaunchKernel" in fn.text
    return False


def _casts_an_address(call) -> bool:
    """`reinterpret_cast<int4*>(&frag)`: type punning of a local object, not a memory access."""
    args = call.child_by_field_name("arguments")
    values = [a for a in args.named_children if a.type != "comment"] if args is not None else []
    if len(values) != 1:
        return True
    value = values[0]
    while value.type == "parenthesized_expression" and value.named_child_count == 1:
        value = value.named_children[0]
    op = value.child_by_field_name("operator") if value.type == "pointer_expression" else None
    return op is not None and op.type == "&"


def _in_device_code(node, kinds, facts) -> bool:
    owner = facts.enclosing_function(node)
    func = kinds.get(owner.id) if owner is not None else None
    return func is not None and bool({"global", "device"} & func.qualifiers)


def _casts_a_local_array(call, facts, memo: dict) -> bool:
    """`reinterpret_cast<const uint4*>(regs)` with `T regs[4]` declared in the function (`memo`:
    the answers by function and name, each found once)."""
    args = call.child_by_field_name("arguments")
    values = [a for a in args.named_children if a.type != "comment"] if args is not None else []
    if len(values) != 1 or values[0].type != "identifier":
        return False
    owner = facts.enclosing_function(call)
    if owner is None:
        return False
    key = (owner.id, values[0].text)
    found = memo.get(key)
    if found is None:
        found = memo[key] = _declares_array(owner, values[0].text)
    return found


def _declares_array(owner, name: bytes) -> bool:
    """Is `name` the declarator of an array (`T name[4]`) somewhere in `owner`?"""
    from kernlint.cpp.parser import Seeker, identifier_nodes

    seeker = Seeker(owner)
    for ident in identifier_nodes(owner, name, seeker=seeker):
        decl = seeker.parent(ident)
        if decl is not None and decl.type == "array_declarator":
            inner = decl.child_by_field_name("declarator")
            if (
                inner is not None
                and ident.type == "identifier"
                and inner.start_byte == ident.start_byte
            ):
                return True  # the name is the declarator of an array (`T regs[4]`)
    return False


def _is_host_only(func) -> bool:
    if "global" in func.qualifiers or "device" in func.qualifiers:
        return False
    head = func.node.text[:200]
    return not head.lstrip().startswith(b"constexpr") and b"constexpr" not in head.split(b"(")[0]


def _text(node) -> bytes:
    return b"".join(node.text.split())


def _reduction_op(call, parent_of) -> str | None:
    """`v += shfl(m, v, k)` -> "sum"; `v = max(v, shfl(m, v, k))` -> "max"; else None.
    (`parent_of(node)`: `node.parent`. The variable's text is read only once the shape around
    the call is a reduction's: shuffles nested in shuffles are not read again at each level.)"""
    args = call.child_by_field_name("arguments")
    values = [a for a in args.named_children if a.type != "comment"] if args is not None else []
    if len(values) < 3:
        return None
    parent = parent_of(call)
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent_of(parent)
    if parent is None:
        return None
    if parent.type == "assignment_expression":
        op = parent.child_by_field_name("operator")
        left = parent.child_by_field_name("left")
        if op is not None and left is not None and _text(left) == _text(values[1]):
            return _COMPOUND_OPS.get(op.type)
        return None
    if parent.type == "binary_expression":
        op = parent.child_by_field_name("operator")
        other = [
            c for c in (parent.child_by_field_name("left"), parent.child_by_field_name("right"))
        ]
        if op is None or op.type not in ("+", "*"):
            return None
        var = _text(values[1])
        if not any(c is not None and c.id != call.id and _text(c) == var for c in other):
            return None
        kind = "sum" if op.type == "+" else "prod"
        outer = parent_of(parent)
    elif parent.type == "argument_list" and parent_of(parent) is not None:
        fcall = parent_of(parent)
        fn = fcall.child_by_field_name("function")
        kind = _MAX_FUNCS.get(simple_name(fn)) if fn is not None else None
        if kind is None:
            return None
        var = _text(values[1])
        others = [a for a in parent.named_children if a.id != call.id and a.type != "comment"]
        if len(others) != 1 or _text(others[0]) != var:
            return None
        outer = parent_of(fcall)
    else:
        return None
    if outer is not None and outer.type == "assignment_expression":
        op = outer.child_by_field_name("operator")
        left = outer.child_by_field_name("left")
        if op is not None and op.type == "=" and left is not None and _text(left) == var:
            return kind
    return None
