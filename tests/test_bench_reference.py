"""The GPU benchmark's arithmetic, without a GPU: how rounds are compared, how buffers rotate."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "bench"))

from reference_kernels import (  # noqa: E402
    EPS,
    POOL_BYTES,
    cycling,
    fresh_calls,
    fresh_sets,
    implementations,
    rounds_faster,
    run_durations,
    same_buffer_table,
    table,
    torch_eager,
    torch_eager_out,
)
from rotation import in_rotation  # noqa: E402


def test_rounds_faster_counts_strict_wins_round_by_round():
    # Round 1: faster; round 2: slower; round 3: a tie is not a win; round 4: faster.
    assert rounds_faster([1.0, 3.0, 2.0, 0.5], [1.5, 2.0, 2.0, 0.6]) == 2
    # Rounds are paired, not totals compared: a larger mean, yet 3 wins of 4.
    assert rounds_faster([1.0, 1.0, 1.0, 9.0], [1.1, 1.1, 1.1, 1.0]) == 3


def test_rounds_faster_needs_one_sample_per_round_for_both():
    with pytest.raises(ValueError, match="one sample per round"):
        rounds_faster([1.0, 2.0], [1.0])


def test_rotation_measures_each_name_once_per_round_starting_one_later_each_round():
    order = list(in_rotation({"a": 1, "b": 2, "c": 3}, 4))
    assert order == ["a", "b", "c", "b", "c", "a", "c", "a", "b", "a", "b", "c"]


def test_implementations_pass_each_kernel_its_own_argument_order():
    calls = []

    def recorder(name):
        return lambda *args: calls.append((name, args))

    kernels = {name: recorder(name) for name in ("cuda", "triton", "compiled")}
    impls = implementations(kernels, "x", "residual", "weight", "out")
    assert list(impls) == ["cuda", "triton", "torch_eager", "torch_compile"]
    for name in ("cuda", "triton", "torch_compile"):
        impls[name]()
    assert calls == [
        ("cuda", ("out", "residual", "x", "weight", EPS, False)),
        ("triton", ("x", "residual", "weight", EPS)),
        ("compiled", ("x", "residual", "weight")),
    ]


def test_the_same_buffer_baseline_writes_the_cuda_kernels_out():
    calls = []

    def recorder(name):
        return lambda *args: calls.append((name, args))

    kernels = {name: recorder(name) for name in ("cuda", "triton", "compiled", "compiled_out")}
    impls = implementations(kernels, "x", "residual", "weight", "out", same_out=True)
    assert list(impls) == ["cuda", "triton", "torch_eager", "torch_compile", "torch_compile_out"]
    impls["cuda"]()
    impls["torch_compile_out"]()
    assert calls == [
        ("cuda", ("out", "residual", "x", "weight", EPS, False)),
        ("compiled_out", ("x", "residual", "weight", "out")),
    ]


def test_the_out_form_of_the_op_computes_what_the_op_returns():
    torch = pytest.importorskip("torch")
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(3, 40, generator=gen).to(torch.bfloat16)
    residual = torch.randn(3, 40, generator=gen).to(torch.bfloat16)
    weight = (torch.rand(40, generator=gen) + 0.5).to(torch.bfloat16)
    residual_a, residual_b = residual.clone(), residual.clone()
    expected = torch_eager(x, residual_a, weight)
    out = torch.full_like(x, float("nan"))
    assert torch_eager_out(x, residual_b, weight, out) is None
    assert torch.equal(out, expected) and torch.equal(residual_b, residual_a)
    assert torch.equal(residual_a, (x.float() + residual.float()).to(torch.bfloat16))


def test_fresh_inputs_span_the_pool_size_and_rotate_at_least_two_sets():
    # 1 x 4096 bf16 is 8 KiB per tensor: 128 MiB / 8 KiB sets.
    assert fresh_sets(1, 4096) == POOL_BYTES // 8192
    # A shape that does not divide the pool rounds up, so that the pool is at least covered.
    assert fresh_sets(3, 4096) * 3 * 4096 * 2 >= POOL_BYTES > (fresh_sets(3, 4096) - 1) * 24576
    # Larger than the pool: still two sets, so that no run reads what the last one wrote.
    assert fresh_sets(16384, 8192) == 2
    assert fresh_sets(4096, 8192, pool_bytes=64 << 20) == 2


def test_cycling_runs_each_call_in_turn_and_starts_over():
    seen = []
    call = cycling(lambda i=i: seen.append(i) or i for i in range(3))
    assert [call() for _ in range(7)] == [0, 1, 2, 0, 1, 2, 0]
    assert seen == [0, 1, 2, 0, 1, 2, 0]
    with pytest.raises(ValueError, match="nothing"):
        cycling([])


def test_fresh_calls_give_each_run_the_next_pair_of_its_own_buffers():
    torch = pytest.importorskip("torch")
    seen = []

    def calls_for(x, residual):
        return {"a": lambda: seen.append(("a", x, residual)), "b": lambda: seen.append(("b", x))}

    # 2 x 8 bf16 is 32 bytes per tensor: 96 bytes make 3 pairs.
    calls = fresh_calls(2, 8, calls_for, device="cpu", pool_bytes=96)
    assert sorted(calls) == ["a", "b"]
    for _ in range(4):
        calls["a"]()
    xs = [x for _, x, _ in seen]
    assert all(x.shape == (2, 8) and x.is_contiguous() and x.dtype == torch.bfloat16 for x in xs)
    pointers = [x.data_ptr() for x in xs]
    assert len(set(pointers[:3])) == 3 and pointers[3] == pointers[0]
    residuals = {r.data_ptr() for _, _, r in seen}
    assert len(residuals) == 3 and not residuals & set(pointers)
    # Each name keeps its own place in the rotation.
    calls["b"]()
    assert seen[-1][1].data_ptr() == pointers[0]


def test_runs_are_split_at_each_spin_with_or_without_a_flush():
    flushed = [
        ("vectorized_elementwise_kernel<FillFunctor>", 90.0),
        ("spin_kernel", 100.0),
        ("fused_add_rmsnorm_kernel", 3.0),
        ("at::fill (FillFunctor)", 90.0),
        ("spin_kernel", 100.0),
        ("triton_red_fused_0", 2.0),
        ("other", 0.5),
    ]
    assert run_durations(flushed) == [3.0, 2.5]
    fresh = [("spin_kernel", 1.0), ("k", 3.0), ("spin_kernel", 1.0), ("k", 4.0), ("j", 1.0)]
    assert run_durations(fresh) == [3.0, 5.0]
    # Kernels before the first spin (a warm-up) are not a run.
    assert run_durations([("k", 9.0), ("spin_kernel", 1.0), ("k", 2.0)]) == [2.0]
    assert run_durations([]) == []


def test_each_table_reads_its_own_method_keys():
    names = ("cuda", "triton", "torch_eager", "torch_compile")
    row = {"rows": 256, "hidden": 4096, "rounds": 8, "fresh_rounds": 8}
    for prefix, us in (("fresh_", 5.0), ("", 6.0)):
        for k in names:
            row[prefix + k + "_us"] = us if k == "cuda" else 2 * us
            row[prefix + k + "_kernel_us"] = us / 2
            row[prefix + k + "_gbs"] = 1000.0 / row[prefix + k + "_us"]
        row[prefix + "cuda_faster_rounds_events"] = 7 if prefix else 1
        row[prefix + "cuda_faster_rounds_kernel"] = 6 if prefix else 0
    fresh, flushed = table([row], 400.0, "fresh_"), table([row], 400.0, "")
    assert fresh[2] == (
        "| 256 x 4096 | 200 GB/s (5.0 us) | 100 GB/s (10.0 us) | 100 GB/s (10.0 us) "
        "| 100 GB/s (10.0 us) | 50% | 2.00x | 2.50 / 2.50 / 2.50 | 7/8, 6/8 |"
    )
    assert flushed[2].startswith("| 256 x 4096 | 167 GB/s (6.0 us) |")
    assert flushed[2].endswith("| 42% | 2.00x | 3.00 / 3.00 / 3.00 | 1/8, 0/8 |")


def test_the_same_buffer_table_compares_cuda_with_compile_writing_the_same_out():
    row = {
        "rows": 16384,
        "hidden": 4096,
        "fresh_rounds": 10,
        "fresh_cuda_us": 128.6,
        "fresh_torch_compile_out_us": 128.9,
        "fresh_cuda_kernel_us": 125.72,
        "fresh_torch_compile_out_kernel_us": 125.81,
        "fresh_cuda_faster_rounds_events_same_out": 3,
        "fresh_cuda_faster_rounds_kernel_same_out": 7,
    }
    lines = same_buffer_table([row])
    assert len(lines) == 3 and lines[1].count("|") == lines[0].count("|")
    assert lines[2] == "| 16384 x 4096 | 128.6 | 128.9 | 1.00x | 125.72 / 125.81 | 3/10, 7/10 |"
