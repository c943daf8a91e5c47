"""Reports raw CUDA kernel launches in JIT sources.

## What it does
In JIT sources, reports each triple-chevron launch `kernel<<<grid, block, smem, stream>>>(...)`
and each call to `cudaLaunchKernel`, `cudaLaunchKernelEx`, `cudaLaunchKernelExC` or
`cudaLaunchCooperativeKernel`, and to their HIP counterparts (`hipLaunchKernel`,
`hipLaunchKernelEx`, `hipLaunchKernelExC`, `hipLaunchCooperativeKernel`, `hipLaunchKernelGGL`:
`host::LaunchKernel` serves ROCm builds too). A `<<<...>>>` in the body of a `#define` is
reported on the chevrons, naming the macro (a launch API called inside a macro body is not
seen).

Never reported inside the project abstractions' own implementation (`include/sgl_kernel/**`,
where `host::LaunchKernel` itself calls `cudaLaunchKernelEx`), inside a namespace of a
third-party library the code extends (a CUTLASS device adapter in `cutlass::gemm::device`
launches the CUTLASS way), nor in code the parser could not understand. Files under the JIT
roots that are not SGLang JIT code (torch extensions, which have no `host::LaunchKernel`, and
marked verbatim copies; see the `jit-exempt-markers` setting) are not checked.

## Why is this bad?
SGLang's JIT kernels launch through `host::LaunchKernel(grid, block, device)(kernel, args...)`.
It picks the stream of the tensors' device, checks the launch error with the file and line of
the call, and carries the launch attributes the project relies on (`.enable_pdl(...)` for
programmatic dependent launch, dynamic shared memory). A raw launch silently runs on the wrong
stream or drops launch errors.

## Example
```cpp
namespace sglang {
void launch(const float* in, float* out, int32_t n, cudaStream_t stream) {
  scale_kernel<<<(n + 255) / 256, 256, 0, stream>>>(out, in, n);
}
}  // namespace sglang
```

## Use instead
```cpp
namespace sglang {
void launch(const float* in, float* out, int32_t n, DLDevice device) {
  host::LaunchKernel((n + 255) / 256, 256, device)(scale_kernel, out, in, n);
}
}  // namespace sglang
```

## Fix safety
No automatic fix: `LaunchKernel` takes a device rather than a stream, so the launcher's
signature usually changes too.
"""

from __future__ import annotations

import re

from kernlint.cpp.facts import calls_named, in_abstractions, namespace_components
from kernlint.jitscope import LIBRARY_NAMESPACES
from kernlint.model import Rule

RULE = Rule(
    code="CU006",
    name="raw-kernel-launch",
    language="cpp",
    summary="raw `<<<...>>>` or `cudaLaunchKernel*` launch instead of `host::LaunchKernel`",
    scope="jit",
    triggers=(b"<<<", b"cudaLaunch", b"hipLaunch"),
)

LAUNCH_APIS = frozenset(
    {
        "cudaLaunchKernel",
        "cudaLaunchKernelEx",
        "cudaLaunchKernelExC",
        "cudaLaunchCooperativeKernel",
        "hipLaunchKernel",
        "hipLaunchKernelEx",
        "hipLaunchKernelExC",
        "hipLaunchCooperativeKernel",
        "hipLaunchKernelGGL",
    }
)


def check(ctx) -> None:
    if in_abstractions(ctx.source.abspath or ctx.source.path):
        return
    facts = ctx.facts
    # The calls to look at: those holding a `<<<...>>>`, and those whose callee is named like a
    # launch API (found from the name's occurrences, not by visiting every call).
    calls = [facts.parent(n) for n in facts.nodes("kernel_call_syntax")]
    text = ctx.normalized.data  # the bytes the tree was parsed from
    for api in LAUNCH_APIS:
        if api.encode() in text:
            calls += calls_named(facts.root, text, api.encode())
    seen = set()
    for node in calls:
        if node is None or node.type != "call_expression" or node.id in seen:
            continue
        seen.add(node.id)
        if facts.error_ranges and facts.inside_error(node.start_byte, node.end_byte):
            continue  # never fire on text the parser could not understand
        if _in_library_namespace(node, facts.parent):
            continue  # code extending a library (a CUTLASS device adapter) launches its way
        _launch(node, ctx)
    if b"<<<" in ctx.data and b"define" in ctx.data:
        _macro_launches(ctx)


def _in_library_namespace(node, parent_of) -> bool:
    """Is the node inside a namespace whose outermost named part is a third-party library's
    (`namespace cutlass::gemm::device {`)? (`parent_of`: the facts' `parent`, known at once
    where `node.parent` goes down from the root: the square of the depth per launch.)"""
    outer = None
    node = parent_of(node)
    while node is not None:
        if node.type == "namespace_definition":
            parts = [p for p in namespace_components(node) if p]
            if parts:
                outer = parts[0]
        node = parent_of(node)
    return outer in LIBRARY_NAMESPACES


def _launch(node, ctx) -> None:
    fn = node.child_by_field_name("function")
    chevrons = next((c for c in node.children if c.type == "kernel_call_syntax"), None)
    if chevrons is not None and fn is not None:
        name = " ".join(ctx.text(fn).split())
        if len(name) > 40:
            name = name.split("<")[0] + "<...>"
        ctx.report(
            fn.start_byte,
            chevrons.end_byte,
            f"raw launch of `{name}`: use "
            f"`host::LaunchKernel(grid, block, device)({name}, args...)`",
        )
        return
    if fn is None:
        return
    name = ctx.text(fn).lstrip(":")
    if name in LAUNCH_APIS:
        ctx.report_node(
            fn,
            f"`{name}`: launch through `host::LaunchKernel(grid, block, device)(kernel, args...)`",
        )


_DEFINE = re.compile(rb"[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)")
_CHEVRONS = re.compile(rb"<<<(?:[^<>;{}]|<[^<>;{}]*>)*?>>>", re.S)


def _macro_launches(ctx) -> None:
    """`<<<...>>>` in the body of a `#define` (the tree holds a macro body as opaque text):
    reported on the chevrons, naming the macro."""
    data = ctx.data
    spans = None
    for m in _CHEVRONS.finditer(data):
        start = _logical_line_start(data, m.start())
        define = _DEFINE.match(data, start)
        if define is None or define.end() > m.start():
            continue
        if spans is None:
            spans = ctx.literal_spans
        from kernlint.cpp.lexer import span_at

        if span_at(spans, m.start()) is not None:
            continue  # in a comment or a string literal
        macro = define.group(1).decode()
        ctx.report(
            m.start(),
            m.end(),
            f"raw launch in the body of macro `{macro}`: use "
            f"`host::LaunchKernel(grid, block, device)(kernel, args...)`",
        )


def _logical_line_start(data: bytes, pos: int) -> int:
    """The start of the logical line holding `pos` (physical lines joined by a backslash)."""
    start = data.rfind(b"\n", 0, pos) + 1
    while start > 0:
        prev = data.rfind(b"\n", 0, start - 1) + 1
        line = data[prev : start - 1].rstrip(b"\r")
        if not line.endswith(b"\\"):
            break
        start = prev
    return start
