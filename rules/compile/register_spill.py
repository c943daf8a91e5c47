"""## What it does
With `--compile` (or `compile = true`), reports a kernel whose build spills registers to local
memory or keeps data in local memory (a stack frame: a local array indexed at run time, a
call that is not inlined). One finding per kernel and architecture, naming the worst build.

## Why is this bad?
Local memory lives in device memory behind the L1 cache: every spill is a load or store the
kernel did not ask for, in a loop often. SGLang's guide: prefer recomputing a value over
letting it spill.

## Example
```cuda
__global__ void pick(float* out, const int* idx) {
  float table[64];
  for (int i = 0; i < 64; ++i) table[i] = i * 0.5f;
  out[threadIdx.x] = table[idx[threadIdx.x] & 63];  // indexed at run time: local memory
}
```

## Use instead
```cuda
__global__ void pick(float* out, const int* idx) {
  out[threadIdx.x] = (idx[threadIdx.x] & 63) * 0.5f;  // recomputed
}
```

## Fix safety
No fix.

## What is measured
As for `register-budget-exceeded`: non-template kernels, `compile-instantiate` entries,
`load_jit` calls with literal template arguments, and `--compile-from BUILD_DIR` binaries (for
which cuobjdump reports local memory, not spills apart).
"""

from kernlint.compile import by_arch, results_for
from kernlint.model import Rule

RULE = Rule(
    code="RB002",
    name="register-spill",
    language="any",
    summary="kernel spills registers or uses local memory (`--compile`)",
    severity="warning",
    triggers=(b"__global__", b"jit"),
    needs_tree=False,
)


def _bytes(usage) -> int:
    return usage.spill_stores + usage.spill_loads + usage.local_bytes


def check(ctx) -> None:
    for placed in results_for(ctx.source.abspath):
        for arch, usages in by_arch(placed):
            bad = [u for u in usages if _bytes(u)]
            if not bad:
                continue
            worst = max(bad, key=_bytes)
            if worst.spill_stores or worst.spill_loads:
                what = (
                    f"spills {worst.spill_stores} bytes (stores) and {worst.spill_loads} bytes "
                    "(loads)"
                )
            else:
                what = f"uses {worst.local_bytes} bytes of local memory per thread"
            count = "" if len(usages) == 1 else f" ({len(bad)} of {len(usages)} instantiations)"
            ctx.report(
                placed.start,
                placed.end,
                f"kernel `{placed.name}` {what}"
                + (f" as `{worst.instantiation}`" if worst.instantiation else "")
                + f" on {arch}{count}: "
                "recompute values instead of keeping them live, and index local arrays only "
                "with compile-time constants",
            )
