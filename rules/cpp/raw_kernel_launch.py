"""Reports raw CUDA kernel launches in JIT sources.

## What it does
In JIT sources, reports each triple-chevron launch `kernel<<<grid, block, smem, stream>>>(...)`
and each call to `cudaLaunchKernel`, `cudaLaunchKernelEx`, `cudaLaunchKernelExC` or
`cudaLaunchCooperativeKernel`. The finding sits on the launch (`kernel<<<...>>>` or the
function name), not on the enclosing function.

Never reported inside the project abstractions' own implementation (`include/sgl_kernel/**`,
where `host::LaunchKernel` itself calls `cudaLaunchKernelEx`), nor in code the parser could not
understand.

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

from kernlint.cpp.facts import calls_named, in_abstractions
from kernlint.model import Rule

RULE = Rule(
    code="CU006",
    name="raw-kernel-launch",
    language="cpp",
    summary="raw `<<<...>>>` or `cudaLaunchKernel*` launch instead of `host::LaunchKernel`",
    scope="jit",
    triggers=(b"<<<", b"cudaLaunch"),
)

LAUNCH_APIS = frozenset(
    {"cudaLaunchKernel", "cudaLaunchKernelEx", "cudaLaunchKernelExC", "cudaLaunchCooperativeKernel"}
)


def check(ctx) -> None:
    if in_abstractions(ctx.source.abspath or ctx.source.path):
        return
    facts = ctx.facts
    # The calls to look at: those holding a `<<<...>>>`, and those whose callee is named like a
    # launch API (found from the name's occurrences, not by visiting every call).
    calls = [n.parent for n in facts.nodes("kernel_call_syntax")]
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
        _launch(node, ctx)


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
