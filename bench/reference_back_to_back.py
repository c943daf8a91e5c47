"""Time the reference kernels launched back to back, as in a serving stack (bf16).

    python bench/reference_back_to_back.py [--out DIR] [--shapes 256x4096,16384x4096,...]

`bench/reference_kernels.py` times each call alone: GPU spinning, one call between two events,
on fresh inputs or after an L2 flush. Here N calls run back to back with nothing between them:
each call has its own x, residual and out (N sets of buffers, rotated so that the L2 cannot
hold them; N from 64 down to 8 for large shapes), all N are enqueued while the GPU spins, and
the time between two events around them, divided by N, is the time per call. It includes what
the kernel leaves to do after its last CTA exits (its stores draining), which the kernel time
alone (CUPTI) does not. Medians of 7 rounds in a rotating order, in us per call, for the CUDA
kernel, the Triton kernel and torch.compile, and the rounds in which the CUDA kernel was
faster.

Ported from the session 9 probe whose figures are in docs/benchmarks.md (same measurement).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
sys.path.insert(0, HERE)

from reference_kernels import implementations, load_kernels, rounds_faster  # noqa: E402
from reference_sweep import parse_shapes  # noqa: E402
from rotation import in_rotation  # noqa: E402

SHAPES = [(16, 4096), (256, 4096), (256, 8192), (4096, 4096), (16384, 4096)]
ROUNDS = 7
NAMES = ("cuda", "triton", "torch_compile")  # of reference_kernels.implementations
BUFFER_BYTES = 400 << 20  # x, residual and out, over all N sets


def per_call_us(calls) -> float:
    """Run `calls` back to back after a spin long enough to enqueue them all; us per call."""
    import torch

    for call in calls[:3]:
        call()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(20_000_000)  # ~10 ms: the host enqueues every call meanwhile
    start.record()
    for call in calls:
        call()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1e3 / len(calls)


def measure_shape(rows, hidden, kernels):
    import torch

    n = max(8, min(64, BUFFER_BYTES // (rows * hidden * 2 * 3)))
    weight = torch.rand(hidden, dtype=torch.bfloat16, device="cuda") + 0.5

    def buffers():
        x = torch.randn(rows, hidden, dtype=torch.bfloat16, device="cuda")
        return x, torch.randn_like(x), torch.empty_like(x)

    per_set = [
        implementations(kernels, x, residual, weight, out)
        for x, residual, out in (buffers() for _ in range(n))
    ]
    impls = {name: [calls[name] for calls in per_set] for name in NAMES}
    samples = {name: [] for name in NAMES}
    for name in in_rotation(NAMES, ROUNDS):
        samples[name].append(per_call_us(impls[name]))
    row = {"rows": rows, "hidden": hidden, "calls": n, "rounds": ROUNDS}
    for name, values in samples.items():
        row[name + "_us"] = statistics.median(values)
    row["cuda_faster_rounds"] = rounds_faster(samples["cuda"], samples["torch_compile"])
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--shapes", type=parse_shapes, default=SHAPES, help="ROWSxHIDDEN[,...]")
    args = ap.parse_args()
    kernels = load_kernels(os.path.join(args.out, "build"))
    lines = [
        "| rows x hidden | CUDA | Triton | torch.compile | rounds CUDA faster |",
        "|---|---|---|---|---|",
    ]
    rows_out = []
    for rows, hidden in args.shapes:
        row = measure_shape(rows, hidden, kernels)
        rows_out.append(row)
        print(json.dumps(row), flush=True)
        lines.append(
            f"| {rows} x {hidden} | {row['cuda_us']:.2f} | {row['triton_us']:.2f} "
            f"| {row['torch_compile_us']:.2f} | {row['cuda_faster_rounds']}/{ROUNDS} |"
        )
    table = "\n".join(lines)
    print(table)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "back_to_back.json"), "w") as fh:
        json.dump(rows_out, fh, indent=1)


if __name__ == "__main__":
    main()
