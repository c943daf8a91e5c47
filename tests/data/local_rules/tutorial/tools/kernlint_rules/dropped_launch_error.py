"""Reports a kernel launch whose `cudaError_t` is dropped.

## What it does
Reports a call to `cudaLaunchKernel`, `cudaLaunchKernelEx`, `cudaLaunchKernelExC` or
`cudaLaunchCooperativeKernel` that is a statement of its own, its result thrown away.

## Why is this bad?
A launch that fails (too much shared memory, a bad configuration, no kernel image for the
device) launches nothing and says so only in its result: the caller goes on with outputs
nobody wrote. FlashInfer passes the result up with `FLASHINFER_CUDA_CALL(...)` in functions
returning `cudaError_t`, or throws with `FLASHINFER_CUDA_CHECK(...)`.

## Example
```cpp
cudaError_t Launch(cudaLaunchConfig_t config, Params params) {
  cudaLaunchKernelEx(&config, kernel, params);
  return cudaSuccess;
}
```

## Use instead
```cpp
cudaError_t Launch(cudaLaunchConfig_t config, Params params) {
  FLASHINFER_CUDA_CALL(cudaLaunchKernelEx(&config, kernel, params));
  return cudaSuccess;
}
```

## Fix safety
In a function returning `cudaError_t` (not in a lambda), the fix wraps the call in
`FLASHINFER_CUDA_CALL(...)`. It is unsafe: the function now returns when the launch fails.
"""

from kernlint.model import Edit, Fix, Rule

RULE = Rule(
    code="FI001",
    name="dropped-launch-error",
    language="cpp",
    summary="the `cudaError_t` of a kernel launch is dropped",
    fix="unsafe",
    triggers=(b"cudaLaunch",),
    node_types=("call_expression",),
)
LAUNCHES = {
    "cudaLaunchKernel",
    "cudaLaunchKernelEx",
    "cudaLaunchKernelExC",
    "cudaLaunchCooperativeKernel",
}


def visit(call, ctx):
    name = ctx.text(call.child_by_field_name("function")).lstrip(":")
    if name not in LAUNCHES or call.parent.type != "expression_statement":
        return
    scope = call.parent  # the function (or lambda) the launch is in
    while scope.type not in ("function_definition", "lambda_expression", "translation_unit"):
        scope = scope.parent
    returns = scope.child_by_field_name("type") if scope.type == "function_definition" else None
    fix = None  # FLASHINFER_CUDA_CALL returns the error: only where a cudaError_t is returned
    if returns is not None and ctx.text(returns) == "cudaError_t":
        wrapped = f"FLASHINFER_CUDA_CALL({ctx.text(call)})"
        fix = Fix((Edit(call.start_byte, call.end_byte, wrapped),), "unsafe", "Check the launch")
    message = f"the `cudaError_t` of `{name}` is dropped: check it with FLASHINFER_CUDA_CALL"
    ctx.report_node(call, message + " or FLASHINFER_CUDA_CHECK", fix)
