"""Sweep the reference CUDA kernel's instantiations on a GPU, to choose the launcher's policy.

    python bench/reference_sweep.py [--out DIR] [--shapes 16384x4096,...] [--l2 fresh|flush]

For bf16 rows x hidden shapes, times every instantiation (one-pass with 1, 2 or 4 16-byte
vectors per thread, with or without prefetch; two-pass with 1, 2 or 4) next to
torch.compile (specialized to the shape), and next to `compile_out`, its form that writes the
kernels' `out`, so that the comparison shares every buffer. The method is that of
bench/reference_kernels.py (fresh inputs for each run, or the L2 flushed before each run with
`--l2 flush`; CUDA events and the kernels' own CUPTI time; ROUNDS rounds, the variants in a
rotating order in each, since what is measured first after a change of state measures slower;
median over the rounds). Every variant is first checked against eager torch on the shape. Prints one line
per shape: `[kernel us, event us]` for each variant, and the fastest variant by each.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
sys.path.insert(0, HERE)

from reference_kernels import EPS  # noqa: E402

VARIANTS = [(1, True), (1, False), (2, True), (2, False), (4, True), (4, False)]
TWO_PASS = [1, 2, 4]  # vectors per thread of the two-pass kernel
SHAPES = [(r, h) for h in (4096, 8192) for r in (1, 16, 256, 4096, 16384)]

# Experiments beside the instantiations (inside namespace sglang).
EXPERIMENTS = """\
// An experiment, not the reference: the v1 kernel with streaming cache hints on x/residual.
__global__ void hinted_kernel(bf16_t* __restrict__ out, bf16_t* __restrict__ residual,
                              const bf16_t* __restrict__ x, const bf16_t* __restrict__ weight,
                              int64_t hidden, float eps) {
  __shared__ float smem[32];
  const int64_t row = static_cast<int64_t>(blockIdx.x) * hidden;
  const int64_t i = threadIdx.x;
  const int64_t n = hidden / 8;
  float sq = 0.0f;
  int4 xr, rr, wr, orr;
  if (i < n) {
    xr = __ldcs(reinterpret_cast<const int4*>(x + row) + i);
    rr = __ldcs(reinterpret_cast<const int4*>(residual + row) + i);
    wr = __ldg(reinterpret_cast<const int4*>(weight) + i);
    auto* xv = reinterpret_cast<bf16_t*>(&xr);
    auto* rv = reinterpret_cast<bf16_t*>(&rr);
    for (int j = 0; j < 8; ++j) {
      rv[j] = __float2bfloat16_rn(__bfloat162float(xv[j]) + __bfloat162float(rv[j]));
      const float f = __bfloat162float(rv[j]);
      sq += f * f;
    }
    __stcs(reinterpret_cast<int4*>(residual + row) + i, rr);
  }
  const float inv = rsqrtf(fused_add_rmsnorm::block_sum(sq, smem) / hidden + eps);
  if (i < n) {
    auto* rv = reinterpret_cast<bf16_t*>(&rr);
    auto* wv = reinterpret_cast<bf16_t*>(&wr);
    auto* ov = reinterpret_cast<bf16_t*>(&orr);
    for (int j = 0; j < 8; ++j) ov[j] = __float2bfloat16_rn(__bfloat162float(rv[j]) * inv * __bfloat162float(wv[j]));
    __stcs(reinterpret_cast<int4*>(out + row) + i, orr);
  }
}
void hinted(tvm::ffi::TensorView out, tvm::ffi::TensorView residual, tvm::ffi::TensorView x,
            tvm::ffi::TensorView weight, double eps) {
  const int64_t h = x.size(1);
  const auto threads = static_cast<uint32_t>((h / 8 + 31) / 32 * 32);
  host::LaunchKernel(static_cast<uint32_t>(x.size(0)), threads, x.device())(
      hinted_kernel, static_cast<bf16_t*>(out.data_ptr()), static_cast<bf16_t*>(residual.data_ptr()),
      static_cast<const bf16_t*>(x.data_ptr()), static_cast<const bf16_t*>(weight.data_ptr()), h,
      static_cast<float>(eps));
}
TVM_FFI_DLL_EXPORT_TYPED_FUNC(sweep_hinted, hinted);

// An experiment, not the reference: the same instantiation launched with `<<<>>>` on the same
// stream, to separate the kernel from the launch path.
void raw(tvm::ffi::TensorView out, tvm::ffi::TensorView residual, tvm::ffi::TensorView x,
         tvm::ffi::TensorView weight, double eps) {
  const int64_t h = x.size(1);
  const auto threads = static_cast<uint32_t>((h / 8 + 31) / 32 * 32);
  const auto stream = host::LaunchKernel::resolve_device(x.device());
  fused_add_rmsnorm_kernel<bf16_t, 8, 1, true, false><<<static_cast<uint32_t>(x.size(0)), threads, 0, stream>>>(
      static_cast<bf16_t*>(out.data_ptr()), static_cast<bf16_t*>(residual.data_ptr()),
      static_cast<const bf16_t*>(x.data_ptr()), static_cast<const bf16_t*>(weight.data_ptr()), h,
      static_cast<float>(eps));
}
TVM_FFI_DLL_EXPORT_TYPED_FUNC(sweep_raw, raw);
"""


def _variant_specs():
    """{name: (16-byte vectors per thread, prefetch, two-pass)}: v2p is one-pass with two
    vectors per thread and prefetch, v1t two-pass with one."""
    out = {f"v{v}{'p' if p else ''}": (v, p, False) for v, p in VARIANTS}
    out.update({f"v{v}t": (v, False, True) for v in TWO_PASS})
    return out


VARIANT_SPECS = _variant_specs()


def _bind(fn, out, residual, x, weight):
    return lambda: fn(out, residual, x, weight, EPS)


def parse_shapes(text):
    """`16x4096,256x8192` -> [(16, 4096), (256, 8192)]: positive sizes, two per shape."""
    shapes = []
    for item in text.split(","):
        parts = item.split("x")
        if len(parts) != 2 or not all(p.isdigit() and int(p) > 0 for p in parts):
            raise argparse.ArgumentTypeError(f"expected ROWSxHIDDEN[,...], got {text!r}")
        shapes.append((int(parts[0]), int(parts[1])))
    return shapes


def _check(calls, out, residual, x, weight, reference):
    """Every variant against eager torch on this shape: residual bit-exact, out within 0.07."""
    saved = residual.clone()
    expected_residual = saved.clone()
    expected_out = reference(x, expected_residual, weight)
    for name, call in calls.items():
        residual.copy_(saved)
        got = call()  # torch.compile returns its output; the kernels write `out`
        got = out if got is None else got
        ok = (
            residual.equal(expected_residual)
            and (got.float() - expected_out.float()).abs().max() < 0.07
        )
        if not ok:
            print("MISMATCH", name, tuple(x.shape), flush=True)
    residual.copy_(saved)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument(
        "--shapes",
        type=parse_shapes,
        default=SHAPES,
        help="comma-separated ROWSxHIDDEN (default: the benchmark's shapes)",
    )
    ap.add_argument(
        "--l2",
        choices=("fresh", "flush"),
        default="fresh",
        help="how each run avoids the L2, as the benchmark's two tables (default: fresh inputs)",
    )
    args = ap.parse_args()
    import torch
    import tvm_ffi
    from reference_kernels import (
        compiled_torch,
        fresh_calls,
        rotating_medians,
        torch_eager,
        torch_eager_out,
    )
    from reference_support import compile_reference, instantiations_wrapper

    wrapper = instantiations_wrapper(
        {f"sweep_{name}": spec for name, spec in VARIANT_SPECS.items()}, EXPERIMENTS
    )
    major, minor = torch.cuda.get_device_capability()
    build = os.path.join(args.out, "sweep_build")
    compile_reference(major * 10 + minor, build, True, wrapper, "sweep")
    module = tvm_ffi.load_module(os.path.join(build, "sweep.so"))
    flush = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")
    compiled = compiled_torch()
    compiled_out = compiled_torch(torch_eager_out)
    results = []

    def calls_for(hidden, weight, out, x, residual):
        calls = {}
        for name, (v, _, _) in VARIANT_SPECS.items():
            if -(-hidden // 8 // v) <= 1024:
                calls[name] = _bind(getattr(module, f"sweep_{name}"), out, residual, x, weight)
        if hidden // 8 <= 1024:
            for name in ("hinted", "raw"):
                calls[name] = _bind(getattr(module, f"sweep_{name}"), out, residual, x, weight)
        calls["compile"] = functools.partial(compiled, x, residual, weight)
        calls["compile_out"] = functools.partial(compiled_out, x, residual, weight, out)
        return calls

    for rows, hidden in args.shapes:
        x = torch.randn(rows, hidden, dtype=torch.bfloat16, device="cuda")
        residual = torch.randn_like(x)
        weight = torch.rand(hidden, dtype=torch.bfloat16, device="cuda") + 0.5
        out = torch.empty_like(x)
        calls = calls_for(hidden, weight, out, x, residual)
        _check(calls, out, residual, x, weight, torch_eager)
        if args.l2 == "fresh":
            # As the benchmark's main table: the next of K (x, residual) pairs per run.
            calls = fresh_calls(rows, hidden, functools.partial(calls_for, hidden, weight, out))
            medians = rotating_medians(calls, None, 30, kernel_reps=30)
        else:
            medians = rotating_medians(calls, flush, 30, kernel_reps=30)
        row = {"rows": rows, "hidden": hidden}
        for name, (us, kern) in medians.items():
            row[name] = [round(kern, 2), round(us, 2)]
        variants = [k for k in row if k in VARIANT_SPECS]
        best_kernel = min(variants, key=lambda k: row[k][0])
        best_events = min(variants, key=lambda k: row[k][1])
        print(json.dumps(row), "best kernel:", best_kernel, "events:", best_events, flush=True)
        results.append(row)
    with open(os.path.join(args.out, f"sweep_{args.l2}.json"), "w") as fh:
        json.dump(results, fh, indent=1)


if __name__ == "__main__":
    main()
