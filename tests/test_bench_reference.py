"""The GPU benchmark's arithmetic, without a GPU: how rounds are compared."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "bench"))

from reference_kernels import rounds_faster  # noqa: E402


def test_rounds_faster_counts_strict_wins_round_by_round():
    # Round 1: faster; round 2: slower; round 3: a tie is not a win; round 4: faster.
    assert rounds_faster([1.0, 3.0, 2.0, 0.5], [1.5, 2.0, 2.0, 0.6]) == 2
    # Rounds are paired, not totals compared: a larger mean, yet 3 wins of 4.
    assert rounds_faster([1.0, 1.0, 1.0, 9.0], [1.1, 1.1, 1.1, 1.0]) == 3


def test_rounds_faster_needs_one_sample_per_round_for_both():
    with pytest.raises(ValueError, match="one sample per round"):
        rounds_faster([1.0, 2.0], [1.0])
