"""## What it does
With `--compile`, reports a kernel whose build uses more registers per thread than its
budget: `register-budget` (64) or `per-file-register-budget`; a comment
`kernlint: register-budget N` just above the kernel; or what
`__launch_bounds__(T, B)` implies (65536 / (T x B), in steps of 8). One finding per kernel
and architecture, naming the worst build.

## Why is this bad?
Registers per thread decide how many threads fit on an SM, and a memory-bound kernel needs
many in flight. SGLang's guide asks for about 64; counts drift as kernels change.

## Example
```cuda
__global__ void pairwise(float* __restrict__ out, const float* __restrict__ in) {
  float v[96];  // 96 values live per thread: about 100 registers
#pragma unroll
  for (int i = 0; i < 96; ++i) v[i] = in[i * blockDim.x + threadIdx.x];
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < 96; ++i)
#pragma unroll
    for (int j = 0; j < i; ++j) s += v[i] * v[j];
  out[threadIdx.x] = s;
}
```

## Use instead
Keep fewer values live, or state the real budget of a compute-bound kernel:
```cuda
// kernlint: register-budget 128
__global__ void pairwise(float* __restrict__ out, const float* __restrict__ in) {
  float v[96];
#pragma unroll
  for (int i = 0; i < 96; ++i) v[i] = in[i * blockDim.x + threadIdx.x];
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < 96; ++i)
#pragma unroll
    for (int j = 0; j < i; ++j) s += v[i] * v[j];
  out[threadIdx.x] = s;
}
```

## Fix safety
No fix: only the author knows whether the kernel is compute-bound.

## What is measured
Kernels that are no template, `compile-instantiate` entries, `load_jit` calls with literal
template arguments, and `--compile-from` binaries; the run's note counts the rest.
"""

from kernlint.compile import by_arch, results_for
from kernlint.model import Rule

RULE = Rule(
    code="RB001",
    name="register-budget-exceeded",
    language="any",
    summary="kernel uses more registers per thread than its budget (`--compile`)",
    severity="warning",
    triggers=(b"__global__", b"jit"),
    needs_tree=False,
)


def check(ctx) -> None:
    for placed in results_for(ctx.source.abspath):
        for arch, usages in by_arch(placed):
            if placed.budget is None:
                continue  # (launch bounds kernlint cannot read: the run's note counts it)
            over = [u for u in usages if u.registers > placed.budget]
            if not over:
                continue
            worst = max(over, key=lambda u: u.registers)
            count = (
                "" if len(usages) == 1 else f" ({len(over)} of {len(usages)} instantiations over)"
            )
            built = f" as `{worst.instantiation}`" if worst.instantiation else ""
            ctx.report(
                placed.start,
                placed.end,
                f"kernel `{placed.name}` uses {worst.registers} registers per thread{built} on "
                f"{arch}{count}; budget {placed.budget} ({placed.budget_from}): keep fewer "
                "values live per thread, or give the kernel its own budget "
                "(`kernlint: register-budget N`, `__launch_bounds__`)",
            )
