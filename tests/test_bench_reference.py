"""The GPU benchmarks' arithmetic, without a GPU: how rounds are compared, how shapes are read."""

from __future__ import annotations

import argparse
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "bench"))

from reference_kernels import EPS, implementations, in_rotation, rounds_faster  # noqa: E402
from reference_sweep import parse_shapes  # noqa: E402


def test_rounds_faster_counts_strict_wins_round_by_round():
    # Round 1: faster; round 2: slower; round 3: a tie is not a win; round 4: faster.
    assert rounds_faster([1.0, 3.0, 2.0, 0.5], [1.5, 2.0, 2.0, 0.6]) == 2
    # Rounds are paired, not totals compared: a larger mean, yet 3 wins of 4.
    assert rounds_faster([1.0, 1.0, 1.0, 9.0], [1.1, 1.1, 1.1, 1.0]) == 3


def test_rounds_faster_needs_one_sample_per_round_for_both():
    with pytest.raises(ValueError, match="one sample per round"):
        rounds_faster([1.0, 2.0], [1.0])


def test_shapes_are_read_as_rows_by_hidden():
    assert parse_shapes("16x4096,256x8192") == [(16, 4096), (256, 8192)]


@pytest.mark.parametrize("text", ["16x", "4096", "16x4096,,", "axb", "0x4096", "16x-1", "1x2x3"])
def test_a_malformed_shape_is_an_argument_error_that_quotes_it(text):
    with pytest.raises(argparse.ArgumentTypeError, match="ROWSxHIDDEN") as err:
        parse_shapes(text)
    assert repr(text) in str(err.value)


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
