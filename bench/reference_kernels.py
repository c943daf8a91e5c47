"""Benchmark the reference fused add + RMSNorm kernels on a GPU (bf16).

    python bench/reference_kernels.py [--out DIR] [--quick]

For rows in 1, 16, 256, 4096, 16384 and hidden in 4096, 8192: achieved bandwidth of the CUDA
kernel, the Triton kernel, torch eager and torch.compile, next to the device's measured
device-to-device copy bandwidth. Each time is the median of many runs measured with CUDA
events, the GPU kept busy before each run so that host overhead is hidden. The L2 cache is
defeated two ways, each with its own table:

- fresh inputs (the main table): every run reads its own x and residual, the next of K
  pairs of buffers (K from 2 up, at least 128 MiB per tensor over the K), so the inputs of a
  run were last touched K runs earlier, and more than the L2 holds has been touched since.
  The output is one buffer: the CUDA kernel's `out`, and for the others the block that the
  caching allocator returns for their output on every call. What the L2 holds is what the
  previous runs wrote, as in a stream of calls.
- flushed L2: one set of buffers; before every run a 512 MiB write evicts them, which leaves
  the L2 full of dirty lines that are not the kernel's.

Where buffers lie in memory moves a bandwidth-bound kernel's time by as much as 0.3% (more for
torch.compile's own output block at some shapes: docs/benchmarks.md, session 11). So the
fresh-input runs also time torch.compile of the op with an `out` argument (inductor fuses the
copy into its kernel's store: one kernel, the same source), writing the CUDA kernel's `out`
from the same pairs: a third table compares the two kernels on the same buffers.

The implementations are measured in rounds, twice as many as there are implementations, in a
rotating order (the first one measured after a change of state measures slower), and the
median over the rounds is reported.
Next to it, each implementation's kernel time alone (CUPTI, through torch.profiler), and in
how many of the rounds the CUDA kernel was faster than torch.compile, by events and by kernel
time: a ratio of medians near 1.00x says little on its own; all rounds or none says which is
faster.
Bytes counted: read x, read residual, write residual, write out (2 bytes each per element), and
the weight once.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, HERE)

from rotation import in_rotation  # noqa: E402

ROWS = (1, 16, 256, 4096, 16384)
ROUNDS = 4  # each implementation measured once in each position
HIDDEN = (4096, 8192)
EPS = 1e-6
POOL_BYTES = 128 << 20  # fresh inputs: the least each of x and residual spans over K sets
# GPU spin before each run, in clock cycles, long enough to cover the host's launch path:
# after a flush (itself ~150 us of GPU time) ~100 us; with fresh inputs nothing else covers
# it, and torch eager's ~140 us of host time per call would otherwise be measured.
SPIN_CYCLES = {"flush": 200_000, "fresh": 1_000_000}


def load_triton():
    path = os.path.join(ROOT, "fixtures", "reference", "triton", "fused_add_rmsnorm.py")
    spec = importlib.util.spec_from_file_location("reference_triton", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def torch_eager(x, residual, weight):
    import torch

    z = x + residual
    residual.copy_(z)
    zf = z.float()
    return (zf * torch.rsqrt(zf.pow(2).mean(-1, keepdim=True) + EPS) * weight.float()).to(x.dtype)


def torch_eager_out(x, residual, weight, out):
    """`torch_eager` writing a given `out`: what torch.compile compiles for the same-buffer
    comparison."""
    out.copy_(torch_eager(x, residual, weight))


def _before_run(flush):
    """What precedes every timed run: the L2 flush (unless `flush` is None, for fresh inputs),
    then the GPU spin."""
    import torch

    if flush is not None:
        flush.zero_()
    torch.cuda._sleep(SPIN_CYCLES["fresh" if flush is None else "flush"])


def median_ms(fn, flush, reps):
    """Median GPU time of `fn` in ms. Before each run the L2 is flushed (unless `flush` is
    None: `fn` then brings its own fresh inputs, see `cycling`) and the GPU is kept busy
    (a spin of `SPIN_CYCLES`) so that the host-side launch path of every implementation (Python,
    argument conversion, validation) is hidden: this measures the kernels, not the launchers.
    Host overhead is measured separately by `host_us`."""
    import torch

    start = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    end = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for _ in range(5):  # warm-up (compilation, caches)
        fn()
    torch.cuda.synchronize()
    for i in range(reps):
        _before_run(flush)
        start[i].record()
        fn()
        end[i].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(start, end, strict=True))


def kernel_us(fn, flush, reps=60):
    """Median duration of the kernels `fn` launches, from CUPTI (torch.profiler), at the GPU's
    running clocks: the kernel alone, without the ~1 us between a launch and the kernel's start
    that CUDA events include for every implementation alike. Same L2 flush (or none, as in
    `median_ms`) and spin before each run as `median_ms`."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            _before_run(flush)
            fn()
        torch.cuda.synchronize()
    events = sorted(
        (e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA),
        key=lambda e: e.time_range.start,
    )
    runs = run_durations((e.name, e.time_range.end - e.time_range.start) for e in events)
    return statistics.median(runs) if runs else float("nan")


def run_durations(kernels) -> list[float]:
    """The GPU time of each run, from (kernel name, duration) in launch order. Each run is
    [a flush (a fill kernel)], a spin, then the implementation's kernels: a run ends at the
    next fill or spin, or at the end; kernels before the first spin are not counted."""
    runs, current, after_spin = [], 0.0, False
    for name, duration in kernels:
        name = name.lower()
        boundary = "spin_kernel" in name or "fill" in name
        if boundary and after_spin:
            runs.append(current)
        if boundary:
            after_spin, current = "spin_kernel" in name, 0.0
        elif after_spin:
            current += duration
    if after_spin:
        runs.append(current)
    return runs


def host_us(fn, reps=200):
    """Median host time of one call (enqueue only), in microseconds."""
    import time

    import torch

    times = []
    for _ in range(reps):
        torch.cuda._sleep(1_000_000)  # keep the GPU busy so the call never blocks
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e6)
    torch.cuda.synchronize()
    return statistics.median(times)


def rotating_samples(impls, flush, reps, kernel_reps=60, rounds=ROUNDS):
    """{name: (event us per round, kernel us per round)}: the implementations interleaved in
    each round `in_rotation`."""
    samples: dict[str, tuple[list, list]] = {n: ([], []) for n in impls}
    for name in in_rotation(impls, rounds):
        samples[name][0].append(median_ms(impls[name], flush, reps) * 1e3)
        samples[name][1].append(kernel_us(impls[name], flush, kernel_reps))
    return samples


def rotating_medians(impls, flush, reps, kernel_reps=60) -> dict[str, tuple[float, float]]:
    """{name: (event us, kernel us)} for each implementation: medians over ROUNDS rounds of
    `rotating_samples`."""
    samples = rotating_samples(impls, flush, reps, kernel_reps)
    return {
        n: (statistics.median(us), statistics.median(kern)) for n, (us, kern) in samples.items()
    }


def rounds_faster(ours: list[float], theirs: list[float]) -> int:
    """In how many rounds `ours` took less time than `theirs` (both measured in each round)."""
    if len(ours) != len(theirs):
        raise ValueError("one sample per round for both")
    return sum(a < b for a, b in zip(ours, theirs, strict=True))


def implementations(kernels, x, residual, weight, out, same_out=False) -> dict:
    """{name: a call with no arguments} for each implementation on these tensors (`kernels`:
    from `load_kernels`); the CUDA kernel writes `out`, the others return their output. With
    `same_out`, also `torch_compile_out`: torch.compile writing `out` as the CUDA kernel does."""
    impls = {
        "cuda": lambda: kernels["cuda"](out, residual, x, weight, EPS, False),
        "triton": lambda: kernels["triton"](x, residual, weight, EPS),
        "torch_eager": lambda: torch_eager(x, residual, weight),
        "torch_compile": lambda: kernels["compiled"](x, residual, weight),
    }
    if same_out:
        impls["torch_compile_out"] = lambda: kernels["compiled_out"](x, residual, weight, out)
    return impls


def fresh_sets(rows, hidden, pool_bytes=POOL_BYTES) -> int:
    """How many pairs of (x, residual) buffers the fresh-input runs rotate through: enough
    that each tensor spans at least `pool_bytes` over the pairs, and at least 2."""
    per_set = rows * hidden * 2
    return max(2, -(-pool_bytes // per_set))


def cycling(calls):
    """A call with no arguments that runs calls[0], calls[1], ... in turn, from the start again
    after the last (each on its own buffers: fresh inputs for every run)."""
    calls = list(calls)
    if not calls:
        raise ValueError("nothing to cycle through")
    state = {"next": 0}

    def call():
        i = state["next"]
        state["next"] = (i + 1) % len(calls)
        return calls[i]()

    return call


def fresh_calls(rows, hidden, calls_for, device="cuda", pool_bytes=POOL_BYTES) -> dict:
    """{name: a call with no arguments that runs on the next (x, residual) pair each time}:
    `fresh_sets` pairs of bf16 buffers, and `calls_for(x, residual)` gives one pair's calls,
    {name: call}. The buffers live as long as the calls do."""
    import torch

    sets = fresh_sets(rows, hidden, pool_bytes)
    pools = [torch.randn(sets, rows, hidden, dtype=torch.bfloat16, device=device) for _ in "xr"]
    per_set = [calls_for(pools[0][i], pools[1][i]) for i in range(sets)]
    return {name: cycling(calls[name] for calls in per_set) for name in per_set[0]}


def compiled_torch(fn=torch_eager):
    """torch.compile of the eager op (or `fn`), one graph per shape, each specialized to its
    shape: without dynamic=False, dynamo recompiles the second shape it sees with symbolic
    sizes, and every later shape runs that generic kernel (1.6x slower at 16384 x 8192 on an
    H200)."""
    import torch

    torch._dynamo.config.cache_size_limit = 64
    return torch.compile(fn, dynamic=False)


def load_kernels(build: str) -> dict:
    """The bf16 CUDA kernel (built into `build` for this GPU), the Triton kernel and
    `compiled_torch()`, as `implementations` takes them."""
    import torch
    import tvm_ffi
    from reference_support import compile_reference

    major, minor = torch.cuda.get_device_capability()
    compile_reference(major * 10 + minor, build, shared=True)
    module = tvm_ffi.load_module(os.path.join(build, "fused_add_rmsnorm.so"))
    return {
        "cuda": module.fused_add_rmsnorm_bf16,
        "triton": load_triton().fused_add_rmsnorm,
        "compiled": compiled_torch(),
        "compiled_out": compiled_torch(torch_eager_out),
    }


def measure_shape(rows, hidden, kernels, flush, reps):
    """One shape's row of both tables: fresh inputs (keys `fresh_<name>_us`, ...) and the
    flushed L2 (keys `<name>_us`, ...)."""
    import torch

    weight = torch.rand(hidden, dtype=torch.bfloat16, device="cuda") + 0.5
    nbytes = 4 * rows * hidden * 2 + hidden * 2
    row = {"rows": rows, "hidden": hidden}

    out = torch.empty(rows, hidden, dtype=torch.bfloat16, device="cuda")
    fresh = fresh_calls(
        rows, hidden, lambda x, r: implementations(kernels, x, r, weight, out, same_out=True)
    )
    row["fresh_sets"] = fresh_sets(rows, hidden)
    row["fresh_rounds"] = 2 * len(fresh)  # each implementation twice in each position
    samples = rotating_samples(fresh, None, reps, rounds=row["fresh_rounds"])
    _summarize(row, "fresh_", samples, nbytes)
    del fresh

    x = torch.randn(rows, hidden, dtype=torch.bfloat16, device="cuda")
    residual = torch.randn_like(x)
    impls = implementations(kernels, x, residual, weight, out)
    row["rounds"] = 2 * len(impls)
    samples = rotating_samples(impls, flush, reps, rounds=row["rounds"])
    _summarize(row, "", samples, nbytes)
    if rows == 1:
        for name, fn in impls.items():
            row[name + "_host_us"] = host_us(fn)
    return row


def _summarize(row, prefix, samples, nbytes):
    """Medians over the rounds, bandwidth, and the rounds in which the CUDA kernel beat
    torch.compile (by events and by kernel time), into `row` under `prefix`; where
    `torch_compile_out` was measured, the rounds against it too (`..._same_out`)."""
    for name, (us, kern) in samples.items():
        us, kern = statistics.median(us), statistics.median(kern)
        row[prefix + name + "_us"] = us
        row[prefix + name + "_kernel_us"] = kern
        row[prefix + name + "_gbs"] = nbytes / (us * 1e-6) / 1e9
    for other, suffix in (("torch_compile", ""), ("torch_compile_out", "_same_out")):
        if other not in samples:
            continue
        for i, kind in enumerate(("events", "kernel")):
            row[prefix + "cuda_faster_rounds_" + kind + suffix] = rounds_faster(
                samples["cuda"][i], samples[other][i]
            )


def copy_bandwidth(flush, reps):
    import torch

    n = 1 << 30  # 1 GiB each way
    src = torch.empty(n, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    ms = median_ms(lambda: dst.copy_(src), flush, reps)
    return 2 * n / (ms * 1e-3) / 1e9


def table(rows_out, copy_gbs, prefix) -> list[str]:
    """The markdown table of one method (`prefix`: "fresh_" or "" for the flushed L2)."""
    lines = [
        "| rows x hidden | CUDA | Triton | torch eager | torch.compile | CUDA % of copy "
        "| CUDA vs compile | kernel time: CUDA / Triton / compile (us) "
        "| rounds CUDA faster: events, kernel |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows_out:
        rounds = r[prefix + "rounds"]
        cells = [
            f"{r[prefix + k + '_gbs']:.0f} GB/s ({r[prefix + k + '_us']:.1f} us)"
            for k in ("cuda", "triton", "torch_eager", "torch_compile")
        ]
        pct = 100 * r[prefix + "cuda_gbs"] / copy_gbs
        speedup = r[prefix + "torch_compile_us"] / r[prefix + "cuda_us"]
        kernel = " / ".join(
            f"{r[prefix + k + '_kernel_us']:.2f}" for k in ("cuda", "triton", "torch_compile")
        )
        lines.append(
            f"| {r['rows']} x {r['hidden']} | "
            + " | ".join(cells)
            + f" | {pct:.0f}% | {speedup:.2f}x | {kernel} "
            + f"| {r[prefix + 'cuda_faster_rounds_events']}/{rounds}, "
            + f"{r[prefix + 'cuda_faster_rounds_kernel']}/{rounds} |"
        )
    return lines


def same_buffer_table(rows_out) -> list[str]:
    """The fresh-input comparison of the CUDA kernel with torch.compile writing the same `out`
    (`torch_compile_out`): both kernels on the same buffers."""
    lines = [
        "| rows x hidden | CUDA (us) | torch.compile, same out (us) | CUDA vs it "
        "| kernel time: CUDA / it (us) | rounds CUDA faster: events, kernel |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows_out:
        cuda, other = r["fresh_cuda_us"], r["fresh_torch_compile_out_us"]
        rounds = r["fresh_rounds"]
        lines.append(
            f"| {r['rows']} x {r['hidden']} | {cuda:.1f} | {other:.1f} | {other / cuda:.2f}x "
            f"| {r['fresh_cuda_kernel_us']:.2f} / {r['fresh_torch_compile_out_kernel_us']:.2f} "
            f"| {r['fresh_cuda_faster_rounds_events_same_out']}/{rounds}, "
            f"{r['fresh_cuda_faster_rounds_kernel_same_out']}/{rounds} |"
        )
    return lines


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = ap.parse_args()

    import torch

    reps = 30 if args.quick else 200
    kernels = load_kernels(os.path.join(args.out, "build"))
    flush = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")

    copy_gbs = copy_bandwidth(flush, reps)
    rows_out = []
    for hidden in HIDDEN:
        for rows in ROWS:
            row = measure_shape(rows, hidden, kernels, flush, reps)
            rows_out.append(row)
            print(json.dumps(row), flush=True)

    device = torch.cuda.get_device_name()
    lines = [f"device: {device}; torch {torch.__version__}; copy bandwidth {copy_gbs:.0f} GB/s"]
    lines += [
        "",
        "Fresh inputs (each run reads the next of K (x, residual) pairs; one output buffer):",
        "",
    ]
    lines += table(rows_out, copy_gbs, "fresh_")
    lines += [
        "",
        "Fresh inputs, the same buffers: torch.compile of the op with an `out` argument, writing "
        "the CUDA kernel's output buffer (one fused kernel):",
        "",
    ]
    lines += same_buffer_table(rows_out)
    lines += ["", "Flushed L2 (one set of buffers, a 512 MiB write before each run):", ""]
    lines += table(rows_out, copy_gbs, "")
    first = next(r for r in rows_out if r["rows"] == 1)
    lines += [
        "",
        "Host time per call (enqueue only, 1 row, median): "
        + ", ".join(
            f"{k} {first[k + '_host_us']:.1f} us"
            for k in ("cuda", "triton", "torch_eager", "torch_compile")
        ),
    ]
    text = "\n".join(lines)
    print(text)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "reference_bench.md"), "w") as fh:
        fh.write(text + "\n")
    with open(os.path.join(args.out, "reference_bench.json"), "w") as fh:
        json.dump({"device": device, "copy_gbs": copy_gbs, "rows": rows_out}, fh, indent=1)


if __name__ == "__main__":
    main()
