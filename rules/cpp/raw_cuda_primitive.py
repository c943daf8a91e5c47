"""Reports raw CUDA where SGLang's JIT headers have an abstraction for it.

## What it does
In JIT sources, reports (with its replacement):
- `__device__ __forceinline__` or plain `__device__` functions: `SGL_DEVICE` (`SGL_DEVICE_HOST`
  with `__host__`);
- `v += __shfl_xor_sync(m, v, k)` and max/min forms: `device::warp::reduce_sum/max/min`;
- `cudaGridDependencySynchronize()`, `cudaTriggerProgrammaticLaunchCompletion()`,
  `griddepcontrol` asm: `PDLWaitPrimary<kUsePDL>()`, `PDLTriggerSecondary<kUsePDL>()`;
- `reinterpret_cast<float4*>(p + i)` (`int4`, `uint4`, C-style): `AlignedVector<T, N>`;
- `cudaGetLastError()` after a launch: nothing (`LaunchKernel` checks it);
- host `assert`, `TORCH_CHECK`, `host::RuntimeCheck`: `CHECK_HOST(cond) << "message"`;
- `host::RuntimeDeviceCheck(expr)`: `CHECK_CUDA(expr) << "context"`;
- host `cudaMalloc(Async)`: `host::alloc_workspace_tensor(nbytes, device)`;
- `__habs2`, `__hmax`, ...: `device::math::abs/max/...`;
- `__half`, `__nv_bfloat16`, `__half2`, `__nv_bfloat162`: `fp16_t`, `bf16_t`, `fp16x2_t`,
  `bf16x2_t`.

Each is reported only where the tree's `include/sgl_kernel/` headers define the replacement,
type spellings only inside `namespace sglang` in files including one. Configure: `primitives`,
`drop-primitives`, `primitives-implementation` (docs/presets.md).

Not reported, by design:
- shuffles that are not a reduction (arg-max butterflies);
- vector casts of locals, in host code, feeding `__ldg`, hinted, async or TMA accesses;
- device `assert`; checks in functions taking a `DebugInfo`; `__noinline__` or macro-decorated
  functions; cross-process allocations; intrinsics near a mention of NaN or taking a shuffle;
- `include/sgl_kernel/**`; files marked as another project's code ("Adapted from <URL>") and
  their same-directory includes.

Known misses: `cudaGetLastError()` after a helper's launch, `__fadd_rn` sums, 64-bit
`uint2`/`float2` casts. Unmarked copied code is reported: add a "Taken from ..." line.

## Why is this bad?
The abstractions encode what reviewers check by hand: ROCm builds, warp masks, PDL
off, aligned accesses, launch errors, exceptions not aborts.

## Example
```cpp
namespace sglang {
__device__ __forceinline__ float twice(float v) { return 2.0f * v; }
}  // namespace sglang
```

## Use instead
```cpp
namespace sglang {
SGL_DEVICE float twice(float v) { return 2.0f * v; }
}  // namespace sglang
```

## Fix safety
No automatic fix: most replacements restructure code.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache

from kernlint.cpp.facts import in_abstractions, in_document_order, simple_name
from kernlint.lazyre import lazy_compile
from kernlint.model import Rule
from kernlint.record import record

RULE = Rule(
    code="CU007",
    name="raw-cuda-primitive",
    language="cpp",
    summary="raw CUDA primitive where the project has an abstraction",
    severity="warning",
    status="preview",
    scope="jit",
    # (the `primitives` setting's patterns may match any file: the rule then runs on each)
    untriggered_when=lambda settings: bool(getattr(settings, "primitives", None)),
    triggers=(
        b"__forceinline__",
        b"__shfl_",
        b"cudaGridDependencySynchronize",
        b"cudaTriggerProgrammaticLaunchCompletion",
        b"griddepcontrol",
        b"int4",
        b"float4",
        b"LastError",
        b"assert",
        b"TORCH_CHECK",
        b"RuntimeCheck",
        b"RuntimeDeviceCheck",
        b"cudaMalloc",
        b"__device__",
        b"__habs",
        b"__hmax",
        b"__hmin",
        b"__half",
        b"__nv_bfloat16",
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
        "`reinterpret_cast` or a C-style cast to `float4*`/`int4*`/`uint4*`",
        "AlignedVector<T, N>",
        "vector access through `{text}`: use `{abstraction}` loads and stores",
    ),
    Entry(
        "get-last-error",
        "`cudaGetLastError()`/`cudaPeekAtLastError()` after a launch",
        "host::LaunchKernel",
        "`{text}` after a launch: remove it and launch with `{abstraction}`, which checks "
        "launch errors",
    ),
    Entry(
        "host-assert",
        "`assert(...)` / `TORCH_CHECK(...)` in host code",
        "{check}",
        "`{text}` in host code: use `{abstraction}`",
    ),
    Entry(
        "runtime-check",
        "`host::RuntimeCheck(...)`",
        "CHECK_HOST(cond) << message",
        "`{text}(...)`: use `{abstraction}` (`RuntimeCheck` evaluates its message arguments "
        "even when the check passes; `CHECK_HOST` only when it fails)",
    ),
    Entry(
        "runtime-device-check",
        "`host::RuntimeDeviceCheck(...)`",
        "CHECK_CUDA(expr) << context",
        "`{text}(...)`: use `{abstraction}` (`RuntimeDeviceCheck` takes no context message; "
        "`CHECK_CUDA` builds its error only when the call fails)",
    ),
    Entry(
        "raw-malloc",
        "`cudaMalloc(...)` / `cudaMallocAsync(...)`",
        "host::alloc_workspace_tensor(nbytes, device)",
        "`{text}(...)` in a JIT source: use `{abstraction}` (scratch memory from PyTorch's "
        "caching allocator, freed with the tensor that holds it)",
    ),
    Entry(
        "plain-device",
        "`__device__` on a function without `__forceinline__`",
        "{device}",
        "`{text}` function `{name}`: use `{abstraction}`",
    ),
    Entry(
        "math-intrinsic",
        "a CUDA intrinsic that `device::math::` wraps (`__habs2`, `__hmax`, ...)",
        "device::math::{function}",
        "`{text}`: use `{abstraction}` (dispatched on the element type)",
    ),
    Entry(
        "type-spelling",
        "`__half`, `__half2`, `__nv_bfloat16`, `__nv_bfloat162` inside `namespace sglang`",
        "{alias}",
        "`{text}`: use the project's alias `{abstraction}`",
    ),
)
ENTRIES = {e.key: e for e in TABLE}


def drop_primitives_problem(names) -> str | None:
    """What is wrong with a `drop-primitives` value (the names of table entries to leave out,
    or `"ALL"`), or None. (kernlint.config validates the key with it.)"""
    for name in names:
        if name != "ALL" and name not in ENTRIES:
            known = ", ".join(ENTRIES)
            shown = repr(name[:61]) if len(name) <= 60 else repr(name[:60])[:-1] + "...'"
            return f'{shown} is not an entry of the table (known: {known}; or "ALL")'
    return None


def _dropped(settings) -> frozenset[str]:
    """The table entries the `drop-primitives` setting leaves out."""
    names = getattr(settings, "drop_primitives", None)
    if not names:
        return frozenset()
    return frozenset(ENTRIES) if "ALL" in names else frozenset(names)


def implementation_exempt(ctx) -> bool:
    """Is the file part of the abstractions' own implementation: under the
    `primitives-implementation` globs (relative to the config that sets them, or matching the
    absolute path), by default under `include/sgl_kernel/` (`in_abstractions`)?"""
    path = ctx.source.abspath or ctx.source.path
    settings = ctx.settings
    globs = getattr(settings, "primitives_implementation", None)
    if globs is None:
        return in_abstractions(path)
    if not globs:
        return False
    from kernlint.config import _spec, _under

    raw = getattr(settings, "raw", None)
    root = getattr(settings, "root", None) or os.getcwd()
    base = raw.key_roots.get("primitives-implementation", root) if raw is not None else root
    return _under(_spec(list(globs)), base, os.path.abspath(path))


_FORCEINLINE = lazy_compile(
    rb"\b(?:__device__\s+__forceinline__|__forceinline__\s+__device__)\b"
    rb"(?P<host>\s+__host__\b)?"
)
_HOST_BEFORE = lazy_compile(rb"__host__\s+$")
_SHUFFLES = frozenset({"__shfl_xor_sync", "__shfl_down_sync"})
_MAX_FUNCS = {
    "max": "max",
    "fmaxf": "max",
    "fmax": "max",
    "__hmax": "max",
    "__hmax2": "max",
    "min": "min",
    "fminf": "min",
    "fmin": "min",
    "__hmin": "min",
    "__hmin2": "min",
}
_COMPOUND_OPS = {"+=": "sum", "*=": "prod", "|=": "or", "&=": "and", "^=": "xor"}
_VECTOR_CAST = lazy_compile(r"^<\s*(?:const\s+)?(float4|int4|uint4)\s*(?:const\s*)?\*\s*>$")
_C_VECTOR_CAST = lazy_compile(rb"\(\s*(?:const\s+)?(?:float4|u?int4)\s*(?:const\s*)?\*\s*\)")
_PDL_CALLS = frozenset({"cudaGridDependencySynchronize", "cudaTriggerProgrammaticLaunchCompletion"})
_PDL_ABSTRACTION = {True: "PDLWaitPrimary", False: "PDLTriggerSecondary"}
_ERROR_CALLS = frozenset({"cudaGetLastError", "cudaPeekAtLastError"})
_HOST_CHECKS = frozenset({"assert", "TORCH_CHECK"})
# Host calls with an abstraction of their own: callee name -> (table entry, abstraction name).
_HOST_CALLS = {
    "RuntimeCheck": ("runtime-check", "CHECK_HOST"),
    "RuntimeDeviceCheck": ("runtime-device-check", "CHECK_CUDA"),
    "cudaMalloc": ("raw-malloc", "alloc_workspace_tensor"),
    "cudaMallocAsync": ("raw-malloc", "alloc_workspace_tensor"),
}
# A function that maps or shares memory across processes or devices needs the raw allocation
# (IPC handles, virtual memory, multicast), which a workspace tensor does not give.
_SHARED_MEMORY = lazy_compile(rb"\b(?:cudaIpc\w+|cuMem\w+|cuMulticast\w+|cudaHostRegister)\b")
# A head word in capitals is a macro that may carry its own inlining attributes.
_MACRO_WORD = lazy_compile(rb"\b[A-Z][A-Z0-9_]{2,}\b")
_DEVICE_WORD = lazy_compile(rb"\b__device__\b")
_SGL_INCLUDE = lazy_compile(rb"#[ \t]*include[ \t]*[<\"]sgl_kernel/")
# `NaN` in a comment, `__hmin2_nan` beside the call: the intrinsic's NaN handling is chosen.
_NAN = lazy_compile(rb"(?i)(?:\b|_)nan\b")


def _nan_nearby(data: bytes, at: int) -> bool:
    """Does the call's line, or one of the eight lines above it, speak of NaN?"""
    start = at
    for _ in range(9):
        start = data.rfind(b"\n", 0, start - 1) if start > 0 else -1
        if start < 0:
            start = 0
            break
    end = data.find(b"\n", at)
    return _NAN.search(data, start, end if end >= 0 else len(data)) is not None


def _forwards_location(owner, facts) -> bool:
    """Does the function take its caller's source location (a `DebugInfo` parameter), which a
    check macro would replace by its own line?"""
    return any(
        "DebugInfo" in (p.type_text or "") or "source_location" in (p.type_text or "")
        for p in facts.params_of(owner)
    )


_COMMENT = lazy_compile(rb"//[^\n]*|/\*.*?\*/", re.S)
# Accesses `AlignedVector` cannot express: the CUDA cache-operator intrinsics (`__ldg`,
# `__ldcs`, `__stcg`, ...) and helpers around PTX loads and stores with cache hints, async
# copies and TMA (`load_nc`/`store_nc`, `ld_*`/`st_*`, `cp_async*`, `*bulk*`, `*tma*`,
# `*Ptx*`, `ptx::*`), matched on the callee as spelled.
_HINTED_CALLEE = lazy_compile(
    r"(?:^|::)(?:__ld(?:g|cg|ca|cs|lu|cv)|__st(?:cg|cs|wb|wt))$"
    r"|(?:^|::|_)(?:ld|st|ldg|load|store)_?nc(?:_|$)"
    r"|(?:^|::)(?:ld|st)_|(?:^|::|_)cp_?async"
    r"|(?:^|::|_)(?:tma|bulk|ptx|ldg|multimem)(?:_|::|$)"
    r"|(?:[a-z0-9](?:Tma|Bulk|Ptx)|^(?:Tma|Bulk|Ptx))(?:[A-Z]|$)"
)
_STATEMENT_END = frozenset(
    {
        "expression_statement",
        "declaration",
        "return_statement",
        "compound_statement",
        "function_definition",
        "if_statement",
        "for_statement",
        "while_statement",
        "condition_clause",
        "field_declaration",
    }
)


def upstream_source(data: bytes) -> str | None:
    """The words of the file's leading comment that say its code comes from another project's
    C/C++/CUDA source, or None (kernlint.jitscope.upstream_source)."""
    from kernlint.jitscope import upstream_source as found

    return found(data)


def _report(ctx, start, end, key, text, **fmt) -> None:
    if key in _dropped(ctx.settings):
        return
    entry = ENTRIES[key]
    abstraction = entry.abstraction.format(**fmt)
    ctx.report(start, end, entry.message.format(text=text, abstraction=abstraction, **fmt))


def check(ctx) -> None:
    path = ctx.source.abspath or ctx.source.path
    if implementation_exempt(ctx) or upstream_source(ctx.data) is not None:
        return
    from kernlint.jitscope import included_by_upstream

    if included_by_upstream(path):
        return
    settings = ctx.settings
    custom = getattr(settings, "primitives", None)
    if custom:
        _custom_entries(ctx, custom)
    dropped = _dropped(settings)
    if len(dropped) == len(ENTRIES):
        return
    if custom and not any(t in ctx.data for t in RULE.triggers):
        return  # (run for `primitives`: none of the table's words is here)
    _table(ctx, path, dropped)


def _table(ctx, path, dropped) -> None:
    """The shipped table's entries (those `drop-primitives` leaves)."""
    from kernlint.sgl_headers import abstractions

    tree = abstractions(path)
    data = ctx.data
    if b"__forceinline__" in data and "forceinline" not in dropped:
        _forceinline(ctx, tree)

    facts = ctx.facts
    kinds = {f.node.id: f for f in facts.functions}
    if any(name.encode() in data for name in _ERROR_CALLS):
        # Launch sites decide the error-check entries: every call, in document order.
        nodes = facts.nodes("call_expression", "gnu_asm_expression")
    else:
        nodes = in_document_order(_named_calls(ctx) + facts.nodes("gnu_asm_expression"))
    intrinsics = {n: f for n, f in tree.intrinsics if n.encode() in data}
    if intrinsics and not any(name.encode() in data for name in _ERROR_CALLS):
        nodes = in_document_order(nodes + _named_calls(ctx, tuple(intrinsics)))
    launches: dict[int, int] = {}  # function node id -> first launch offset
    memo: dict = {}  # (function id, name) -> what `_local_kind` found
    vectors = tree.has("AlignedVector")
    for node in nodes:
        if facts.error_ranges and facts.inside_error(node.start_byte, node.end_byte):
            continue
        if node.type == "gnu_asm_expression":
            code = node.child_by_field_name("assembly_code")
            if code is not None and b"griddepcontrol" in code.text:
                wait = b"griddepcontrol.wait" in code.text
                if tree.has(_PDL_ABSTRACTION[wait]):
                    _report(
                        ctx,
                        node.start_byte,
                        node.end_byte,
                        "pdl",
                        "griddepcontrol.wait" if wait else "griddepcontrol.launch_dependents",
                        pdl=_PDL_ABSTRACTION[wait] + "<kUsePDL>()",
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
            found = _reduction_op(node, facts.parent)
            if found is not None:
                op, var = found
                if tree.reduces(
                    op, _operand_type(var, node, facts, memo) if op in ("max", "min") else None
                ):
                    _report(ctx, node.start_byte, node.end_byte, "shfl-reduction", name, op=op)
        elif name in _PDL_CALLS:
            wait = name == "cudaGridDependencySynchronize"
            if tree.has(_PDL_ABSTRACTION[wait]):
                _report(
                    ctx,
                    node.start_byte,
                    node.end_byte,
                    "pdl",
                    name + "()",
                    pdl=_PDL_ABSTRACTION[wait] + "<kUsePDL>()",
                )
        elif name == "reinterpret_cast" and fn.type == "template_function":
            targs = fn.child_by_field_name("arguments")
            if (
                vectors
                and targs is not None
                and _VECTOR_CAST.match(" ".join(ctx.text(targs).split()))
                and _vector_access(node, _cast_operand(node), facts, kinds, memo)
            ):
                text = "reinterpret_cast" + " ".join(ctx.text(targs).split())
                _report(ctx, node.start_byte, node.end_byte, "vector-cast", text)
        elif name in _ERROR_CALLS:
            owner = facts.enclosing_function(node)
            if (
                tree.has("LaunchKernel")
                and owner is not None
                and launches.get(owner.id, 1 << 62) <= node.start_byte
            ):
                _report(ctx, node.start_byte, node.end_byte, "get-last-error", name + "()")
        elif name in _HOST_CHECKS and fn.type == "identifier":
            owner = facts.enclosing_function(node)
            func = kinds.get(owner.id) if owner is not None else None
            if func is not None and _is_host_only(func) and tree.has("RuntimeCheck"):
                check = "RuntimeCheck(cond, message...)"
                if tree.has("CHECK_HOST"):
                    check = "CHECK_HOST(cond) << message"
                _report(ctx, fn.start_byte, fn.end_byte, "host-assert", name, check=check)
        elif name in _HOST_CALLS:
            key, needed = _HOST_CALLS[name]
            owner = facts.enclosing_function(node)
            func = kinds.get(owner.id) if owner is not None else None
            if (
                tree.has(needed)
                and func is not None
                and _is_host_only(func)
                and not (key == "raw-malloc" and _SHARED_MEMORY.search(owner.text))
                and not (key != "raw-malloc" and _forwards_location(owner, facts))
            ):
                text = " ".join(ctx.text(fn).split())
                _report(ctx, fn.start_byte, fn.end_byte, key, text)
        elif intrinsics and name in intrinsics and fn.type == "identifier":
            args = node.child_by_field_name("arguments")
            if (
                _in_device_code(node, kinds, facts)
                and args is not None
                and b"__shfl_" not in args.text  # (a warp reduction: its own entry)
                and not _nan_nearby(data, node.start_byte)
            ):
                _report(
                    ctx,
                    fn.start_byte,
                    fn.end_byte,
                    "math-intrinsic",
                    name,
                    function=intrinsics[name],
                )
    if vectors and "vector-cast" not in dropped and _C_VECTOR_CAST.search(ctx.normalized.data):
        _c_style_casts(ctx, facts, kinds, memo)
    if b"__device__" in data and "plain-device" not in dropped and tree.has("SGL_DEVICE"):
        _plain_device(ctx, facts, tree)
    spellings = [(n, a) for n, a in tree.aliases if n.encode() in data]
    if (
        spellings and "type-spelling" not in dropped and _SGL_INCLUDE.search(data)
    ):  # (the aliases come with the project headers)
        _type_spellings(ctx, facts, spellings)


@lru_cache(maxsize=256)
def _compiled(pattern: str):
    return re.compile(pattern, re.M)


def _custom_entries(ctx, entries) -> None:
    """The `primitives` setting's entries: each match of an entry's `pattern` (a Python regex
    over the source text, `^`/`$` at line ends) that does not start in a comment or a string
    literal, reported with its `message` (`{text}`: what matched, `{replacement}`)."""
    from kernlint.cpp.lexer import span_at

    data = ctx.data
    text = data.decode("utf-8", "surrogateescape")
    ascii_only = data.isascii()
    spans = None
    found = []
    for entry in entries:
        rx = _compiled(entry["pattern"])
        for m in rx.finditer(text):
            if m.end() > m.start():
                found.append((m.start(), m.end(), entry, m.group()))
    found.sort(key=lambda f: (f[0], f[1]))
    char, byte = 0, 0  # (the byte offset of a character offset, found going forward)
    for start, end, entry, matched in found:
        if ascii_only:
            b_start, b_end = start, end
        else:
            byte += len(text[char:start].encode("utf-8", "surrogateescape"))
            char = start
            b_start = byte
            b_end = byte + len(text[start:end].encode("utf-8", "surrogateescape"))
        if spans is None:
            spans = ctx.literal_spans
        if span_at(spans, b_start) is not None:
            continue  # in a comment or a string literal
        shown = " ".join(matched.split())
        if len(shown) > 60:
            shown = shown[:57] + "..."
        replacement = entry["replacement"]
        message = entry.get("message") or "`{text}`: use `{replacement}`"
        message = message.replace("{text}", shown).replace("{replacement}", replacement)
        ctx.report(b_start, b_end, message)


# The callee names the loop in `check` acts on, other than the error checks (with those, every
# call is visited: launch sites matter before them).
_NAMED = tuple(
    sorted(n.encode() for n in _SHUFFLES | _PDL_CALLS | _HOST_CHECKS | set(_HOST_CALLS))
) + (b"reinterpret_cast",)


def _named_calls(ctx, names=None) -> list:
    """The calls whose callee's simple name (`simple_name`) is one of `_NAMED`, found by
    looking up each occurrence of a name in the tree instead of visiting every call. (A call
    has one callee name at one offset: no call is found twice.)"""
    from kernlint.cpp.facts import calls_named

    text = ctx.normalized.data  # the bytes the tree was parsed from
    root = ctx.tree.root_node
    wanted = _NAMED if names is None else tuple(n.encode() for n in names)
    return [call for name in wanted for call in calls_named(root, text, name)]


def _forceinline(ctx, tree) -> None:
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
        abstraction = "SGL_DEVICE_HOST" if host else "SGL_DEVICE"
        if not tree.has(abstraction):
            continue  # (the tree's headers do not define it: nothing to suggest)
        end = m.end("host") if m.group("host") else m.end()
        start = m.start()
        if not m.group("host") and host:
            start = _HOST_BEFORE.search(data, max(0, m.start() - 40), m.start()).start()
        text = " ".join(data[start:end].decode().split())
        ctx.report(
            start, end, ENTRIES["forceinline"].message.format(text=text, abstraction=abstraction)
        )


def _plain_device(ctx, facts, tree) -> None:
    """`__device__` functions written without `__forceinline__` (nor `__noinline__`): the head's
    own words, in the file's bytes (a head with a macro word in capitals is left alone: the
    macro may say how to inline)."""
    data = ctx.data
    for func in facts.functions:
        if "device" not in func.qualifiers or "global" in func.qualifiers:
            continue
        node = func.node
        declarator = node.child_by_field_name("declarator")
        if declarator is None:
            continue
        # (from the end of the previous sibling: normalization may leave words before the node)
        prev = node.prev_sibling
        head_start = prev.end_byte if prev is not None else node.start_byte
        lead = _COMMENT.sub(b" ", data[head_start : node.start_byte])
        own = data[node.start_byte : declarator.start_byte]
        head = lead + own
        found = _DEVICE_WORD.search(own)
        if (
            found is None
            or b"__forceinline__" in head
            or b"__noinline__" in head
            or _MACRO_WORD.search(head)
        ):
            continue
        host = "host" in func.qualifiers
        abstraction = "SGL_DEVICE_HOST" if host else "SGL_DEVICE"
        if not tree.has(abstraction):
            continue
        start = node.start_byte + found.start()
        end = node.start_byte + found.end()
        if host:
            h = re.search(rb"\b__host__\b", own)
            if h is None:
                continue
            start = node.start_byte + min(found.start(), h.start())
            end = node.start_byte + max(found.end(), h.end())
        text = " ".join(data[start:end].decode().split())
        name = func.name.split("::")[-1] or _declared_name(declarator)
        _report(ctx, start, end, "plain-device", text, name=name, device=abstraction)


def _declared_name(declarator) -> str:
    """`dequant<half2, ...>` of a specialization's declarator (the name before its parameters)."""
    params = declarator.child_by_field_name("parameters")
    end = params.start_byte if params is not None else declarator.end_byte
    text = declarator.text[: end - declarator.start_byte].decode("utf-8", "replace")
    return " ".join(text.split()) or "?"


_SPELLING_NODES = frozenset({"type_identifier", "identifier", "primitive_type"})


def _type_spellings(ctx, facts, spellings) -> None:
    """`__nv_bfloat16` and its kin inside `namespace sglang`, where the headers' alias is in
    scope (the alias is `sglang::bf16_t`)."""
    from kernlint.cpp.parser import nodes_spelled

    text = ctx.normalized.data
    root = ctx.tree.root_node
    seeker = facts.seeker
    found = []
    for spelling, alias in spellings:
        for node in nodes_spelled(root, spelling.encode(), text, seeker=seeker):
            if node.type in _SPELLING_NODES:
                found.append((node, spelling, alias))
    found.sort(key=lambda x: x[0].start_byte)
    inside: dict[int, bool] = {}
    for node, spelling, alias in found:
        if facts.error_ranges and facts.inside_error(node.start_byte, node.end_byte):
            continue
        if _in_sglang_namespace(node, seeker, inside):
            _report(ctx, node.start_byte, node.end_byte, "type-spelling", spelling, alias=alias)


def _in_sglang_namespace(node, seeker, memo: dict) -> bool:
    """Is `node` inside a `namespace sglang` (or `namespace sglang::x`) block?"""
    chain = []
    n = seeker.parent(node)
    answer = False
    while n is not None:
        if n.id in memo:
            answer = memo[n.id]
            break
        chain.append(n.id)
        if n.type == "namespace_definition":
            name = n.child_by_field_name("name")
            if name is not None and name.text.split(b"::")[0].strip() == b"sglang":
                answer = True
                break
        n = seeker.parent(n)
    for i in chain:
        memo[i] = answer
    return answer


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


# -- vector casts -----------------------------------------------------------------------------


def _cast_operand(call):
    """The one argument of `reinterpret_cast<...>(x)` (parentheses removed), or None."""
    args = call.child_by_field_name("arguments")
    values = [a for a in args.named_children if a.type != "comment"] if args is not None else []
    return _unparen(values[0]) if len(values) == 1 else None


def _unparen(node):
    while (
        node is not None and node.type == "parenthesized_expression" and node.named_child_count == 1
    ):
        node = node.named_children[0]
    return node


def _vector_access(cast, operand, facts, kinds, memo) -> bool:
    """Is the vector cast `cast` of `operand` a memory access `AlignedVector` can express?"""
    if operand is None or not _in_device_code(cast, kinds, facts):
        return False
    owner = facts.enclosing_function(cast)
    if operand.type == "pointer_expression":
        op = operand.child_by_field_name("operator")
        if op is not None and op.type == "&":
            # `&frag`, `&frag[k]` of a local array: type punning of registers. `&p[i]` of a
            # pointer (or a `__shared__` array): the address of memory.
            target = _unparen(operand.child_by_field_name("argument"))
            if target is None or target.type != "subscript_expression":
                return False
            base = target
            while base is not None and base.type == "subscript_expression":
                base = _unparen(base.child_by_field_name("argument"))
            if base is None or base.type != "identifier":
                return False
            if _local_kind(owner, base.text, facts, memo) == "register":
                return False
    else:
        # `regs`, `regs + 4` with `T regs[8]` declared in the function: registers.
        base = operand
        while base is not None and base.type == "binary_expression":
            op = base.child_by_field_name("operator")
            if op is None or op.type not in ("+", "-"):
                break
            base = _unparen(base.child_by_field_name("left"))
        if (
            base is not None
            and base.type == "identifier"
            and _local_kind(owner, base.text, facts, memo) == "register"
        ):
            return False
    return not _feeds_hinted_access(cast, owner, facts, memo)


def _local_kind(owner, name: bytes, facts, memo: dict) -> str | None:
    """ "register" when `name` is declared in `owner` as an array (`T regs[4]`), "shared" as a
    `__shared__` array, else None (a pointer, a parameter, a name declared elsewhere)."""
    if owner is None:
        return None
    key = (owner.id, name)
    if key in memo:
        return memo[key]
    found = None
    seeker = facts.seeker
    for ident in _identifiers(owner, name, facts, memo):
        decl = seeker.parent(ident)
        if (
            decl is not None
            and decl.type == "array_declarator"
            and ident.type == "identifier"
            and decl.child_by_field_name("declarator") is not None
            and decl.child_by_field_name("declarator").start_byte == ident.start_byte
        ):
            while decl is not None and decl.type not in ("declaration", "parameter_declaration"):
                decl = seeker.parent(decl)
            if decl is None or decl.type == "parameter_declaration":
                break  # (`T x[]` in a parameter list is a pointer)
            shared = any(
                c.type == "type_qualifier" and c.text == b"__shared__" for c in decl.children
            )
            found = "shared" if shared else "register"
            break
    memo[key] = found
    return found


_WORD = lazy_compile(rb"[A-Za-z_]\w*")


def _identifiers(owner, name: bytes, facts, memo: dict) -> list:
    """The `identifier` nodes spelled `name` in the function `owner`, in document order. The
    function's words are indexed once (one scan of its bytes): a substring search of the
    whole function for each name made many locals in one function quadratic."""
    key = (owner.id, None)
    words = memo.get(key)
    if words is None:
        words = memo[key] = {}
        base = owner.start_byte
        for m in _WORD.finditer(owner.text):
            words.setdefault(m.group(), []).append(base + m.start())
    exact = facts.seeker.exact
    out = []
    for start in words.get(name, ()):
        node = exact(start, start + len(name))
        if node is not None and node.type == "identifier":
            out.append(node)
    return out


def _hinted_call_around(node, facts):
    """The cache-hinted/async call (`_HINTED_CALLEE`) whose arguments hold `node`, looking up
    to the enclosing statement, or None."""
    n = facts.parent(node)
    while n is not None and n.type not in _STATEMENT_END:
        if n.type == "argument_list":
            call = facts.parent(n)
            fn = call.child_by_field_name("function") if call is not None else None
            if fn is not None and _HINTED_CALLEE.search(
                b"".join(fn.text.split()).decode("utf-8", "replace")
            ):
                return call
        n = facts.parent(n)
    return None


def _feeds_hinted_access(cast, owner, facts, memo: dict) -> bool:
    """Does the cast's pointer reach a cache-hinted load or store, an async copy or TMA
    (`_HINTED_CALLEE`): as an argument, or through the locals it initializes
    (`const uint4* stage = reinterpret_cast<...>(...)`; `src = kLoad ? host : device`)?
    (`memo`: the answer for each local, by function and name, found once.)"""
    if _hinted_call_around(cast, facts) is not None:
        return True
    name = _initialized_name(cast, facts) if owner is not None else None
    if name is None:
        return False
    key = (owner.id, b"hinted:" + name)
    found = memo.get(key)
    if found is None:
        found = memo[key] = _local_reaches_hinted_access(owner, name, facts, memo)
    return found


def _local_reaches_hinted_access(owner, name: bytes, facts, memo: dict) -> bool:
    seen: set[bytes] = set()
    frontier = [name]
    depth = 0
    while frontier and depth < 3:
        depth += 1
        following = []
        for local in frontier:
            if local in seen:
                continue
            seen.add(local)
            for ident in _identifiers(owner, local, facts, memo):
                if _hinted_call_around(ident, facts) is not None:
                    return True
                alias = _initialized_name(ident, facts)
                if alias and alias != local:
                    following.append(alias)
        frontier = following
    return False


def _initialized_name(node, facts) -> bytes | None:
    """`x` when `node` is (part of) the value that initializes or is assigned to the local
    `x` (`T* x = node;`, `x = c ? node : y;`), else None."""
    n, child = facts.parent(node), node
    while n is not None and n.type in (
        "parenthesized_expression",
        "conditional_expression",
        "cast_expression",
    ):
        if n.type == "conditional_expression" and child is n.child_by_field_name("condition"):
            return None
        n, child = facts.parent(n), n
    if n is None:
        return None
    if n.type == "init_declarator" and n.child_by_field_name("value") is not None:
        if n.child_by_field_name("value").id != child.id:
            return None
        target = n.child_by_field_name("declarator")
    elif n.type == "assignment_expression":
        if n.child_by_field_name("right") is None or n.child_by_field_name("right").id != child.id:
            return None
        target = n.child_by_field_name("left")
    else:
        return None
    while target is not None and target.type in ("pointer_declarator", "reference_declarator"):
        target = target.child_by_field_name("declarator") or (
            target.named_children[-1] if target.named_children else None
        )
    return target.text if target is not None and target.type == "identifier" else None


def _c_style_casts(ctx, facts, kinds, memo) -> None:
    """`*(uint4*)p`, `((const int4*)p)[i]`: C-style vector casts, judged as `reinterpret_cast`s."""
    text = ctx.normalized.data
    seeker = facts.seeker
    for m in _C_VECTOR_CAST.finditer(text):
        node = seeker.smallest(m.start(), m.end())
        if node is None or node.type != "cast_expression" or node.start_byte != m.start():
            continue
        if facts.error_ranges and facts.inside_error(node.start_byte, node.end_byte):
            continue
        operand = _unparen(node.child_by_field_name("value"))
        if _vector_access(node, operand, facts, kinds, memo):
            cast = " ".join(text[m.start() : m.end()].decode("utf-8", "replace").split())
            _report(ctx, node.start_byte, node.end_byte, "vector-cast", cast)


def _in_device_code(node, kinds, facts) -> bool:
    owner = facts.enclosing_function(node)
    func = kinds.get(owner.id) if owner is not None else None
    return func is not None and bool({"global", "device"} & func.qualifiers)


# -- shuffles ---------------------------------------------------------------------------------


def _operand_type(var, call, facts, memo) -> str | None:
    """The canonical element type (`sgl_headers.canonical_type`) of the shuffled variable, read
    from its declaration in the enclosing function (a parameter or a local), or None."""
    from kernlint.sgl_headers import canonical_type

    if var is None or var.type != "identifier":
        return None
    owner = facts.enclosing_function(call)
    if owner is None:
        return None
    key = (owner.id, b"type:" + var.text)
    if key in memo:
        return memo[key]
    found = None
    name = var.text.decode("utf-8", "replace")
    for p in facts.params_of(owner):
        if p.name == name:
            found = canonical_type(p.type_text) if p.pointer_depth == 0 and not p.is_array else None
            break
    else:
        seeker = facts.seeker
        for ident in _identifiers(owner, var.text, facts, memo):
            decl = seeker.parent(ident)
            if decl is not None and decl.type == "init_declarator":
                if decl.child_by_field_name("declarator").id != ident.id:
                    continue
                decl = seeker.parent(decl)
            elif decl is not None and decl.type == "reference_declarator":
                decl = seeker.parent(decl)
            if decl is None or decl.type != "declaration":
                continue
            type_node = decl.child_by_field_name("type")
            found = canonical_type(type_node.text.decode("utf-8", "replace")) if type_node else None
            break
    memo[key] = found
    return found


def _is_host_only(func) -> bool:
    if "global" in func.qualifiers or "device" in func.qualifiers:
        return False
    head = func.node.text[:200]
    return not head.lstrip().startswith(b"constexpr") and b"constexpr" not in head.split(b"(")[0]


def _text(node) -> bytes:
    return b"".join(node.text.split())


def _reduction_op(call, parent_of):
    """`v += shfl(m, v, k)` -> ("sum", v); `v = max(v, shfl(m, v, k))` -> ("max", v); else
    None. (`parent_of(node)`: `node.parent`. The variable's text is read only once the shape
    around the call is a reduction's: shuffles nested in shuffles are not read again at each
    level.)"""
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
            kind = _COMPOUND_OPS.get(op.type)
            return (kind, values[1]) if kind is not None else None
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
            return kind, values[1]
    return None
